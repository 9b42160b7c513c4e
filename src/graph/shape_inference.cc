#include "src/graph/shape_inference.h"

#include <map>
#include <memory>

#include "absl/strings/str_join.h"
#include "src/framework/attr_value.h"

namespace tw {
namespace {

std::map<std::string, ShapeFn, std::less<>>& Registry() {
  static auto* registry = new std::map<std::string, ShapeFn, std::less<>>();
  return *registry;
}

}  // namespace

std::string StaticShapeString(const StaticShape& shape) {
  return shape ? shape->DebugString() : "?";
}

ShapeContext::ShapeContext(const proto::NodeDef& node, std::vector<StaticShape> inputs,
                           std::vector<const proto::NodeDef*> input_nodes, int num_outputs,
                           std::vector<StaticShape> shapes_of_shape_inputs)
    : node_(node),
      inputs_(std::move(inputs)),
      input_nodes_(std::move(input_nodes)),
      outputs_(static_cast<size_t>(num_outputs)),
      shapes_of_shape_inputs_(std::move(shapes_of_shape_inputs)) {}

StaticShape ShapeContext::input_as_shape(int i) const {
  if (auto ints = constant_ints(i)) {
    for (int64_t d : *ints) {
      if (d < -1) return std::nullopt;
    }
    auto shape = TensorShape::Create(*ints);
    return shape.ok() ? StaticShape(*shape) : std::nullopt;
  }
  if (i < static_cast<int>(shapes_of_shape_inputs_.size())) return shapes_of_shape_inputs_[i];
  return std::nullopt;
}

std::optional<Tensor> ShapeContext::constant_input(int i) const {
  const proto::NodeDef& producer = input_node(i);
  if (producer.op() != "Const") return std::nullopt;
  Tensor value;
  if (!GetNodeAttr(producer, "value", &value).ok()) return std::nullopt;
  return value;
}

std::optional<std::vector<int64_t>> ShapeContext::constant_ints(int i) const {
  std::optional<Tensor> value = constant_input(i);
  if (!value) return std::nullopt;
  std::vector<int64_t> out;
  if (value->dtype() == DT_INT32) {
    for (int32_t v : std::as_const(*value).flat<int32_t>()) out.push_back(v);
  } else if (value->dtype() == DT_INT64) {
    for (int64_t v : std::as_const(*value).flat<int64_t>()) out.push_back(v);
  } else {
    return std::nullopt;
  }
  return out;
}

Status ShapeContext::Error(std::string_view what) const {
  std::vector<std::string> shapes;
  for (const StaticShape& s : inputs_) shapes.push_back(StaticShapeString(s));
  return errors::InvalidArgument(what, " for '", node_.name(), "' (op: '", node_.op(),
                                 "') with input shapes: ", absl::StrJoin(shapes, ", "), ".");
}

bool MergeDim(int64_t a, int64_t b, int64_t* merged) {
  if (a == TensorShape::kUnknownDim) {
    *merged = b;
    return true;
  }
  if (b == TensorShape::kUnknownDim || a == b) {
    *merged = a;
    return true;
  }
  return false;
}

const ShapeFn* FindShapeFn(std::string_view op) {
  auto it = Registry().find(op);
  return it == Registry().end() ? nullptr : &it->second;
}

internal::ShapeFnRegistrar::ShapeFnRegistrar(std::string op, ShapeFn fn) {
  Registry()[std::move(op)] = std::move(fn);
}

}  // namespace tw
