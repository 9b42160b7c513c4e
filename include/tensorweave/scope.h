// Building graphs in C++: Scope, Operation, Output and Input.
//
//   tw::Scope root = tw::Scope::NewRootScope();
//   auto x = tw::ops::Placeholder(root.WithOpName("x"), tw::DT_FLOAT);
//   auto y = tw::ops::Add(root, x, 1.0f);           // constants become Const nodes
//   auto ps = root.WithDevice("/job:ps/task:0");    // device scopes nest and merge
//   tw::StatusOr<tw::proto::GraphDef> graph = root.ToGraphDef();
//
// Errors (unknown op, mismatched input types, conflicting devices) do not stop building:
// the first one is kept and returned by status() and ToGraphDef(), naming the node.
// A Scope is a cheap handle; copies share the graph being built. Not thread-safe: build a
// graph from one thread.
#ifndef TENSORWEAVE_SCOPE_H_
#define TENSORWEAVE_SCOPE_H_

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"
#include "tensorweave/tensor_shape.h"

namespace tw {

struct OpDef;  // src/framework/op_def.h
namespace internal {
class GraphBuilder;
}  // namespace internal

// A node in the graph being built.
class Operation {
 public:
  Operation() = default;
  Operation(std::string name, std::vector<DataType> output_types)
      : name_(std::move(name)), output_types_(std::move(output_types)) {}
  const std::string& name() const { return name_; }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType output_type(int i) const { return output_types_[i]; }
  bool valid() const { return !name_.empty(); }

 private:
  std::string name_;
  std::vector<DataType> output_types_;
};

// One output of a node: "node:index" (written "node" for index 0).
class Output {
 public:
  Output() = default;
  Output(Operation op, int index) : op_(std::move(op)), index_(index) {}
  const Operation& op() const { return op_; }
  int index() const { return index_; }
  DataType type() const { return op_.valid() ? op_.output_type(index_) : DT_INVALID; }
  // The tensor name used for feeds and fetches: "node:0".
  std::string name() const { return op_.name() + ":" + std::to_string(index_); }
  // Lets an Output be used where control dependencies are expected.
  operator Operation() const { return op_; }  // NOLINT

 private:
  Operation op_;
  int index_ = 0;
};

// An op input: an Output, or a value that becomes a Const node.
class Input {
 public:
  Input(const Output& o) : output_(o) {}                             // NOLINT: implicit by design
  Input(const Tensor& t) : tensor_(t) {}                             // NOLINT
  Input(float v) : tensor_(Tensor::Scalar(v)) {}                     // NOLINT
  Input(double v) : tensor_(Tensor::Scalar(v)) {}                    // NOLINT
  Input(int v) : tensor_(Tensor::Scalar<int32_t>(v)) {}              // NOLINT
  Input(int64_t v) : tensor_(Tensor::Scalar(v)) {}                   // NOLINT
  Input(bool v) : tensor_(Tensor::Scalar(v)) {}                      // NOLINT
  Input(const char* v) : tensor_(Tensor::Scalar<std::string>(v)) {}  // NOLINT
  Input(const std::string& v) : tensor_(Tensor::Scalar<std::string>(v)) {}          // NOLINT
  Input(std::initializer_list<float> v) : tensor_(Tensor::FromVector<float>(v)) {}  // NOLINT
  Input(std::initializer_list<int> v);  // NOLINT: an int32 vector

  const std::optional<Output>& output() const { return output_; }
  const std::optional<Tensor>& tensor() const { return tensor_; }

 private:
  std::optional<Output> output_;
  std::optional<Tensor> tensor_;
};

using InputList = std::vector<Input>;
using AttrMap = std::map<std::string, proto::AttrValue>;

class Scope {
 public:
  // Chooses a device string for a new node, given the node (with its scope's device
  // already set); "" keeps it. Used by replica device setters.
  using DeviceFunction = std::function<std::string(const proto::NodeDef& node)>;

  static Scope NewRootScope();

