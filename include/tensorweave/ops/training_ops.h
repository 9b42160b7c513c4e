// Graph-building functions for the optimizer update ops and conditional accumulators.
//
// Update ops change variables in place on the variable's own device (they are placed with
// the variable, whatever scope built them). Scalars (lr, momentum, beta1, ...) have the
// variable's type. Updates of one variable are serialized with every other update of it;
// `use_locking` is accepted for compatibility with TensorFlow graphs.
// Sparse variants update only the rows `indices` (int32 or int64) with `grad` rows
// (shape indices.shape + var.shape[1:]); a repeated index is applied once per occurrence,
// in order. Every variable an op touches (the variable and its slots) is locked for the
// whole update, so concurrent updates are exact and never deadlock.
//
// Errors, reported when the op runs, each naming the node and the variable; a failed op
// changes nothing (all inputs are checked before any write):
//   FailedPrecondition  the variable or a slot was never assigned;
//   InvalidArgument     a variable of another dtype than the update, a slot or grad whose
//                       shape differs from the variable's (both shapes named), a non-scalar
//                       lr/alpha/momentum/beta/rho/epsilon, the same variable passed twice,
//                       an index outside [0, var.shape[0]) (the index named).
#ifndef TENSORWEAVE_OPS_TRAINING_OPS_H_
#define TENSORWEAVE_OPS_TRAINING_OPS_H_

#include <string>
#include <vector>

#include "tensorweave/ops/state_ops.h"
#include "tensorweave/scope.h"

