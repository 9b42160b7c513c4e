#include "src/core/tensor_coding.h"

#include <cstring>

namespace tw {

void ShapeToProto(const TensorShape& shape, proto::TensorShapeProto* proto) {
  proto->mutable_dim()->Assign(shape.dims().begin(), shape.dims().end());
}

StatusOr<TensorShape> ShapeFromProto(const proto::TensorShapeProto& proto) {
  return TensorShape::Create(absl::MakeConstSpan(proto.dim().data(), proto.dim_size()));
}

void TensorToProto(const Tensor& tensor, proto::TensorProto* proto) {
  proto->Clear();
  proto->set_dtype(static_cast<proto::DataType>(tensor.dtype()));
  ShapeToProto(tensor.shape(), proto->mutable_shape());
  if (tensor.dtype() == DT_STRING) {
    auto strings = tensor.flat<std::string>();
    proto->mutable_string_val()->Reserve(static_cast<int>(strings.size()));
    for (const std::string& s : strings) proto->add_string_val(s);
  } else if (tensor.dtype() == DT_RESOURCE) {
    for (const ResourceHandle& h : tensor.flat<ResourceHandle>()) {
      proto::ResourceHandleProto* out = proto->add_resource_val();
      out->set_device(h.device);
      out->set_container(h.container);
      out->set_name(h.name);
      out->set_type(h.type);
    }
  } else {
    proto->set_tensor_content(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  }
}

namespace {

// InvalidArgument when a bool tensor holds a byte other than 0 or 1.
Status CheckBools(const Tensor& tensor) {
  if (tensor.dtype() != DT_BOOL) return OkStatus();
  const auto* bytes = static_cast<const unsigned char*>(tensor.raw_data());
  for (size_t i = 0; i < tensor.TotalBytes(); ++i) {
    if (bytes[i] > 1) {
      return errors::InvalidArgument("TensorProto of dtype bool has byte ", i, " = ",
                                     static_cast<int>(bytes[i]), "; bools must be 0 or 1");
    }
  }
  return OkStatus();
}

// Decodes `proto`; numeric content comes from `proto.tensor_content()` or, when `read` is
// given, from `read` (the bytes travel outside the proto; `available` of them are left).
StatusOr<Tensor> DecodeTensor(const proto::TensorProto& proto, const ContentReader* read,
                              size_t available, bool allocate_only = false) {
  const int dtype_value = static_cast<int>(proto.dtype());
  if (!IsValidDataType(dtype_value)) {
    return errors::InvalidArgument("TensorProto has unknown dtype ", dtype_value);
  }
  const auto dtype = static_cast<DataType>(dtype_value);
  for (int i = 0; i < proto.shape().dim_size(); ++i) {
    if (proto.shape().dim(i) < 0) {
      return errors::InvalidArgument("TensorProto shape dimension ", i, " is ",
                                     proto.shape().dim(i), "; a tensor value needs dims >= 0");
    }
  }
  if (proto.shape().unknown_rank()) {
    return errors::InvalidArgument(
        "TensorProto shape has unknown rank; a tensor value needs a "
        "fully defined shape");
  }
  TW_ASSIGN_OR_RETURN(TensorShape shape, ShapeFromProto(proto.shape()));
  if (dtype == DT_STRING) {
    if (!proto.tensor_content().empty()) {
      return errors::InvalidArgument("TensorProto of dtype string has tensor_content; strings ",
                                     "travel in string_val");
    }
    if (proto.string_val_size() != shape.num_elements()) {
      return errors::InvalidArgument("TensorProto of shape ", shape.DebugString(), " holds ",
                                     proto.string_val_size(), " strings, expected ",
                                     shape.num_elements());
    }
    TW_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(dtype, shape));
    auto out = tensor.flat<std::string>();
    for (int i = 0; i < proto.string_val_size(); ++i) out[i] = proto.string_val(i);
    return tensor;
  }
  if (dtype == DT_RESOURCE) {
    if (proto.resource_val_size() != shape.num_elements()) {
      return errors::InvalidArgument("TensorProto of shape ", shape.DebugString(), " holds ",
                                     proto.resource_val_size(), " resource handles, expected ",
                                     shape.num_elements());
    }
    TW_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(dtype, shape));
    auto out = tensor.flat<ResourceHandle>();
    for (int i = 0; i < proto.resource_val_size(); ++i) {
      const proto::ResourceHandleProto& h = proto.resource_val(i);
      out[i] = ResourceHandle{h.device(), h.container(), h.name(), h.type()};
    }
    return tensor;
  }
  if (proto.string_val_size() != 0 || proto.resource_val_size() != 0) {
    return errors::InvalidArgument("TensorProto of dtype ", DataTypeName(dtype),
                                   " has string_val or resource_val entries");
  }
  // Compare against the byte count before allocating, so a hostile shape cannot make us
  // allocate more than the message carried.
  size_t expected = 0;
  const bool overflow = __builtin_mul_overflow(static_cast<size_t>(shape.num_elements()),
                                               DataTypeSize(dtype), &expected);
  if (allocate_only) {
    if (overflow)
      return errors::InvalidArgument("tensor of shape ", shape.DebugString(), " is too large");
    return Tensor::Allocate(dtype, shape);
  }
  if (read != nullptr) {
    if (overflow || !proto.tensor_content().empty()) {
      return errors::InvalidArgument("TensorProto of dtype ", DataTypeName(dtype), " and shape ",
                                     shape.DebugString(),
                                     " cannot be read: its size overflows or it carries "
                                     "tensor_content as well as a payload");
    }
    if (expected > available) {
      return errors::InvalidArgument("TensorProto of dtype ", DataTypeName(dtype), " and shape ",
                                     shape.DebugString(), " needs ", expected,
                                     " bytes, but the message has only ", available, " left");
    }
    TW_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(dtype, shape));
    if (expected > 0) TW_RETURN_IF_ERROR((*read)(tensor.raw_data(), expected));
    TW_RETURN_IF_ERROR(CheckBools(tensor));
    return tensor;
  }
  const size_t content = proto.tensor_content().size();
  if (overflow || content != expected) {
    return errors::InvalidArgument(
        "TensorProto of dtype ", DataTypeName(dtype), " and shape ", shape.DebugString(), " has ",
        content, " bytes of content, expected ", shape.num_elements(), " x ", DataTypeSize(dtype));
  }
  TW_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(dtype, shape));
  if (content > 0) std::memcpy(tensor.raw_data(), proto.tensor_content().data(), content);
  TW_RETURN_IF_ERROR(CheckBools(tensor));
  return tensor;
}

}  // namespace

