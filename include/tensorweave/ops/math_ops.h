// Graph-building functions for math ops (element-wise with NumPy broadcasting, MatMul,
// reductions) and neural-network ops (activations, softmax, cross-entropy).
#ifndef TENSORWEAVE_OPS_MATH_OPS_H_
#define TENSORWEAVE_OPS_MATH_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_MATH_OPS_H_
