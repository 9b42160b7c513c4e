#include "src/saved_model/graph_export.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace tw::saved_model {
namespace {

// Ops whose name, inputs and attributes are TensorFlow's: each was compared with
// TensorFlow's op definition (attributes TensorFlow has and tensorweave lacks all have
// defaults there, which TensorFlow's importer fills in).
const absl::flat_hash_set<std::string_view>& SameOps() {
  // clang-format off
  static const auto* ops = new absl::flat_hash_set<std::string_view>{
      "Abs", "Add", "AddN", "ArgMax", "ArgMin", "AsString", "AvgPool", "BiasAdd", "Cast", "Ceil",
      "ClipByValue", "Const", "Conv2D", "Cumsum", "DepthwiseConv2dNative", "Div", "Elu", "Equal",
      "Erf", "Exp", "ExpandDims", "Fill", "Floor", "FloorDiv", "FloorMod", "FusedBatchNorm",
      "FusedBatchNormV2", "FusedBatchNormV3", "Gather", "GatherNd", "Greater", "GreaterEqual",
      "Identity", "L2Loss", "LeakyRelu", "Less", "LessEqual", "Log", "LogSoftmax", "LogicalAnd",
      "LogicalNot", "LogicalOr", "MatMul", "Max", "MaxPool", "Maximum", "Mean", "Min", "Minimum",
      "Mul", "Neg", "NoOp", "NotEqual", "OneHot", "OnesLike", "Pack", "Pad", "ParseExample",
      "Placeholder", "PlaceholderWithDefault", "Pow", "Prod", "Range", "ReadFile", "Reciprocal",
      "Relu",
      "Relu6", "Reshape", "ResourceGather", "RestoreV2", "Round", "Rsqrt", "Selu", "Shape",
      "Sigmoid", "Sign", "Slice", "Softmax", "Softplus", "SparseToDense", "Split", "SplitV",
      "Sqrt", "Square", "Squeeze", "StopGradient", "StridedSlice", "StringToHashBucketFast",
      "Sub", "Sum", "Tanh", "Tile",
      "TopKV2", "Transpose", "Unpack", "VariableShape", "Where", "ZerosLike",
  };
  // clang-format on
  return *ops;
}

// tensorweave's ops that TensorFlow names otherwise (same inputs and attributes).
const absl::flat_hash_map<std::string_view, std::string_view>& RenamedOps() {
  static const auto* ops = new absl::flat_hash_map<std::string_view, std::string_view>{
      {"Variable", "VarHandleOp"},  // a resource variable's handle
      {"ReadVariable", "ReadVariableOp"},
      {"Concat", "ConcatV2"},  // (values, axis): TensorFlow's Concat takes the axis first
      // A resource variable's assignment (main ops, initializers). TensorFlow's gives no
      // value: meta_graph_export.cc refuses a graph that uses the value.
      {"Assign", "AssignVariableOp"},
      // NumPy broadcasting, as SelectV2: TensorFlow's Select takes a vector as a row mask.
      {"Select", "SelectV2"},
  };
  return *ops;
}

}  // namespace

std::string_view TensorFlowOpName(std::string_view op) {
  if (SameOps().contains(op)) return op;
  auto renamed = RenamedOps().find(op);
  return renamed == RenamedOps().end() ? std::string_view() : renamed->second;
}

tfproto::TensorShapeProto ExportShape(const proto::TensorShapeProto& shape) {
  tfproto::TensorShapeProto out;
  if (shape.unknown_rank()) {
    out.set_unknown_rank(true);
    return out;
  }
  for (int64_t d : shape.dim()) out.add_dim()->set_size(d);
  return out;
}

tfproto::TensorProto ExportTensor(const proto::TensorProto& tensor) {
  tfproto::TensorProto out;
  out.set_dtype(tensor.dtype());
  *out.mutable_tensor_shape() = ExportShape(tensor.shape());
  // Numbers are the same bytes in both (little-endian, row-major); strings one per element.
  if (!tensor.tensor_content().empty()) out.set_tensor_content(tensor.tensor_content());
  for (const std::string& s : tensor.string_val()) out.add_string_val(s);
  return out;
}

tfproto::AttrValue ExportAttr(const proto::AttrValue& value) {
  tfproto::AttrValue out;
  switch (value.value_case()) {
    case proto::AttrValue::kI:
      out.set_i(value.i());
      break;
    case proto::AttrValue::kF:
      out.set_f(value.f());
      break;
    case proto::AttrValue::kB:
      out.set_b(value.b());
      break;
    case proto::AttrValue::kS:
      out.set_s(value.s());
      break;
    case proto::AttrValue::kType:
      out.set_type(value.type());
      break;
    case proto::AttrValue::kShape:
      *out.mutable_shape() = ExportShape(value.shape());
      break;
    case proto::AttrValue::kTensor:
      *out.mutable_tensor() = ExportTensor(value.tensor());
      break;
    case proto::AttrValue::kList: {
      const auto& list = value.list();
      auto* l = out.mutable_list();
      for (int64_t i : list.i()) l->add_i(i);
      for (float f : list.f()) l->add_f(f);
      for (bool b : list.b()) l->add_b(b);
      for (const std::string& s : list.s()) l->add_s(s);
      for (int t : list.type()) l->add_type(static_cast<proto::DataType>(t));
      for (const auto& s : list.shape()) *l->add_shape() = ExportShape(s);
      break;
    }
    case proto::AttrValue::VALUE_NOT_SET:
      out.mutable_list();  // TensorFlow's empty list
      break;
  }
  return out;
}

StatusOr<tfproto::NodeDef> ExportNode(const proto::NodeDef& node) {
  const std::string_view op = TensorFlowOpName(node.op());
  if (op.empty()) {
    return errors::Unimplemented("node ", node.name(), ": op ", node.op(),
                                 " has no TensorFlow counterpart that tensorweave writes, so a "
                                 "graph for TensorFlow cannot hold it");
  }
  tfproto::NodeDef out;
  out.set_name(node.name());
  out.set_op(std::string(op));
  for (const std::string& input : node.input()) out.add_input(input);
  out.set_device(node.device());
  for (const auto& [name, value] : node.attr()) {
    if (node.op() == "Assign") {  // AssignVariableOp: only the dtype, always checked
      if (name == "T") (*out.mutable_attr())["dtype"] = ExportAttr(value);
      if (name == "T" || name == "use_locking" || name == "validate_shape") continue;
    }
    (*out.mutable_attr())[name] = ExportAttr(value);
  }
  return out;
}

}  // namespace tw::saved_model
