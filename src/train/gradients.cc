// The gradients driver: walks the ops between the xs and the ys in reverse topological
// order and calls each op's registered gradient function (src/graph/gradient_registry.h).
#include "tensorweave/train/gradients.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/graph/gradient_registry.h"
#include "src/graph/graph.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

// Gradients flow through floating-point tensors, and into variables through their handles.
bool CarriesGradient(DataType t) { return t == DT_FLOAT || t == DT_DOUBLE || t == DT_RESOURCE; }

Output OutputOf(const Node& node, int index) {
  return Output(Operation(node.name(), node.output_types), index);
}

// The sum of several gradients of one tensor. IndexedSlices stay sparse when every term is
// sparse (their rows are concatenated; duplicates are summed when densified); any dense
// term makes the sum dense. One term is returned as it is: no node is added.
StatusOr<Gradient> SumGradients(const Scope& scope, const std::vector<Gradient>& terms) {
  if (terms.size() == 1) return terms[0];
  bool all_sparse = true;
  for (const Gradient& g : terms) all_sparse = all_sparse && g.sparse.has_value();
  Gradient sum;
  if (all_sparse) {
    // Concat needs one index type: int64 unless every term uses int32.
    bool all_int32 = true;
    for (const Gradient& g : terms) all_int32 = all_int32 && g.sparse->indices.type() == DT_INT32;
    InputList indices, values;
    for (const Gradient& g : terms) {
      const Output& i = g.sparse->indices;
      indices.push_back(all_int32 || i.type() == DT_INT64 ? i : ops::Cast(scope, i, DT_INT64));
      values.push_back(g.sparse->values);
    }
    sum.sparse = IndexedSlices{ops::Concat(scope, indices, 0), ops::Concat(scope, values, 0),
                               terms[0].sparse->dense_shape};
  } else {
    InputList dense;
    for (const Gradient& g : terms) {
      TW_ASSIGN_OR_RETURN(Output d, ToDense(scope, g));
      dense.push_back(d);
    }
    sum.dense = ops::AddN(scope, dense);
  }
  TW_RETURN_IF_ERROR(scope.status());
  return sum;
}

class GradientBuilder {
 public:
  GradientBuilder(const Scope& scope, const Graph& graph)
      : scope_(scope.NewSubScope("gradients")), graph_(graph) {}

  StatusOr<std::vector<Gradient>> Build(const std::vector<Output>& ys,
                                        const std::vector<Output>& xs,
                                        const std::vector<Output>& grad_ys);

 private:
  using Key = std::pair<int, int>;  // (node id, output index)

  StatusOr<Key> Resolve(const Output& o, const char* what, size_t i) const;
  void MarkReachable(const std::vector<Key>& xs);
  Status Backprop(const Node& node);

  Scope scope_;
  const Graph& graph_;
  std::vector<bool> reachable_;                   // by node id: downstream of some x
  std::map<Key, std::vector<Gradient>> pending_;  // gradient terms of each tensor
};

StatusOr<GradientBuilder::Key> GradientBuilder::Resolve(const Output& o, const char* what,
                                                        size_t i) const {
  const Node* node = o.op().valid() ? graph_.FindNode(o.op().name()) : nullptr;
  if (node == nullptr || o.index() < 0 ||
      o.index() >= static_cast<int>(node->output_types.size())) {
    return errors::InvalidArgument("Gradients: ", what, "[", i, "] (", o.name(),
                                   ") is not an output of a node of the scope's graph");
  }
  return Key{node->id, o.index()};
}

void GradientBuilder::MarkReachable(const std::vector<Key>& xs) {
  reachable_.assign(graph_.nodes().size(), false);
  std::vector<int> stack;
  for (const Key& x : xs) {
    if (!reachable_[x.first]) stack.push_back(x.first);
    reachable_[x.first] = true;
  }
  while (!stack.empty()) {
    const Node& n = graph_.nodes()[stack.back()];
    stack.pop_back();
    for (const Edge& e : n.out_edges) {
      if (e.IsControl() || reachable_[e.dst]) continue;
      reachable_[e.dst] = true;
      stack.push_back(e.dst);
    }
  }
}

