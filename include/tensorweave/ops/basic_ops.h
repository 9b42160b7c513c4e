// Graph-building functions for the basic ops: constants, placeholders, identity, shapes.
// Each returns the node's output (or Operation for ops without outputs); errors are
// recorded in the scope (see scope.h).
#ifndef TENSORWEAVE_OPS_BASIC_OPS_H_
#define TENSORWEAVE_OPS_BASIC_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

// A constant tensor.
Output Const(const Scope& scope, const Tensor& value);
// A value fed at run time; `shape` (if given) is checked against the fed tensor.
// -1 dimensions are unknown; leave `shape` empty for a scalar-or-anything placeholder.
struct PlaceholderOptions {
  std::optional<std::vector<int64_t>> shape;  // nullopt: any shape
};
Output Placeholder(const Scope& scope, DataType dtype, const PlaceholderOptions& options = {});
Output Identity(const Scope& scope, Input input);
// Does nothing; a target to hang control dependencies on.
Operation NoOp(const Scope& scope);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_BASIC_OPS_H_
