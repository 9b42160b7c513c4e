// Optimizers: build the ops that compute gradients and apply them to the model's variables
// in place, on the devices where the variables live.
//
//   auto optimizer = tw::train::AdagradOptimizer(0.1f);
//   auto train_op = optimizer->Minimize(worker, loss, &vars, global_step);
//   session.Run({...}, {loss}, {*train_op});
//
// Slot variables (accumulators, moments) are created beside their variable (ColocateWith),
// registered in the ModelVariables (so they are initialized, saved and restored) and named
// "<variable>/<Optimizer>" or "<variable>/<Optimizer>_1".
#ifndef TENSORWEAVE_TRAIN_OPTIMIZER_H_
#define TENSORWEAVE_TRAIN_OPTIMIZER_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensorweave/ops/state_ops.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"
#include "tensorweave/train/gradients.h"
#include "tensorweave/train/variables.h"

namespace tw::train {

struct GradAndVar {
  Gradient grad;
  ops::Variable var;
};

// Builds graph nodes; not thread-safe, like the Scope it builds with. One optimizer may
// minimize several losses; slots are made once per variable.
class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // Gradients of `loss` with respect to `vars` (all trainable variables when empty).
  // Variables the loss does not depend on get a Gradient without value.
  StatusOr<std::vector<GradAndVar>> ComputeGradients(const Scope& scope, const Output& loss,
                                                     const ModelVariables& variables,
                                                     std::vector<ops::Variable> vars = {});

  // One op applying every gradient (entries without value are skipped); when `global_step`
  // is given it is incremented by one after all updates, in the same step. A sparse
  // gradient goes through ApplySparseDuplicateIndices, so (as in TensorFlow) the rows of a
  // repeated index are summed and each distinct row is updated once.
  // InvalidArgument when no entry has a gradient.
  StatusOr<Operation> ApplyGradients(const Scope& scope, const std::vector<GradAndVar>& grads,
                                     ModelVariables* variables,
                                     std::optional<ops::Variable> global_step = std::nullopt);

  StatusOr<Operation> Minimize(const Scope& scope, const Output& loss, ModelVariables* variables,
                               std::optional<ops::Variable> global_step = std::nullopt,
                               std::vector<ops::Variable> vars = {});

  virtual std::string name() const = 0;

  // The learning rate of the updates built from now on: the scalar tensor `lr` (cast to
  // each variable's dtype), e.g. a rate decayed with the global step
  // (tf.train.exponential_decay), instead of the number the optimizer was made with, as
  // TensorFlow's optimizers take either.
  void SetLearningRate(Output lr) { learning_rate_tensor_ = std::move(lr); }

 protected:
  // The learning rate for `var`'s update: the tensor set, or `constant` in var's dtype.
  Input LearningRate(const Scope& scope, const ops::Variable& var, float constant) const;

  // Creates the slots of `var` (once) and returns the update op for a dense or sparse
  // gradient. `scope` is colocated with the variable.
  virtual Operation ApplyDense(const Scope& scope, const ops::Variable& var, const Output& grad,
                               ModelVariables* variables) = 0;
  // `grad.indices` are distinct here (see ApplySparseDuplicateIndices).
  virtual Operation ApplySparse(const Scope& scope, const ops::Variable& var,
                                const IndexedSlices& grad, ModelVariables* variables) = 0;
  // The update for a sparse gradient whose indices may repeat. By default the values of
  // each repeated index are summed first (DeduplicateIndexedSlices) and ApplySparse applies
  // one update per distinct row, as TensorFlow 1.x's _apply_sparse_duplicate_indices does:
  // Adagrad, Adam, Momentum and RMSProp would otherwise square, or add momentum to, each
  // piece separately. An optimizer whose update is linear in the gradient (GradientDescent)
  // overrides this to skip the summing.
  virtual Operation ApplySparseDuplicateIndices(const Scope& scope, const ops::Variable& var,
                                                const IndexedSlices& grad,
                                                ModelVariables* variables);
  // Runs once per ApplyGradients after every update (Adam advances its beta powers here).
  virtual Operation Finish(const Scope& scope, const std::vector<Operation>& updates,
                           ModelVariables* variables);

  // A slot variable "<var>/<slot_name>" beside `var`, of its dtype and shape, filled with
  // `value`; made once.
  ops::Variable Slot(const ops::Variable& var, const std::string& slot_name, float value,
                     ModelVariables* variables);
  // The scope ApplyGradients was given, without the optimizer's name prefix: slots and
  // other optimizer state are named from it.
  const Scope& slot_scope() const { return slot_scope_; }

 private:
  std::vector<std::pair<std::string, ops::Variable>> slots_;  // "<var>/<slot>" -> slot
  std::optional<Output> learning_rate_tensor_;
  Scope slot_scope_ = Scope::NewRootScope();
};

// TensorFlow 1.x's _deduplicate_indexed_slices: `grad` with one row per distinct index,
// in order of first occurrence, holding the sum of that index's rows (Unique, then
// UnsortedSegmentSum). Built with `scope`; the dense shape is kept.
IndexedSlices DeduplicateIndexedSlices(const Scope& scope, const IndexedSlices& grad);

struct OptimizerOptions {
  bool use_locking = true;
};

std::unique_ptr<Optimizer> GradientDescentOptimizer(float learning_rate,
                                                    OptimizerOptions options = {});
std::unique_ptr<Optimizer> MomentumOptimizer(float learning_rate, float momentum,
                                             bool use_nesterov = false,
                                             OptimizerOptions options = {});
std::unique_ptr<Optimizer> AdagradOptimizer(float learning_rate,
                                            float initial_accumulator_value = 0.1f,
                                            OptimizerOptions options = {});
std::unique_ptr<Optimizer> AdamOptimizer(float learning_rate = 0.001f, float beta1 = 0.9f,
                                         float beta2 = 0.999f, float epsilon = 1e-8f,
                                         OptimizerOptions options = {});
// TensorFlow 1.x's RMSPropOptimizer without `centered`. Slots "<var>/RMSProp" (the mean
// square ms, initialized to ones as in TensorFlow 1.x) and "<var>/RMSProp_1" (the momentum,
// zeros). Each step: ms = decay ms + (1 - decay) g^2;
// mom = momentum mom + learning_rate g / sqrt(ms + epsilon); var -= mom.
// A sparse gradient updates only its rows (and their slots).
std::unique_ptr<Optimizer> RMSPropOptimizer(float learning_rate, float decay = 0.9f,
                                            float momentum = 0.0f, float epsilon = 1e-10f,
                                            OptimizerOptions options = {});

// TensorFlow 1.x's FtrlOptimizer (FTRL-Proximal, the linear estimators' default). Slots
// "<var>/Ftrl" (the accumulator, initially initial_accumulator_value) and "<var>/Ftrl_1"
// (the linear term, zeros), TF's names. l2_shrinkage > 0 applies ApplyFtrlV2. The
// arguments' checks are TF's: InvalidArgument when the step runs (training_ops.h).
struct FtrlOptions {
  float learning_rate_power = -0.5f;
  float initial_accumulator_value = 0.1f;
  float l1_regularization_strength = 0.0f;
  float l2_regularization_strength = 0.0f;
  float l2_shrinkage_regularization_strength = 0.0f;
};
std::unique_ptr<Optimizer> FtrlOptimizer(float learning_rate, FtrlOptions ftrl = {},
                                         OptimizerOptions options = {});

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_OPTIMIZER_H_