Status GradientBuilder::Backprop(const Node& node) {
  // Only inputs downstream of an x that can carry a gradient need one; a node without
  // such inputs (an x's own node, a Cast from an integer) ends the walk here.
  const int num_inputs = static_cast<int>(node.input_types.size());
  std::vector<const Edge*> in(num_inputs, nullptr);
  std::vector<bool> needs(num_inputs, false);
  bool any_needed = false;
  for (const Edge& e : node.in_edges) {
    if (e.IsControl()) continue;
    in[e.dst_input] = &e;
    needs[e.dst_input] = reachable_[e.src] && CarriesGradient(node.input_types[e.dst_input]);
    any_needed = any_needed || needs[e.dst_input];
  }
  if (!any_needed) return OkStatus();

  const std::optional<GradientRegistry::Entry> entry = GradientRegistry::Global().Find(node.op());
  if (!entry) {
    return errors::InvalidArgument(
        "Gradients: no gradient is defined for op ", node.op(), " (node ", node.name(),
        "), which lies on a path from an x to a y; register one with TW_REGISTER_GRADIENT, "
        "or mark the op TW_NO_GRADIENT if it is not differentiable");
  }
  if (!entry->fn) return OkStatus();  // not differentiable: the path ends

  const Scope op_scope = scope_.NewSubScope(node.name() + "_grad");
  std::vector<Gradient> grad_outputs(node.output_types.size());
  for (size_t k = 0; k < grad_outputs.size(); ++k) {
    auto it = pending_.find({node.id, static_cast<int>(k)});
    if (it == pending_.end()) continue;
    TW_ASSIGN_OR_RETURN(grad_outputs[k], SumGradients(op_scope, it->second));
    if (!entry->accepts_sparse && grad_outputs[k].sparse) {
      TW_ASSIGN_OR_RETURN(grad_outputs[k].dense, ToDense(op_scope, grad_outputs[k]));
      grad_outputs[k].sparse.reset();
    }
    // The sum is final (every consumer came before in reverse topological order); keep it
    // for an x that is this very tensor.
    it->second = {grad_outputs[k]};
  }

  std::vector<Output> inputs, outputs;
  for (int i = 0; i < num_inputs; ++i) {
    inputs.push_back(OutputOf(graph_.nodes()[in[i]->src], in[i]->src_output));
  }
  for (size_t k = 0; k < node.output_types.size(); ++k) {
    outputs.push_back(OutputOf(node, static_cast<int>(k)));
  }
  const ForwardOp op(&node.def, std::move(inputs), std::move(outputs), needs);
  std::vector<Gradient> grad_inputs(num_inputs);
  Status s = entry->fn(op_scope, op, grad_outputs, &grad_inputs);
  if (!s.ok()) {
    return errors::Annotate(s, "Gradients: op " + node.op() + " (node " + node.name() + "): ");
  }
  TW_RETURN_IF_ERROR(op_scope.status());
  for (int i = 0; i < num_inputs && i < static_cast<int>(grad_inputs.size()); ++i) {
    if (!needs[i] || !grad_inputs[i].exists()) continue;
    pending_[{in[i]->src, in[i]->src_output}].push_back(std::move(grad_inputs[i]));
  }
  return OkStatus();
}

StatusOr<std::vector<Gradient>> GradientBuilder::Build(const std::vector<Output>& ys,
                                                       const std::vector<Output>& xs,
                                                       const std::vector<Output>& grad_ys) {
  if (!grad_ys.empty() && grad_ys.size() != ys.size()) {
    return errors::InvalidArgument("Gradients: ", grad_ys.size(), " grad_ys for ", ys.size(),
                                   " ys; give one per y or none");
  }
  std::vector<Key> x_keys;
  for (size_t i = 0; i < xs.size(); ++i) {
    TW_ASSIGN_OR_RETURN(Key k, Resolve(xs[i], "xs", i));
    x_keys.push_back(k);
  }
  MarkReachable(x_keys);
  for (size_t i = 0; i < ys.size(); ++i) {
    TW_ASSIGN_OR_RETURN(Key k, Resolve(ys[i], "ys", i));
    if (!reachable_[k.first]) continue;  // depends on no x: nothing to seed
    const bool seeded = !grad_ys.empty() && grad_ys[i].op().valid();
    Gradient seed;
    seed.dense = seeded ? grad_ys[i] : ops::OnesLike(scope_, ys[i]);
    pending_[k].push_back(seed);
  }
  TW_RETURN_IF_ERROR(scope_.status());

  const std::vector<int>& order = graph_.topological_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& node = graph_.nodes()[*it];
    if (!reachable_[node.id]) continue;
    bool has_gradient = false;
    for (size_t k = 0; k < node.output_types.size() && !has_gradient; ++k) {
      has_gradient = pending_.count({node.id, static_cast<int>(k)}) > 0;
    }
    if (has_gradient) TW_RETURN_IF_ERROR(Backprop(node));
  }

  std::vector<Gradient> result;
  for (const Key& k : x_keys) {
    auto it = pending_.find(k);
    if (it == pending_.end()) {
      result.emplace_back();
      continue;
    }
    TW_ASSIGN_OR_RETURN(Gradient sum, SumGradients(scope_, it->second));
    it->second = {sum};  // the same x twice gets the same nodes
    result.push_back(std::move(sum));
  }
  return result;
}

}  // namespace

StatusOr<std::vector<Gradient>> Gradients(const Scope& scope, const std::vector<Output>& ys,
                                          const std::vector<Output>& xs,
                                          const std::vector<Output>& grad_ys) {
  TW_ASSIGN_OR_RETURN(proto::GraphDef def, scope.ToGraphDef());
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, Graph::Create(def));
  GradientBuilder builder(scope, *graph);
  return builder.Build(ys, xs, grad_ys);
}

StatusOr<Output> ToDense(const Scope& scope, const Gradient& gradient) {
  if (gradient.dense.op().valid()) return gradient.dense;
  if (!gradient.sparse) {
    return errors::FailedPrecondition("ToDense: the gradient does not exist (no y depends on x)");
  }
  const IndexedSlices& s = *gradient.sparse;
  // Rows listed twice add up, as UnsortedSegmentSum does.
  Output rows = ops::Gather(scope, s.dense_shape, 0);
  Output dense = ops::UnsortedSegmentSum(scope, s.values, s.indices, rows);
  TW_RETURN_IF_ERROR(scope.status());
  return dense;
}

}  // namespace tw