StatusOr<Tensor> TensorFromProto(const proto::TensorProto& proto) {
  return DecodeTensor(proto, nullptr, 0);
}

void TensorMetaToProto(const Tensor& tensor, proto::TensorProto* proto) {
  if (!CarriesPayload(tensor.dtype())) {
    TensorToProto(tensor, proto);
    return;
  }
  proto->Clear();
  proto->set_dtype(static_cast<proto::DataType>(tensor.dtype()));
  ShapeToProto(tensor.shape(), proto->mutable_shape());
}

StatusOr<Tensor> AllocateFromMetaProto(const proto::TensorProto& meta) {
  const int dtype = static_cast<int>(meta.dtype());
  if (!IsValidDataType(dtype) || !CarriesPayload(static_cast<DataType>(dtype)) ||
      dtype == DT_BOOL) {
    return errors::InvalidArgument("a tensor of dtype ", dtype,
                                   " cannot be allocated to be filled in pieces");
  }
  // The same checks as any tensor header; the "reader" leaves the bytes as allocated.
  return DecodeTensor(meta, nullptr, 0, /*allocate_only=*/true);
}

StatusOr<Tensor> TensorFromMetaProto(const proto::TensorProto& meta, size_t available,
                                     ContentReader read) {
  return DecodeTensor(meta, &read, available);
}

}  // namespace tw
