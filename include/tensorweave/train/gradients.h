// Symbolic gradients: nodes added to a graph that compute d(sum of ys)/d(xs).
//
//   auto w = tw::ops::MakeVariable(root, "w", tw::DT_FLOAT, {784, 10});
//   auto logits = tw::ops::MatMul(root, x, tw::ops::ReadVariable(root, w));
//   auto loss = tw::ops::Mean(root, ..., {0});
//   auto grads = tw::Gradients(root, {loss}, {w.handle});   // (*grads)[0].dense
//
// xs may be any outputs, including variable handles (DT_RESOURCE): the gradient with respect
// to a variable is the sum of the gradients flowing into every ReadVariable and ResourceGather
// of it. Contributions along several paths are summed. Gradients that touch only some rows
// (Gather, ResourceGather) stay sparse (IndexedSlices) until they meet a dense one.
#ifndef TENSORWEAVE_TRAIN_GRADIENTS_H_
#define TENSORWEAVE_TRAIN_GRADIENTS_H_

#include <vector>

#include "tensorweave/gradient.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"

namespace tw {

// Adds to `scope`'s graph the nodes computing the gradients of sum(ys) with respect to each
// of `xs`. `grad_ys` (same length as ys, or empty for ones) seeds each y's gradient; an
// invalid Output among them also means ones. The nodes are named "gradients/<node>_grad/..."
// ("gradients_1/..." for a second call) and built with `scope`, so its device, device
// functions and control dependencies apply (ops on a variable still run where it lives).
// Only floating-point tensors and variable handles carry gradients. Ops without a gradient
// (ArgMax, comparisons, Shape, integer casts, ...) end a path; a path through an op that has
// no gradient function and is not marked non-differentiable is InvalidArgument naming the
// op and the node. InvalidArgument too for an x or y that is not in `scope`'s graph, or
// grad_ys of another length. Errors in building nodes are also recorded in `scope`; the
// others leave it usable. An x no y depends on gets a Gradient with !exists().
StatusOr<std::vector<Gradient>> Gradients(const Scope& scope, const std::vector<Output>& ys,
                                          const std::vector<Output>& xs,
                                          const std::vector<Output>& grad_ys = {});

// A dense tensor for a gradient: `gradient.dense` itself, or for IndexedSlices an
// UnsortedSegmentSum of the rows into zeros of the dense shape (rows listed twice add up).
// FailedPrecondition when !gradient.exists().
StatusOr<Output> ToDense(const Scope& scope, const Gradient& gradient);

}  // namespace tw

#endif  // TENSORWEAVE_TRAIN_GRADIENTS_H_
