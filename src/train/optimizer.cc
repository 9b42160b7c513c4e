#include "tensorweave/train/optimizer.h"

#include <algorithm>
#include <utility>

#include "tensorweave/ops.h"

namespace tw::train {
namespace {

// A scalar hyper-parameter in the variable's type (float or double).
Tensor ScalarLike(const ops::Variable& var, double value) {
  return var.dtype == DT_DOUBLE ? Tensor::Scalar<double>(value)
                                : Tensor::Scalar<float>(static_cast<float>(value));
}

// The step's increment, 1 in the global step's dtype: TF 1.x programs make int64 and int32
// global steps, and float ones with get_variable's default dtype (TF adds 1 cast to it).
Tensor StepIncrement(DataType dtype) {
  switch (dtype) {
    case DT_INT32:
      return Tensor::Scalar<int32_t>(1);
    case DT_FLOAT:
      return Tensor::Scalar<float>(1.0f);
    case DT_DOUBLE:
      return Tensor::Scalar<double>(1.0);
    default:
      return Tensor::Scalar<int64_t>(1);
  }
}

}  // namespace

StatusOr<std::vector<GradAndVar>> Optimizer::ComputeGradients(const Scope& scope,
                                                              const Output& loss,
                                                              const ModelVariables& variables,
                                                              std::vector<ops::Variable> vars) {
  if (vars.empty()) vars = variables.trainable();
  if (vars.empty()) {
    return errors::InvalidArgument(name(), ": no trainable variables to compute gradients for");
  }
  std::vector<Output> xs;
  for (const ops::Variable& v : vars) xs.push_back(v.handle);
  TW_ASSIGN_OR_RETURN(std::vector<Gradient> grads, Gradients(scope, {loss}, xs));
  std::vector<GradAndVar> out;
  for (size_t i = 0; i < vars.size(); ++i) out.push_back({grads[i], vars[i]});
  return out;
}

StatusOr<Operation> Optimizer::ApplyGradients(const Scope& scope,
                                              const std::vector<GradAndVar>& grads,
                                              ModelVariables* variables,
                                              std::optional<ops::Variable> global_step) {
  const Scope apply = scope.NewSubScope(name());
  slot_scope_ = scope.WithoutControlDependencies();
  std::vector<Operation> updates;
  for (const GradAndVar& g : grads) {
    if (!g.grad.exists()) continue;
    const Scope beside = apply.ColocateWith(g.var.op());
    updates.push_back(g.grad.sparse
                          ? ApplySparseDuplicateIndices(beside, g.var, *g.grad.sparse, variables)
                          : ApplyDense(beside, g.var, g.grad.dense, variables));
  }
  if (updates.empty()) {
    return errors::InvalidArgument(name(), ": no gradient for any variable; the loss does not ",
                                   "depend on the variables given");
  }
  Operation finish = Finish(apply, updates, variables);
  if (finish.valid()) updates.push_back(finish);
  Operation done;
  if (global_step) {
    done = ops::AssignAdd(apply.WithControlDependencies(updates).WithOpName("increment_step"),
                          *global_step, StepIncrement(global_step->dtype))
               .op();
  } else {
    done = ops::Group(apply.WithOpName("update"), updates);
  }
  TW_RETURN_IF_ERROR(scope.status());
  return done;
}

StatusOr<Operation> Optimizer::Minimize(const Scope& scope, const Output& loss,
                                        ModelVariables* variables,
                                        std::optional<ops::Variable> global_step,
                                        std::vector<ops::Variable> vars) {
  TW_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                      ComputeGradients(scope, loss, *variables, std::move(vars)));
  return ApplyGradients(scope, grads, variables, global_step);
}

Operation Optimizer::ApplySparseDuplicateIndices(const Scope& scope, const ops::Variable& var,
                                                 const IndexedSlices& grad,
                                                 ModelVariables* variables) {
  return ApplySparse(scope, var, DeduplicateIndexedSlices(scope, grad), variables);
}

IndexedSlices DeduplicateIndexedSlices(const Scope& scope, const IndexedSlices& grad) {
  const ops::UniqueOutputs unique = ops::Unique(scope, grad.indices);
  // shape(unique_indices)[0]: a scalar, as UnsortedSegmentSum wants.
  const Output count = ops::Gather(scope, ops::Shape(scope, unique.y), 0);
  return IndexedSlices{unique.y, ops::UnsortedSegmentSum(scope, grad.values, unique.idx, count),
                       grad.dense_shape};
}

Operation Optimizer::Finish(const Scope&, const std::vector<Operation>&, ModelVariables*) {
  return Operation();
}