  // Node names get "name/" prefixed; names are made unique with "_1", "_2", ...
  Scope NewSubScope(std::string_view name) const;
  // The next node made with this scope is called `name` (made unique if taken).
  Scope WithOpName(std::string_view name) const;
  // Nodes get this device, merged with (and overriding parts of) the enclosing device.
  Scope WithDevice(std::string_view device) const;
  Scope WithDeviceFunction(DeviceFunction fn) const;
  // Nodes made with this scope run after `ops`.
  Scope WithControlDependencies(const std::vector<Operation>& ops) const;
  // Nodes made with this scope run after none of the enclosing control dependencies: for
  // variables and their initializers, which TF 1.x builds outside any
  // `control_dependencies` block (its init_scope), so that initializing a model never runs
  // the ops an update was ordered after.
  Scope WithoutControlDependencies() const;
  // Nodes made with this scope are placed where `op` is: they take its device (overriding
  // the scope's device and device functions) and join its colocation group.
  Scope ColocateWith(const Operation& op) const;

  // The first error met while building, naming the node.
  Status status() const;
  bool ok() const { return status().ok(); }
  // The graph built so far, or the first error.
  StatusOr<proto::GraphDef> ToGraphDef() const;
  // The nodes added after the first `first` (in the order they were added), or the first
  // error. Cheap when there are none: a session extending its graph calls it every step.
  StatusOr<proto::GraphDef> NodesSince(int first) const;

  // Adds a node of `op` with one InputList per input argument of the op. Type attributes
  // (T, N, list types) missing from `attrs` are inferred from the inputs. Returns the node,
  // or an invalid Operation after recording an error.
  Operation AddNode(std::string_view op, const std::vector<InputList>& inputs,
                    const AttrMap& attrs = {}) const;
  // Like AddNode, but all or nothing: a node that cannot be built leaves the graph as it
  // was (no node, no name taken, no error recorded) and its error is returned. For
  // front-ends that report each mistake where it is made and go on building (the Python
  // layer raises it from the op's constructor). The scope's recorded error, if any, first.
  StatusOr<Operation> TryAddNode(std::string_view op, const std::vector<InputList>& inputs,
                                 const AttrMap& attrs = {}) const;
  // The node's output i, or an invalid Output when the node failed.
  Output AddNodeOutput(std::string_view op, const std::vector<InputList>& inputs,
                       const AttrMap& attrs = {}, int index = 0) const;
  // Records an error for a node the caller could not build.
  void UpdateStatus(const Status& s) const;
  // What building knew of `output`'s shape from the ops' shape functions (as TensorFlow's
  // Python layer knows `Tensor.shape`): nullopt when even the rank is unknown, dimensions
  // of TensorShape::kUnknownDim when only they are. A node whose inputs have incompatible
  // shapes is refused when built (InvalidArgument "Dimensions must be equal, but are 2 and
  // 3 for 'add' (op: 'Add') with input shapes: [2], [3].").
  std::optional<TensorShape> InferredShape(const Output& output) const;
  // The node called `name` in the graph being built, with its output types (for front-ends
  // that learn of nodes added by C++ code, such as gradients); invalid when there is none.
  Operation FindNode(std::string_view name) const;

 private:
  struct State {
    std::string name_prefix;
    std::optional<std::string> op_name;
    std::string device;
    std::vector<DeviceFunction> device_functions;
    std::vector<std::string> control_deps;
    std::optional<std::string> colocate_with;
  };
  Scope(std::shared_ptr<internal::GraphBuilder> builder, State state)
      : builder_(std::move(builder)), state_(std::move(state)) {}
  // AddNode's steps: the node's data inputs (literals become constants) and the
  // attributes they determine; then the node's device (device functions, colocation, and
  // the device of a resource it uses).
  struct NodeInputs;
  Status AddInputs(const OpDef& op_def, const std::vector<InputList>& inputs, proto::NodeDef* node,
                   NodeInputs* resolved) const;
  void ChooseDevice(const std::optional<std::string>& resource_producer,
                    proto::NodeDef* node) const;
  // The node's output shapes from its op's shape function (src/graph/shape_inference.h).
  StatusOr<std::vector<std::optional<TensorShape>>> InferShapes(const OpDef& op_def,
                                                                const proto::NodeDef& node,
                                                                const NodeInputs& resolved,
                                                                size_t num_outputs) const;

  std::shared_ptr<internal::GraphBuilder> builder_;
  State state_;
};

}  // namespace tw

#endif  // TENSORWEAVE_SCOPE_H_
