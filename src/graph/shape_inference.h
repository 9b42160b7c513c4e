// Static shapes: what the graph builder knows of a node's output shapes before any step,
// from its inputs' static shapes, its attributes and its constant inputs, after
// TensorFlow's shape functions. A shape may be partial: unknown rank (nullopt) or unknown
// dimensions (TensorShape::kUnknownDim). Ops without a shape function have outputs of
// unknown shape; a shape function that finds its inputs incompatible fails the node at
// construction, with TensorFlow's message ("Dimensions must be equal, but are 2 and 3 for
// 'add' (op: 'Add') with input shapes: [2], [3].").
//
// Shape functions are registered by op name (TW_REGISTER_SHAPE_FN) in src/graph/shape_fns.cc,
// beside the builder that runs them, so the op files stay about kernels.
#ifndef TENSORWEAVE_SRC_GRAPH_SHAPE_INFERENCE_H_
#define TENSORWEAVE_SRC_GRAPH_SHAPE_INFERENCE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"
#include "tensorweave/tensor_shape.h"

namespace tw {

using StaticShape = std::optional<TensorShape>;  // nullopt: unknown rank

// "[2,?]", "?" for an unknown rank.
std::string StaticShapeString(const StaticShape& shape);

// What a shape function sees of the node being built. Inputs are the node's data inputs in
// order; `input_node(i)` is the node producing input i (its attributes give a Const's value,
// a variable's or queue's declared shapes).
class ShapeContext {
 public:
  // `shapes_of_shape_inputs[i]`: when input i comes from a Shape node, the static shape of
  // that node's input (may be empty: none known).
  ShapeContext(const proto::NodeDef& node, std::vector<StaticShape> inputs,
               std::vector<const proto::NodeDef*> input_nodes, int num_outputs,
               std::vector<StaticShape> shapes_of_shape_inputs = {});

  const proto::NodeDef& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const StaticShape& input(int i) const { return inputs_[i]; }
  const proto::NodeDef& input_node(int i) const { return *input_nodes_[i]; }
  // The value of input i when it comes straight from a Const node, else nullopt.
  std::optional<Tensor> constant_input(int i) const;
  // The int values of constant input i (an int32 or int64 tensor), else nullopt.
  std::optional<std::vector<int64_t>> constant_ints(int i) const;
  // Input i read as a shape, partially known: its constant ints, or when it comes from a
  // Shape node, the static shape that node's input has (TF's constant_value_as_shape), so
  // that Reshape(grad, Shape(x)) has x's shape. nullopt when neither is known.
  StaticShape input_as_shape(int i) const;

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  void set_output(int i, StaticShape shape) { outputs_[i] = std::move(shape); }
  const std::vector<StaticShape>& outputs() const { return outputs_; }

  // InvalidArgument "<what> for '<node>' (op: '<Op>') with input shapes: [2], [3]."
  Status Error(std::string_view what) const;

 private:
  const proto::NodeDef& node_;
  std::vector<StaticShape> inputs_;
  std::vector<const proto::NodeDef*> input_nodes_;
  std::vector<StaticShape> outputs_;
  std::vector<StaticShape> shapes_of_shape_inputs_;
};

using ShapeFn = std::function<Status(ShapeContext* ctx)>;

// The registered shape function of `op`, or null.
const ShapeFn* FindShapeFn(std::string_view op);

// Merges two dimensions that must agree (kUnknownDim agrees with anything); false when
// both are known and differ.
bool MergeDim(int64_t a, int64_t b, int64_t* merged);

namespace internal {
struct ShapeFnRegistrar {
  ShapeFnRegistrar(std::string op, ShapeFn fn);
};
}  // namespace internal

}  // namespace tw

#define TW_SHAPE_FN_CONCAT_INNER(a, b) a##b
#define TW_SHAPE_FN_CONCAT(a, b) TW_SHAPE_FN_CONCAT_INNER(a, b)
// Registers `fn` as the shape function of the ops named (at namespace scope in a .cc file).
#define TW_REGISTER_SHAPE_FN(op, fn)                                                 \
  [[maybe_unused]] static const ::tw::internal::ShapeFnRegistrar TW_SHAPE_FN_CONCAT( \
      tw_shape_fn_registrar_, __COUNTER__)(op, fn)

#endif  // TENSORWEAVE_SRC_GRAPH_SHAPE_INFERENCE_H_