ops::Variable Optimizer::Slot(const ops::Variable& var, const std::string& slot_name, float value,
                              ModelVariables* variables) {
  const std::string key = var.op().name() + "/" + slot_name;
  for (const auto& [k, slot] : slots_) {
    if (k == key) return slot;
  }
  // Named after the variable ("w/Adagrad"), not under the update's name scope.
  const Scope root = slot_scope_.ColocateWith(var.op());
  std::vector<int64_t> dims = var.shape;
  Output init = ops::Fill(root.WithOpName(key + "/init_value"), Tensor::FromVector<int64_t>(dims),
                          ScalarLike(var, value));
  ops::Variable slot = variables->Add(root, key, var.dtype, var.shape, init, /*trainable=*/false);
  // The slot of a part of a partitioned variable is the same part of a partitioned slot, so
  // checkpoints restore it onto another partitioning like the variable itself.
  variables->mutable_last().slot_of = var.op().name();
  variables->mutable_last().slot_name = slot_name;
  const auto& all = variables->all();
  for (const ModelVariable& primary : all) {
    if (primary.var.op().name() != var.op().name() || primary.full_shape.empty()) continue;
    ModelVariable& registered = variables->mutable_last();
    registered.name = primary.name + "/" + slot_name;
    registered.full_shape = primary.full_shape;
    registered.row_offset = primary.row_offset;
    break;
  }
  slots_.emplace_back(key, slot);
  return slot;
}

Input Optimizer::LearningRate(const Scope& scope, const ops::Variable& var, float constant) const {
  if (!learning_rate_tensor_) return ScalarLike(var, constant);
  const Output& lr = *learning_rate_tensor_;
  return lr.type() == var.dtype ? lr : ops::Cast(scope, lr, var.dtype);
}

namespace {

class GradientDescent : public Optimizer {
 public:
  GradientDescent(float lr, OptimizerOptions o) : lr_(lr), options_(o) {}
  std::string name() const override { return "GradientDescent"; }

 protected:
  Operation ApplyDense(const Scope& s, const ops::Variable& var, const Output& grad,
                       ModelVariables*) override {
    return ops::ApplyGradientDescent(s, var, LearningRate(s, var, lr_), grad,
                                     {.use_locking = options_.use_locking});
  }
  Operation ApplySparse(const Scope& s, const ops::Variable& var, const IndexedSlices& grad,
                        ModelVariables*) override {
    return ops::SparseApplyGradientDescent(s, var, LearningRate(s, var, lr_), grad.values,
                                           grad.indices, {.use_locking = options_.use_locking});
  }
  // Subtracting each piece of a repeated row is subtracting their sum: no summing first, as
  // TensorFlow's GradientDescentOptimizer skips it.
  Operation ApplySparseDuplicateIndices(const Scope& s, const ops::Variable& var,
                                        const IndexedSlices& grad,
                                        ModelVariables* variables) override {
    return ApplySparse(s, var, grad, variables);
  }

 private:
  float lr_;
  OptimizerOptions options_;
};

class Momentum : public Optimizer {
 public:
  Momentum(float lr, float momentum, bool nesterov, OptimizerOptions o)
      : lr_(lr), momentum_(momentum), nesterov_(nesterov), options_(o) {}
  std::string name() const override { return "Momentum"; }

 protected:
  Operation ApplyDense(const Scope& s, const ops::Variable& var, const Output& grad,
                       ModelVariables* variables) override {
    ops::Variable accum = Slot(var, name(), 0.0f, variables);
    return ops::ApplyMomentum(s, var, accum, LearningRate(s, var, lr_), grad,
                              ScalarLike(var, momentum_), Options());
  }
  Operation ApplySparse(const Scope& s, const ops::Variable& var, const IndexedSlices& grad,
                        ModelVariables* variables) override {
    ops::Variable accum = Slot(var, name(), 0.0f, variables);
    return ops::SparseApplyMomentum(s, var, accum, LearningRate(s, var, lr_), grad.values,
                                    grad.indices, ScalarLike(var, momentum_), Options());
  }

 private:
  ops::ApplyOptions Options() const {
    return {.use_locking = options_.use_locking, .use_nesterov = nesterov_};
  }
  float lr_, momentum_;
  bool nesterov_;
  OptimizerOptions options_;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(float lr, float initial, OptimizerOptions o) : lr_(lr), initial_(initial), options_(o) {}
  std::string name() const override { return "Adagrad"; }

 protected:
  Operation ApplyDense(const Scope& s, const ops::Variable& var, const Output& grad,
                       ModelVariables* variables) override {
    ops::Variable accum = Slot(var, name(), initial_, variables);
    return ops::ApplyAdagrad(s, var, accum, LearningRate(s, var, lr_), grad,
                             {.use_locking = options_.use_locking});
  }
  Operation ApplySparse(const Scope& s, const ops::Variable& var, const IndexedSlices& grad,
                        ModelVariables* variables) override {
    ops::Variable accum = Slot(var, name(), initial_, variables);
    return ops::SparseApplyAdagrad(s, var, accum, LearningRate(s, var, lr_), grad.values,
                                   grad.indices, {.use_locking = options_.use_locking});
  }

