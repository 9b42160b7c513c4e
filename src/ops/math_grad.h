// Gradient pieces shared by the math family's files (math_ops.cc defines them; the
// gradients of arithmetic_ops.cc use them too).
#ifndef TENSORWEAVE_SRC_OPS_MATH_GRAD_H_
#define TENSORWEAVE_SRC_OPS_MATH_GRAD_H_

#include <vector>

#include "src/graph/gradient_registry.h"
#include "tensorweave/gradient.h"
#include "tensorweave/scope.h"

namespace tw {

// A scalar constant of a floating-point `dtype` (DT_FLOAT, else double).
Output FloatConst(const Scope& scope, double v, DataType dtype);

// Sets (*grad_inputs)[0] and [1] to gx and gy (each the shape of the broadcast output)
// summed back to the shapes of the op's inputs 0 and 1. Invalid gx/gy are skipped.
// Every shape is known only when the graph runs, so this reduces with
// BroadcastGradientArgs, Sum and Reshape; Sum over no axes and Reshape share the buffer,
// so inputs of the output's shape pay only for the nodes.
void ReduceToInputShapes(const Scope& scope, const ForwardOp& op, const Output& gx,
                         const Output& gy, std::vector<Gradient>* grad_inputs);

// The gradient of a broadcasting binary op: builds gx (by calling `gx()`) only when input 0
// needs it and gy only when input 1 does, then reduces them as ReduceToInputShapes does.
template <typename GxFn, typename GyFn>
void BinaryGrad(const Scope& scope, const ForwardOp& op, std::vector<Gradient>* grad_inputs,
                GxFn gx, GyFn gy) {
  ReduceToInputShapes(scope, op, op.needs_gradient(0) ? gx() : Output(),
                      op.needs_gradient(1) ? gy() : Output(), grad_inputs);
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_MATH_GRAD_H_
