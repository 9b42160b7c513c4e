// Sparse tensors: SparseToDense, which tf.sparse_tensor_to_dense and tf.sparse.to_dense
// build on, with TensorFlow's signature and messages. A sparse tensor is three dense ones:
// indices [n, rank], values [n] and dense_shape [rank].
#include <cstring>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"

namespace tw {
namespace {

TW_REGISTER_OP("SparseToDense")
    .Input("sparse_indices: Tindices")
    .Input("output_shape: Tindices")
    .Input("sparse_values: T")
    .Input("default_value: T")
    .Output("dense: T")
    .Attr("validate_indices: bool = true")
    .Attr("T: type")
    .Attr("Tindices: {int32, int64}")
    .Doc(
        "A dense tensor of output_shape holding sparse_values at sparse_indices, default_value "
        "elsewhere.");

int64_t IntAt(const Tensor& t, int64_t i) {
  return t.dtype() == DT_INT32 ? t.flat<int32_t>()[i] : t.flat<int64_t>()[i];
}

std::string IndexString(const Tensor& indices, int64_t row, int64_t rank) {
  std::string out = "[";
  for (int64_t d = 0; d < rank; ++d) {
    out += (d > 0 ? "," : "") + std::to_string(IntAt(indices, row * rank + d));
  }
  return out + "]";
}

class SparseToDenseOp : public OpKernel {
 public:
  explicit SparseToDenseOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("validate_indices", &validate_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& shape = ctx->input(1);
    const Tensor& values = ctx->input(2);
    const Tensor& dflt = ctx->input(3);
    TW_OP_REQUIRES(ctx, indices.rank() <= 2,
                   errors::InvalidArgument("sparse_indices should be a scalar, vector, or matrix, "
                                           "got shape ",
                                           indices.shape().DebugString()));
    TW_OP_REQUIRES(ctx, shape.rank() <= 1,
                   errors::InvalidArgument("output_shape should be a scalar or vector, got shape ",
                                           shape.shape().DebugString()));
    const int64_t n = indices.rank() > 0 ? indices.dim(0) : 1;
    const int64_t rank = indices.rank() > 1 ? indices.dim(1) : 1;
    TW_OP_REQUIRES(ctx, shape.num_elements() == rank,
                   errors::InvalidArgument("output_shape has incorrect number of elements: ",
                                           shape.num_elements(), " should be: ", rank));
    TW_OP_REQUIRES(
        ctx, values.num_elements() == 1 || values.num_elements() == n,
        errors::InvalidArgument("sparse_values has incorrect shape ", values.shape().DebugString(),
                                ", should be [] or [", n, "]"));
    TW_OP_REQUIRES(ctx, dflt.num_elements() == 1,
                   errors::InvalidArgument("default_value should be a scalar, got shape ",
                                           dflt.shape().DebugString()));
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < shape.num_elements(); ++d) dims.push_back(IntAt(shape, d));
    auto out_shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, out_shape.status());
    auto out = Tensor::Allocate(values.dtype(), *out_shape);
    TW_OP_REQUIRES_OK(ctx, out.status());

    std::vector<int64_t> offsets(n);
    int64_t previous = -1;
    for (int64_t i = 0; i < n; ++i) {
      int64_t offset = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t at = IntAt(indices, i * rank + d);
        TW_OP_REQUIRES(ctx, at >= 0 && at < dims[d],
                       errors::InvalidArgument("indices[", i, "] = ", IndexString(indices, i, rank),
                                               " is out of bounds: need 0 <= index < ",
                                               out_shape->DebugString()));
        offset = offset * dims[d] + at;
      }
      if (validate_) {
        TW_OP_REQUIRES(ctx, offset != previous,
                       errors::InvalidArgument("indices[", i, "] = ", IndexString(indices, i, rank),
                                               " is repeated"));
        TW_OP_REQUIRES(ctx, offset > previous,
                       errors::InvalidArgument("indices[", i, "] = ", IndexString(indices, i, rank),
                                               " is out of order"));
      }
      previous = offset;
      offsets[i] = offset;
    }
    const int64_t total = out->num_elements();
    if (values.dtype() == DT_STRING) {
      auto o = out->flat<std::string>();
      std::fill(o.begin(), o.end(), dflt.flat<std::string>()[0]);
      for (int64_t i = 0; i < n; ++i) {
        o[offsets[i]] = values.flat<std::string>()[values.num_elements() == 1 ? 0 : i];
      }
    } else {
      const size_t width = DataTypeSize(values.dtype());
      char* o = static_cast<char*>(out->raw_data());
      for (int64_t j = 0; j < total; ++j) std::memcpy(o + j * width, dflt.raw_data(), width);
      const char* v = static_cast<const char*>(values.raw_data());
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(o + offsets[i] * width, v + (values.num_elements() == 1 ? 0 : i) * width,
                    width);
      }
    }
    ctx->set_output(0, *std::move(out));
  }

 private:
  bool validate_ = true;
};
TW_REGISTER_KERNEL("SparseToDense", "CPU", SparseToDenseOp);
// Not differentiable here: TF differentiates it to the values, which no input pipeline
// needs (docs/architecture.md, "Input pipelines").
TW_NO_GRADIENT("SparseToDense");

}  // namespace
}  // namespace tw