 private:
  float lr_, initial_;
  OptimizerOptions options_;
};

class Adam : public Optimizer {
 public:
  Adam(float lr, float beta1, float beta2, float epsilon, OptimizerOptions o)
      : lr_(lr), beta1_(beta1), beta2_(beta2), epsilon_(epsilon), options_(o) {}
  std::string name() const override { return "Adam"; }

 protected:
  Operation ApplyDense(const Scope& s, const ops::Variable& var, const Output& grad,
                       ModelVariables* variables) override {
    Powers(var, variables);
    ops::Variable m = Slot(var, "Adam", 0.0f, variables);
    ops::Variable v = Slot(var, "Adam_1", 0.0f, variables);
    return ops::ApplyAdam(s, var, m, v, Read(s, *beta1_power_, var), Read(s, *beta2_power_, var),
                          LearningRate(s, var, lr_), ScalarLike(var, beta1_),
                          ScalarLike(var, beta2_), ScalarLike(var, epsilon_), grad,
                          {.use_locking = options_.use_locking});
  }
  Operation ApplySparse(const Scope& s, const ops::Variable& var, const IndexedSlices& grad,
                        ModelVariables* variables) override {
    Powers(var, variables);
    ops::Variable m = Slot(var, "Adam", 0.0f, variables);
    ops::Variable v = Slot(var, "Adam_1", 0.0f, variables);
    return ops::SparseApplyAdam(s, var, m, v, Read(s, *beta1_power_, var),
                                Read(s, *beta2_power_, var), LearningRate(s, var, lr_),
                                ScalarLike(var, beta1_), ScalarLike(var, beta2_),
                                ScalarLike(var, epsilon_), grad.values, grad.indices,
                                {.use_locking = options_.use_locking});
  }
  // beta1_power *= beta1 and beta2_power *= beta2 once every variable is updated.
  Operation Finish(const Scope& s, const std::vector<Operation>& updates,
                   ModelVariables*) override {
    if (!beta1_power_) return Operation();
    const Scope after = s.WithControlDependencies(updates).ColocateWith(beta1_power_->op());
    Output b1 = ops::Assign(after, *beta1_power_,
                            ops::Mul(after, ops::ReadVariable(after, *beta1_power_), beta1_));
    Output b2 = ops::Assign(after, *beta2_power_,
                            ops::Mul(after, ops::ReadVariable(after, *beta2_power_), beta2_));
    return ops::Group(after, {b1.op(), b2.op()});
  }

 private:
  // The beta powers live beside the first variable updated, as in TensorFlow.
  void Powers(const ops::Variable& var, ModelVariables* variables) {
    if (beta1_power_) return;
    const Scope beside = slot_scope().ColocateWith(var.op());
    beta1_power_ = variables->Add(beside, "beta1_power", DT_FLOAT, {},
                                  Tensor::Scalar<float>(beta1_), /*trainable=*/false);
    beta2_power_ = variables->Add(beside, "beta2_power", DT_FLOAT, {},
                                  Tensor::Scalar<float>(beta2_), /*trainable=*/false);
  }
  // A beta power in the variable's type.
  static Output Read(const Scope& s, const ops::Variable& power, const ops::Variable& var) {
    Output value = ops::ReadVariable(s, power);
    return var.dtype == DT_FLOAT ? value : ops::Cast(s, value, var.dtype);
  }

  float lr_, beta1_, beta2_, epsilon_;
  OptimizerOptions options_;
  std::optional<ops::Variable> beta1_power_, beta2_power_;
};

class RMSProp : public Optimizer {
 public:
  RMSProp(float lr, float decay, float momentum, float epsilon, OptimizerOptions o)
      : lr_(lr), decay_(decay), momentum_(momentum), epsilon_(epsilon), options_(o) {}
  std::string name() const override { return "RMSProp"; }

 protected:
  Operation ApplyDense(const Scope& s, const ops::Variable& var, const Output& grad,
                       ModelVariables* variables) override {
    auto [ms, mom] = Slots(var, variables);
    return ops::ApplyRMSProp(s, var, ms, mom, LearningRate(s, var, lr_), ScalarLike(var, decay_),
                             ScalarLike(var, momentum_), ScalarLike(var, epsilon_), grad,
                             {.use_locking = options_.use_locking});
  }
  Operation ApplySparse(const Scope& s, const ops::Variable& var, const IndexedSlices& grad,
                        ModelVariables* variables) override {
    auto [ms, mom] = Slots(var, variables);
    return ops::SparseApplyRMSProp(s, var, ms, mom, LearningRate(s, var, lr_),
                                   ScalarLike(var, decay_), ScalarLike(var, momentum_),
                                   ScalarLike(var, epsilon_), grad.values, grad.indices,
                                   {.use_locking = options_.use_locking});
  }