namespace tw::ops {

struct ApplyOptions {
  bool use_locking = true;
  bool use_nesterov = false;  // Momentum and Adam (dense and sparse) only
};

// var -= alpha * delta
Operation ApplyGradientDescent(const Scope& scope, const Variable& var, Input alpha, Input delta,
                               const ApplyOptions& options = {});
// accum = accum * momentum + grad; var -= lr * accum
// (Nesterov: var -= lr * grad + lr * momentum * accum)
Operation ApplyMomentum(const Scope& scope, const Variable& var, const Variable& accum, Input lr,
                        Input grad, Input momentum, const ApplyOptions& options = {});
// accum += grad^2; var -= lr * grad / sqrt(accum)
Operation ApplyAdagrad(const Scope& scope, const Variable& var, const Variable& accum, Input lr,
                       Input grad, const ApplyOptions& options = {});
// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
// m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2; var -= lr_t m / (sqrt(v) + eps)
Operation ApplyAdam(const Scope& scope, const Variable& var, const Variable& m, const Variable& v,
                    Input beta1_power, Input beta2_power, Input lr, Input beta1, Input beta2,
                    Input epsilon, Input grad, const ApplyOptions& options = {});
// RMSProp (TensorFlow's, not centered): ms is the moving mean square, mom the momentum.
// ms = rho ms + (1 - rho) grad^2; mom = momentum mom + lr grad / sqrt(ms + epsilon);
// var -= mom
Operation ApplyRMSProp(const Scope& scope, const Variable& var, const Variable& ms,
                       const Variable& mom, Input lr, Input rho, Input momentum, Input epsilon,
                       Input grad, const ApplyOptions& options = {});

Operation SparseApplyGradientDescent(const Scope& scope, const Variable& var, Input alpha,
                                     Input grad, Input indices, const ApplyOptions& options = {});
Operation SparseApplyMomentum(const Scope& scope, const Variable& var, const Variable& accum,
                              Input lr, Input grad, Input indices, Input momentum,
                              const ApplyOptions& options = {});
Operation SparseApplyAdagrad(const Scope& scope, const Variable& var, const Variable& accum,
                             Input lr, Input grad, Input indices, const ApplyOptions& options = {});
// "Lazy" Adam: only the rows in `indices` have their m, v and value updated (the others'
// moments do not decay).
Operation SparseApplyAdam(const Scope& scope, const Variable& var, const Variable& m,
                          const Variable& v, Input beta1_power, Input beta2_power, Input lr,
                          Input beta1, Input beta2, Input epsilon, Input grad, Input indices,
                          const ApplyOptions& options = {});
// Only the rows in `indices` have their ms, mom and value updated.
Operation SparseApplyRMSProp(const Scope& scope, const Variable& var, const Variable& ms,
                             const Variable& mom, Input lr, Input rho, Input momentum,
                             Input epsilon, Input grad, Input indices,
                             const ApplyOptions& options = {});
// FTRL-Proximal, as TensorFlow's FtrlOptimizer: accum (initially positive) and linear are
// the slots; l2_shrinkage > 0 takes ApplyFtrlV2. InvalidArgument when the step runs for
// lr <= 0, l1, l2 or l2_shrinkage < 0, or lr_power > 0 (TensorFlow's checks).
Operation ApplyFtrl(const Scope& scope, const Variable& var, const Variable& accum,
                    const Variable& linear, Input grad, Input lr, Input l1, Input l2,
                    Input lr_power, const ApplyOptions& options = {});
Operation ApplyFtrlV2(const Scope& scope, const Variable& var, const Variable& accum,
                      const Variable& linear, Input grad, Input lr, Input l1, Input l2,
                      Input l2_shrinkage, Input lr_power, const ApplyOptions& options = {});
// Only the rows in `indices` are updated, once per index.
Operation SparseApplyFtrl(const Scope& scope, const Variable& var, const Variable& accum,
                          const Variable& linear, Input grad, Input indices, Input lr, Input l1,
                          Input l2, Input lr_power, const ApplyOptions& options = {});
Operation SparseApplyFtrlV2(const Scope& scope, const Variable& var, const Variable& accum,
                            const Variable& linear, Input grad, Input indices, Input lr, Input l1,
                            Input l2, Input l2_shrinkage, Input lr_power,
                            const ApplyOptions& options = {});

// ---- Conditional accumulators (synchronous training) ----
// A resource shared by name, like a variable, that averages (or sums) gradients of one
// dtype (float or double) and shape. A gradient applied with a local_step older than the
// accumulator's global step is dropped (stale). Take blocks (without holding a thread) until
// `num_required` gradients arrived, returns their mean (or sum), resets the sum and count,
// and advances the accumulator's global step by one; it is Cancelled with its step (the
// accumulator then keeps its gradients). Thread-safe: applies from many steps are exact.
// Errors: a second ConditionalAccumulator of the same name with another dtype, shape or
// reduction is InvalidArgument naming it; so is a gradient of another dtype or of a shape
// incompatible with the accumulator's (the first gradient fixes unknown dimensions).
struct AccumulatorOptions {
  std::string container;
  std::string shared_name;         // "" uses the node name
  std::string reduction = "MEAN";  // or "SUM"
};
struct Accumulator {
  Output handle;
  DataType dtype = DT_INVALID;
  // -1 for unknown dimensions; {} is a scalar.
  std::vector<int64_t> shape;
  operator Input() const { return handle; }  // NOLINT
  Operation op() const { return handle.op(); }
};
Accumulator ConditionalAccumulator(const Scope& scope, DataType dtype, std::vector<int64_t> shape,
                                   const AccumulatorOptions& options = {});
// local_step: int64 scalar.
Operation AccumulatorApplyGradient(const Scope& scope, const Accumulator& acc, Input local_step,
                                   Input gradient);
// num_required: int32 scalar >= 1 (else InvalidArgument). Outputs a tensor of acc.dtype.
Output AccumulatorTakeGradient(const Scope& scope, const Accumulator& acc, Input num_required);
// Sets the global step (int64 scalar) below which gradients are stale; never moves it back.
// With `reset`, sets it exactly, also lower (for a model restored from an older checkpoint);
// gradients already accumulated stay.
Operation AccumulatorSetGlobalStep(const Scope& scope, const Accumulator& acc,
                                   Input new_global_step, bool reset = false);
// How many gradients wait in the accumulator (int32).
Output AccumulatorNumAccumulated(const Scope& scope, const Accumulator& acc);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_TRAINING_OPS_H_
