// Graph-building functions for the activations beyond Relu, Sigmoid and Tanh (math_ops.h):
// Elu, Selu, LeakyRelu, Relu6, Softplus, Softsign (T: float, double), and their gradient ops
// as TF 1.x defines them; SoftmaxCrossEntropyWithLogits with dense labels. Errors are recorded in
// the scope (see scope.h).
#ifndef TENSORWEAVE_OPS_ACTIVATION_OPS_H_
#define TENSORWEAVE_OPS_ACTIVATION_OPS_H_

#include "tensorweave/ops/math_ops.h"
#include "tensorweave/scope.h"

namespace tw::ops {

// exp(x) - 1 where x < 0, else x.
Output Elu(const Scope& scope, Input features);
// scale * Elu(x) with Elu's negative branch scaled by alpha (scale 1.0507..., alpha 1.6732...).
Output Selu(const Scope& scope, Input features);

struct LeakyReluOptions {
  float alpha = 0.2f;
};
// x where x > 0, else alpha * x.
Output LeakyRelu(const Scope& scope, Input features, const LeakyReluOptions& options = {});
// min(max(x, 0), 6).
Output Relu6(const Scope& scope, Input features);
// log(exp(x) + 1), computed without overflow.
Output Softplus(const Scope& scope, Input features);
// x / (|x| + 1).
Output Softsign(const Scope& scope, Input features);

// The gradient ops: `gradients` and the second input share one shape.
// EluGrad and SeluGrad take the forward op's outputs; the others its features (Relu6Grad
// also accepts its outputs).
Output EluGrad(const Scope& scope, Input gradients, Input outputs);
Output SeluGrad(const Scope& scope, Input gradients, Input outputs);
Output LeakyReluGrad(const Scope& scope, Input gradients, Input features,
                     const LeakyReluOptions& options = {});
Output Relu6Grad(const Scope& scope, Input gradients, Input features);
Output SoftplusGrad(const Scope& scope, Input gradients, Input features);
Output SoftsignGrad(const Scope& scope, Input gradients, Input features);

// Per-example -sum(labels * log_softmax(features)) for features and labels [batch, classes]
// of one shape (T: float, double): loss [batch] and backprop = softmax(features) - labels.
SoftmaxCrossEntropyOutputs SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                         Input labels);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_ACTIVATION_OPS_H_
