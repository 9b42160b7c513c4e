// The model's variables, with their initializers and checkpoint names, in one collection
// that optimizers add their slots to and that savers and monitored sessions read.
//
//   tw::train::ModelVariables vars;
//   auto w = vars.Add(model, "w", tw::DT_FLOAT, {784, 256},
//                     tw::ops::Mul(model, tw::ops::TruncatedNormal(model, {784, 256}), 0.05f));
//   auto step = tw::train::CreateGlobalStep(model, &vars);
#ifndef TENSORWEAVE_TRAIN_VARIABLES_H_
#define TENSORWEAVE_TRAIN_VARIABLES_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/ops/state_ops.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"

namespace tw::train {

// One variable of the model. A part of a partitioned variable holds rows
// [row_offset, row_offset + var.shape[0]) of a variable of shape `full_shape` called `name`.
struct ModelVariable {
  std::string name;  // the checkpoint name: the variable's node name
  ops::Variable var;
  Operation initializer;
  bool trainable = true;
  std::vector<int64_t> full_shape;  // empty unless a part of a partitioned variable
  int64_t row_offset = 0;
  // An optimizer's slot: the node name of the variable it serves and the slot's name as the
  // optimizer asked for it ("Adam", "Adam_1"), before the graph made the node's name unique
  // (a second Adam's slot of "w" is the node "w/Adam_2"). Empty for other variables.
  std::string slot_of;
  std::string slot_name;
};

// A variable split along dimension 0 into parts spread over devices (ps tasks), named
// "<name>/part_<i>", used as one variable: Value() for the whole, Lookup() for rows.
struct PartitionedVariable {
  std::string name;
  DataType dtype = DT_INVALID;
  std::vector<int64_t> shape;
  std::vector<ops::Variable> parts;
  std::vector<int64_t> row_offsets;  // of each part

  // The whole variable: the parts read and concatenated (on the worker).
  Output Value(const Scope& scope) const;
  // Which part holds row `id` of the whole, as TensorFlow's embedding_lookup names them:
  // kDiv, contiguous rows (the parts as made, and as checkpoints slice them); kMod, part
  // id % parts.size() at its row id / parts.size() (TensorFlow's default, which assumes
  // parts whose sizes differ by at most one, largest first, as AddPartitioned makes them).
  enum class Strategy { kDiv, kMod };
  // Rows `ids` (int32 or int64 vector) of the whole variable, each gathered on the ps task
  // holding it, so only the requested rows cross the network. Gradients flow sparsely to
  // the parts.
  Output Lookup(const Scope& scope, Input ids, Strategy strategy = Strategy::kDiv) const;
};

// Not thread-safe, like the Scope the model is built with.
class ModelVariables {
 public:
  // Creates the variable and its initializer (Assign of `initial_value`).
  ops::Variable Add(const Scope& scope, std::string_view name, DataType dtype,
                    std::vector<int64_t> shape, Input initial_value, bool trainable = true);
  // Creates `num_parts` variables splitting `shape` along dimension 0 (the first
  // shape[0] % num_parts parts get one more row); `initial_value` builds each part's initial
  // value for its shape. InvalidArgument (also recorded in the scope) when num_parts is not
  // in [1, shape[0]].
  StatusOr<PartitionedVariable> AddPartitioned(
      const Scope& scope, std::string_view name, DataType dtype, std::vector<int64_t> shape,
      int num_parts, const std::function<Output(const Scope&, std::vector<int64_t>)>& initial_value,
      bool trainable = true);
  // Adds a variable made elsewhere (an optimizer's slot).
  void Register(ModelVariable variable) { variables_.push_back(std::move(variable)); }

  const std::vector<ModelVariable>& all() const { return variables_; }
  // The variable added last (Add, Register), to adjust its checkpoint name or slice.
  // Precondition: not empty.
  ModelVariable& mutable_last() { return variables_.back(); }
  std::vector<ops::Variable> trainable() const;

  // One op running every initializer.
  Operation InitOp(const Scope& scope) const;
  // A bool vector, one entry per variable of all(): whether it is initialized.
  Output InitializedOp(const Scope& scope) const;

 private:
  std::vector<ModelVariable> variables_;
};

// The int64 scalar counting training steps, called "global_step", initialized to 0 and not
// trainable; placed on /job:ps/task:0 when the cluster has ps tasks (scope's device setter),
// else where the scope puts it.
ops::Variable CreateGlobalStep(const Scope& scope, ModelVariables* variables);

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_VARIABLES_H_