 private:
  // TensorFlow 1.x's names and initial values: "rms" ("<var>/RMSProp") starts at ones,
  // "momentum" ("<var>/RMSProp_1") at zeros.
  std::pair<ops::Variable, ops::Variable> Slots(const ops::Variable& var,
                                                ModelVariables* variables) {
    ops::Variable ms = Slot(var, "RMSProp", 1.0f, variables);
    ops::Variable mom = Slot(var, "RMSProp_1", 0.0f, variables);
    return {ms, mom};
  }

  float lr_, decay_, momentum_, epsilon_;
  OptimizerOptions options_;
};

}  // namespace

std::unique_ptr<Optimizer> GradientDescentOptimizer(float learning_rate, OptimizerOptions o) {
  return std::make_unique<GradientDescent>(learning_rate, o);
}
class Ftrl : public Optimizer {
 public:
  Ftrl(float lr, FtrlOptions ftrl, OptimizerOptions o) : lr_(lr), ftrl_(ftrl), options_(o) {}
  std::string name() const override { return "Ftrl"; }

 protected:
  Operation ApplyDense(const Scope& s, const ops::Variable& var, const Output& grad,
                       ModelVariables* variables) override {
    ops::Variable accum = Slot(var, "Ftrl", ftrl_.initial_accumulator_value, variables);
    ops::Variable linear = Slot(var, "Ftrl_1", 0.0f, variables);
    if (ftrl_.l2_shrinkage_regularization_strength > 0.0f) {
      return ops::ApplyFtrlV2(s, var, accum, linear, grad, LearningRate(s, var, lr_), L1(var),
                              L2(var), Shrinkage(var), Power(var), Options());
    }
    return ops::ApplyFtrl(s, var, accum, linear, grad, LearningRate(s, var, lr_), L1(var), L2(var),
                          Power(var), Options());
  }
  Operation ApplySparse(const Scope& s, const ops::Variable& var, const IndexedSlices& grad,
                        ModelVariables* variables) override {
    ops::Variable accum = Slot(var, "Ftrl", ftrl_.initial_accumulator_value, variables);
    ops::Variable linear = Slot(var, "Ftrl_1", 0.0f, variables);
    if (ftrl_.l2_shrinkage_regularization_strength > 0.0f) {
      return ops::SparseApplyFtrlV2(s, var, accum, linear, grad.values, grad.indices,
                                    LearningRate(s, var, lr_), L1(var), L2(var), Shrinkage(var),
                                    Power(var), Options());
    }
    return ops::SparseApplyFtrl(s, var, accum, linear, grad.values, grad.indices,
                                LearningRate(s, var, lr_), L1(var), L2(var), Power(var), Options());
  }

 private:
  Input L1(const ops::Variable& v) const { return ScalarLike(v, ftrl_.l1_regularization_strength); }
  Input L2(const ops::Variable& v) const { return ScalarLike(v, ftrl_.l2_regularization_strength); }
  Input Shrinkage(const ops::Variable& v) const {
    return ScalarLike(v, ftrl_.l2_shrinkage_regularization_strength);
  }
  Input Power(const ops::Variable& v) const { return ScalarLike(v, ftrl_.learning_rate_power); }
  ops::ApplyOptions Options() const { return {.use_locking = options_.use_locking}; }

  float lr_;
  FtrlOptions ftrl_;
  OptimizerOptions options_;
};

std::unique_ptr<Optimizer> MomentumOptimizer(float learning_rate, float momentum, bool use_nesterov,
                                             OptimizerOptions o) {
  return std::make_unique<Momentum>(learning_rate, momentum, use_nesterov, o);
}
std::unique_ptr<Optimizer> AdagradOptimizer(float learning_rate, float initial_accumulator_value,
                                            OptimizerOptions o) {
  return std::make_unique<Adagrad>(learning_rate, initial_accumulator_value, o);
}
std::unique_ptr<Optimizer> AdamOptimizer(float learning_rate, float beta1, float beta2,
                                         float epsilon, OptimizerOptions o) {
  return std::make_unique<Adam>(learning_rate, beta1, beta2, epsilon, o);
}
std::unique_ptr<Optimizer> RMSPropOptimizer(float learning_rate, float decay, float momentum,
                                            float epsilon, OptimizerOptions o) {
  return std::make_unique<RMSProp>(learning_rate, decay, momentum, epsilon, o);
}

std::unique_ptr<Optimizer> FtrlOptimizer(float learning_rate, FtrlOptions ftrl,
                                         OptimizerOptions o) {
  return std::make_unique<Ftrl>(learning_rate, ftrl, o);
}

}  // namespace tw::train
