// Gradient functions: how to add to a graph the nodes that compute an op's input gradients
// from its output gradients, and the process-wide registry that holds them by op name.
//
// Gradient functions are registered beside their op, in src/ops/<family>_ops.cc:
//
//   Status MatMulGrad(const Scope& scope, const ForwardOp& op,
//                     const std::vector<Gradient>& grad_outputs,
//                     std::vector<Gradient>* grad_inputs) {
//     (*grad_inputs)[0].dense = ops::MatMul(scope, grad_outputs[0].dense, op.input(1), ...);
//     ...
//     return OkStatus();
//   }
//   TW_REGISTER_GRADIENT("MatMul", MatMulGrad);
//   TW_NO_GRADIENT("ArgMax");   // not differentiable: a path through it ends silently
//
// The driver (tw::Gradients, src/train/gradients.cc) calls a function once per op between
// the xs and the ys, with the sum of the gradients flowing into each output.
#ifndef TENSORWEAVE_SRC_GRAPH_GRADIENT_REGISTRY_H_
#define TENSORWEAVE_SRC_GRAPH_GRADIENT_REGISTRY_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/framework/attr_value.h"
#include "tensorweave/gradient.h"
#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"

namespace tw {

// The op being differentiated, as its gradient function sees it: the node (default
// attributes filled in), its data inputs and its outputs, usable as inputs of new nodes.
// Valid only during the call of the gradient function.
class ForwardOp {
 public:
  // `needs_gradient` has one flag per input (empty: every input needs one).
  ForwardOp(const proto::NodeDef* node, std::vector<Output> inputs, std::vector<Output> outputs,
            std::vector<bool> needs_gradient = {})
      : node_(node),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        needs_gradient_(std::move(needs_gradient)) {}

  const proto::NodeDef& def() const { return *node_; }
  const std::string& name() const { return node_->name(); }
  const std::string& type() const { return node_->op(); }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const Output& input(int i) const { return inputs_[i]; }
  const Output& output(int i) const { return outputs_[i]; }
  // False when the driver will drop the gradient of input i (no x is upstream of it): a
  // function may skip building it (MatMul skips the product for a fed input).
  bool needs_gradient(int i) const {
    return needs_gradient_.empty() || needs_gradient_[static_cast<size_t>(i)];
  }
  // InvalidArgument naming the node and the attribute when missing or of another kind.
  template <typename T>
  Status GetAttr(std::string_view attr, T* value) const {
    return GetNodeAttr(*node_, attr, value);
  }

 private:
  const proto::NodeDef* node_;
  std::vector<Output> inputs_;
  std::vector<Output> outputs_;
  std::vector<bool> needs_gradient_;
};

// Builds, with `scope`, the gradients of the op's inputs. `grad_outputs` has one entry per
// output of the op: the summed gradient flowing into it, or an entry with !exists() when
// nothing downstream depends on that output. Unless the function was registered with
// TW_REGISTER_SPARSE_GRADIENT, every existing entry is dense. `grad_inputs` arrives with one
// empty entry per data input; the function sets those inputs that have a gradient (leaving
// integer inputs such as axes, shapes and indices empty). A non-OK status (for example an
// attribute combination without a gradient) stops tw::Gradients with that error.
using GradFunc = std::function<Status(const Scope& scope, const ForwardOp& op,
                                      const std::vector<Gradient>& grad_outputs,
                                      std::vector<Gradient>* grad_inputs)>;

// The gradient functions of this process, by op name. Filled by static registrars before
// main(); thread-safe.
class GradientRegistry {
 public:
  struct Entry {
    GradFunc fn;                  // empty for an op marked not differentiable
    bool accepts_sparse = false;  // fn takes IndexedSlices output gradients as they are
  };

  static GradientRegistry& Global();

  // AlreadyExists when `op` already has an entry (a function or a TW_NO_GRADIENT mark).
  Status Register(std::string op, Entry entry);
  // The entry for `op`, or nullopt when the op has neither a gradient function nor a
  // TW_NO_GRADIENT mark.
  std::optional<Entry> Find(std::string_view op) const;
  std::vector<std::string> ListOps() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_ ABSL_GUARDED_BY(mu_);
};

namespace internal {
// Registers at static-initialization time; a second registration for one op is a
// programming error and stops the program with the message.
struct GradientRegistrar {
  GradientRegistrar(const char* op, GradFunc fn, bool accepts_sparse);
};
}  // namespace internal

}  // namespace tw

#define TW_GRAD_CONCAT_INNER(a, b) a##b
#define TW_GRAD_CONCAT(a, b) TW_GRAD_CONCAT_INNER(a, b)
#define TW_GRADIENT_REGISTRAR_(op, fn, sparse)                                    \
  [[maybe_unused]] static const ::tw::internal::GradientRegistrar TW_GRAD_CONCAT( \
      tw_gradient_registrar_, __COUNTER__)(op, fn, sparse)

// `fn` (a GradFunc) is the gradient of op `op`; it receives dense output gradients.
#define TW_REGISTER_GRADIENT(op, fn) TW_GRADIENT_REGISTRAR_(op, fn, false)
// Like TW_REGISTER_GRADIENT, but `fn` receives output gradients as they are, dense or
// sparse, and may pass IndexedSlices on (Identity, ReadVariable).
#define TW_REGISTER_SPARSE_GRADIENT(op, fn) TW_GRADIENT_REGISTRAR_(op, fn, true)
// Op `op` is not differentiable: gradients do not flow through it, and tw::Gradients ends
// a path there without an error.
#define TW_NO_GRADIENT(op) TW_GRADIENT_REGISTRAR_(op, nullptr, false)

#endif  // TENSORWEAVE_SRC_GRAPH_GRADIENT_REGISTRY_H_
