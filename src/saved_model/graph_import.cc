#include "src/saved_model/graph_import.h"

#include <cstring>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/framework/op_def.h"
#include "src/saved_model/graph_export.h"
#include "tensorweave/tensor.h"

namespace tw::saved_model {
namespace {

// TensorFlow's ops that tensorweave names otherwise, beyond graph_export.h's renames.
std::string_view TensorweaveOpName(std::string_view op) {
  static const auto* renamed = new absl::flat_hash_map<std::string_view, std::string_view>{
      {"VarHandleOp", "Variable"},
      {"ReadVariableOp", "ReadVariable"},
      {"ConcatV2", "Concat"},
      // TensorFlow's Select (a vector condition picks rows) is not tensorweave's
      // broadcasting Select: only SelectV2 is taken.
      {"SelectV2", "Select"},
      {"AssignVariableOp", "Assign"},  // attributes: see ImportNode
      {"SaveV2", "SaveV2"},
  };
  auto it = renamed->find(op);
  if (it != renamed->end()) return it->second;
  return TensorFlowOpName(op) == op ? op : std::string_view();
}

// TensorFlow's attributes that tensorweave's ops lack, with the test of TensorFlow's
// default value: an attribute holding it means what tensorweave does.
using DefaultTest = std::function<bool(const tfproto::AttrValue&)>;
const absl::flat_hash_map<std::string, DefaultTest>& TensorFlowDefaults() {
  static const auto* defaults = [] {
    auto* d = new absl::flat_hash_map<std::string, DefaultTest>;
    auto is_false = [](const tfproto::AttrValue& v) { return !v.b(); };
    auto is_true = [](const tfproto::AttrValue& v) { return v.b(); };
    auto is_zero = [](const tfproto::AttrValue& v) { return v.i() == 0; };
    auto is_empty = [](const tfproto::AttrValue& v) {
      return v.list().s_size() == 0 && v.list().i_size() == 0;
    };
    (*d)["Cast/Truncate"] = is_false;
    (*d)["Gather/validate_indices"] = is_true;
    (*d)["ResourceGather/validate_indices"] = is_true;
    (*d)["ResourceGather/batch_dims"] = is_zero;
    (*d)["Variable/allowed_devices"] = is_empty;
    (*d)["DepthwiseConv2dNative/explicit_paddings"] = is_empty;
    (*d)["MatMul/grad_a"] = is_false;
    (*d)["MatMul/grad_b"] = is_false;
    (*d)["FusedBatchNormV3/exponential_avg_factor"] = [](const tfproto::AttrValue& v) {
      return v.f() == 1.0f;
    };
    return d;
  }();
  return *defaults;
}

proto::TensorShapeProto ImportShape(const tfproto::TensorShapeProto& shape) {
  proto::TensorShapeProto out;
  if (shape.unknown_rank()) {
    out.set_unknown_rank(true);
    return out;
  }
  for (const auto& d : shape.dim()) out.add_dim(d.size());
  return out;
}

// Appends `n` elements of type T taken from `values` (the last one repeated, zeros when
// there are none) to `out` as bytes.
template <typename T, typename Values>
Status FillFrom(const Values& values, int64_t n, const std::string& what, std::string* out) {
  if (values.size() > n) {
    return errors::InvalidArgument(what, ": ", values.size(), " values for ", n, " elements");
  }
  out->resize(static_cast<size_t>(n) * sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    const T v =
        values.empty() ? T{} : static_cast<T>(values[std::min<int64_t>(i, values.size() - 1)]);
    std::memcpy(out->data() + i * sizeof(T), &v, sizeof(T));
  }
  return OkStatus();
}

StatusOr<proto::AttrValue> ImportAttr(const tfproto::AttrValue& value, const std::string& what) {
  proto::AttrValue out;
  switch (value.value_case()) {
    case tfproto::AttrValue::kS:
      out.set_s(value.s());
      break;
    case tfproto::AttrValue::kI:
      out.set_i(value.i());
      break;
    case tfproto::AttrValue::kF:
      out.set_f(value.f());
      break;
    case tfproto::AttrValue::kB:
      out.set_b(value.b());
      break;
    case tfproto::AttrValue::kType:
      out.set_type(value.type());
      break;
    case tfproto::AttrValue::kShape:
      *out.mutable_shape() = ImportShape(value.shape());
      break;
    case tfproto::AttrValue::kTensor: {
      TW_ASSIGN_OR_RETURN(*out.mutable_tensor(), ImportTensor(value.tensor(), what));
      break;
    }
    case tfproto::AttrValue::kList: {
      const auto& list = value.list();
      if (list.tensor_size() > 0 || list.func_size() > 0) {
        return errors::Unimplemented(what,
                                     " is a list of tensors or functions, which "
                                     "tensorweave's attributes do not hold");
      }
      auto* l = out.mutable_list();
      for (const std::string& s : list.s()) l->add_s(s);
      for (int64_t i : list.i()) l->add_i(i);
      for (float f : list.f()) l->add_f(f);
      for (bool b : list.b()) l->add_b(b);
      for (int t : list.type()) l->add_type(static_cast<proto::DataType>(t));
      for (const auto& s : list.shape()) *l->add_shape() = ImportShape(s);
      break;
    }
    case tfproto::AttrValue::kFunc:
    case tfproto::AttrValue::kPlaceholder:
      return errors::Unimplemented(what,
                                   " is a function or a placeholder, which tensorweave's "
                                   "graphs do not hold");
    case tfproto::AttrValue::VALUE_NOT_SET:
      out.mutable_list();
      break;
  }
  return out;
}

}  // namespace

StatusOr<proto::TensorProto> ImportTensor(const tfproto::TensorProto& tensor,
                                          const std::string& what) {
  proto::TensorProto out;
  out.set_dtype(tensor.dtype());
  *out.mutable_shape() = ImportShape(tensor.tensor_shape());
  std::vector<int64_t> dims(out.shape().dim().begin(), out.shape().dim().end());
  auto shape = TensorShape::Create(dims);
  if (!shape.ok() || tensor.tensor_shape().unknown_rank()) {
    return errors::InvalidArgument(what, ": a tensor's shape must be fully defined");
  }
  const int64_t n = shape->num_elements();
  const auto dtype = static_cast<DataType>(tensor.dtype());
  if (dtype == DT_STRING) {
    if (tensor.string_val_size() > n) {
      return errors::InvalidArgument(what, ": ", tensor.string_val_size(), " strings for ", n,
                                     " elements");
    }
    for (int64_t i = 0; i < n; ++i) {
      out.add_string_val(tensor.string_val_size() == 0 ? std::string()
                                                       : tensor.string_val(std::min<int64_t>(
                                                             i, tensor.string_val_size() - 1)));
    }
    return out;
  }
  if (!DataTypeIsTrivial(dtype)) {
    return errors::Unimplemented(what, ": tensors of ", DataTypeName(dtype), " are not read");
  }
  if (!tensor.tensor_content().empty()) {
    if (tensor.tensor_content().size() != static_cast<size_t>(n) * DataTypeSize(dtype)) {
      return errors::InvalidArgument(what, ": ", tensor.tensor_content().size(),
                                     " bytes of content for ", n, " ", DataTypeName(dtype));
    }
    out.set_tensor_content(tensor.tensor_content());
    return out;
  }
  std::string* bytes = out.mutable_tensor_content();
  switch (dtype) {
    case DT_FLOAT:
      TW_RETURN_IF_ERROR(FillFrom<float>(tensor.float_val(), n, what, bytes));
      break;
    case DT_DOUBLE:
      TW_RETURN_IF_ERROR(FillFrom<double>(tensor.double_val(), n, what, bytes));
      break;
    case DT_INT32:
      TW_RETURN_IF_ERROR(FillFrom<int32_t>(tensor.int_val(), n, what, bytes));
      break;
    case DT_INT16:
      TW_RETURN_IF_ERROR(FillFrom<int16_t>(tensor.int_val(), n, what, bytes));
      break;
    case DT_INT8:
      TW_RETURN_IF_ERROR(FillFrom<int8_t>(tensor.int_val(), n, what, bytes));
      break;
    case DT_UINT8:
      TW_RETURN_IF_ERROR(FillFrom<uint8_t>(tensor.int_val(), n, what, bytes));
      break;
    case DT_INT64:
      TW_RETURN_IF_ERROR(FillFrom<int64_t>(tensor.int64_val(), n, what, bytes));
      break;
    case DT_BOOL:
      TW_RETURN_IF_ERROR(FillFrom<bool>(tensor.bool_val(), n, what, bytes));
      break;
    case DT_UINT16:  // TensorFlow keeps these in int_val too
      TW_RETURN_IF_ERROR(FillFrom<uint16_t>(tensor.int_val(), n, what, bytes));
      break;
    default:
      return errors::Unimplemented(what, ": typed values of ", DataTypeName(dtype),
                                   " are not read");
  }
  return out;
}

StatusOr<proto::NodeDef> ImportNode(const tfproto::NodeDef& node) {
  const std::string_view op = TensorweaveOpName(node.op());
  if (op.empty()) {
    return errors::Unimplemented("node ", node.name(), ": TensorFlow's op ", node.op(),
                                 " has no tensorweave counterpart");
  }
  TW_ASSIGN_OR_RETURN(const OpDef* def, OpRegistry::Global().LookUp(op));
  proto::NodeDef out;
  out.set_name(node.name());
  out.set_op(std::string(op));
  for (const std::string& input : node.input()) out.add_input(input);
  out.set_device(node.device());
  for (const auto& [name, value] : node.attr()) {
    const std::string what = absl::StrCat("node ", node.name(), " attribute ", name);
    // AssignVariableOp's dtype is tensorweave's Assign's T.
    const std::string attr =
        node.op() == "AssignVariableOp" && name == "dtype" ? std::string("T") : name;
    if (attr.starts_with("_") && attr != "_class") continue;  // TensorFlow's bookkeeping
    if (attr != "_class" && def->FindAttr(attr) == nullptr) {
      auto known = TensorFlowDefaults().find(absl::StrCat(std::string(op), "/", attr));
      if (known != TensorFlowDefaults().end() && known->second(value)) continue;
      return errors::Unimplemented(what, " of TensorFlow's op ", node.op(),
                                   " has no tensorweave counterpart (or not this value)");
    }
    TW_ASSIGN_OR_RETURN((*out.mutable_attr())[attr], ImportAttr(value, what));
  }
  if (node.op() == "AssignVariableOp") {  // tensorweave's Assign of a resource
    (*out.mutable_attr())["validate_shape"].set_b(true);
    (*out.mutable_attr())["use_locking"].set_b(true);
  }
  return out;
}

StatusOr<proto::GraphDef> ImportGraph(const tfproto::GraphDef& graph) {
  proto::GraphDef out;
  for (const tfproto::NodeDef& node : graph.node()) {
    TW_ASSIGN_OR_RETURN(*out.add_node(), ImportNode(node));
  }
  return out;
}

}  // namespace tw::saved_model
