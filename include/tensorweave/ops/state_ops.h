// Graph-building functions for variables: state that lives on one device and is shared by
// name by every graph and session that places a variable of that name there.
#ifndef TENSORWEAVE_OPS_STATE_OPS_H_
#define TENSORWEAVE_OPS_STATE_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

struct VariableOptions {
  std::string container;    // "" is the device's job name
  std::string shared_name;  // "" uses the node name
};

// A variable: `handle` names it (a DT_RESOURCE tensor); ops that use it run where it lives.
struct Variable {
  Output handle;
  DataType dtype = DT_INVALID;
  std::vector<int64_t> shape;
  operator Input() const { return handle; }  // NOLINT: use a Variable where a handle goes
  Operation op() const { return handle.op(); }
};

// The node is named `name` (made unique if taken), and so is the variable unless
// options.shared_name says otherwise.
Variable MakeVariable(const Scope& scope, std::string_view name, DataType dtype,
                      std::vector<int64_t> shape, const VariableOptions& options = {});

struct AssignOptions {
  // Updates of one variable are always serialized, so concurrent AssignAdds are exact; the
  // flag is kept for compatibility with TensorFlow graphs.
  bool use_locking = true;
  bool validate_shape = true;  // false lets Assign change the variable's shape
};
// Each returns the variable's new value.
Output Assign(const Scope& scope, const Variable& var, Input value, const AssignOptions& = {});
Output AssignAdd(const Scope& scope, const Variable& var, Input value, const AssignOptions& = {});
Output AssignSub(const Scope& scope, const Variable& var, Input value, const AssignOptions& = {});
// The variable's current value (a snapshot); FailedPrecondition when uninitialized.
Output ReadVariable(const Scope& scope, const Variable& var);
Output IsVariableInitialized(const Scope& scope, const Variable& var);
// Rows of the variable picked by `indices` (int32 or int64), read on the variable's device:
// shape indices.shape + shape[1:]. Its gradient with respect to the handle is sparse.
Output ResourceGather(const Scope& scope, const Variable& var, Input indices);
// The shape of the variable's current value, a vector of `out_type` (int32 or int64).
Output VariableShape(const Scope& scope, const Variable& var, DataType out_type = DT_INT32);
// Adds `updates` to (or writes them into) the rows `indices` of the variable.
Output ScatterAdd(const Scope& scope, const Variable& var, Input indices, Input updates);
Output ScatterUpdate(const Scope& scope, const Variable& var, Input indices, Input updates);
// The rows `indices` of the variable become row - update, row * update, row / update (an
// integer zero divisor is InvalidArgument), max(row, update), min(row, update); a repeated
// index applies each of its updates. Each returns the variable's new value.
Output ScatterSub(const Scope& scope, const Variable& var, Input indices, Input updates);
Output ScatterMul(const Scope& scope, const Variable& var, Input indices, Input updates);
Output ScatterDiv(const Scope& scope, const Variable& var, Input indices, Input updates);
Output ScatterMax(const Scope& scope, const Variable& var, Input indices, Input updates);
Output ScatterMin(const Scope& scope, const Variable& var, Input indices, Input updates);
// One node that runs after all of `ops` (e.g. every variable's initializer).
Operation Group(const Scope& scope, const std::vector<Operation>& ops);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_STATE_OPS_H_
