// Graph-building functions for more element-wise math: rounding, Sign, Reciprocal, Rsqrt,
// Cos, Sin, Erf, ClipByValue and L2Loss. Errors are recorded in the scope (see scope.h).
#ifndef TENSORWEAVE_OPS_CWISE_MATH_OPS_H_
#define TENSORWEAVE_OPS_CWISE_MATH_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

// Floor, Ceil (T: float, double); Round rounds halves to even (0.5 -> 0, 2.5 -> 2) and leaves
// integers (T: float, double, int32, int64). None has a gradient (as TF).
Output Floor(const Scope& scope, Input x);
Output Ceil(const Scope& scope, Input x);
Output Round(const Scope& scope, Input x);
// -1, 0 or 1 (NaN stays NaN); T: float, double, int32, int64. Gradient zero.
Output Sign(const Scope& scope, Input x);
// 1 / x, 1 / sqrt(x), cosine, sine and the Gauss error function (T: float, double).
Output Reciprocal(const Scope& scope, Input x);
Output Rsqrt(const Scope& scope, Input x);
Output Cos(const Scope& scope, Input x);
Output Sin(const Scope& scope, Input x);
Output Erf(const Scope& scope, Input x);
// dy * -0.5 * y^3: Rsqrt's gradient from its output y.
Output RsqrtGrad(const Scope& scope, Input y, Input dy);
// max(min(t, clip_value_max), clip_value_min), each bound a scalar or of t's shape
// (InvalidArgument otherwise).
Output ClipByValue(const Scope& scope, Input t, Input clip_value_min, Input clip_value_max);
// sum(t^2) / 2, a scalar (T: float, double).
Output L2Loss(const Scope& scope, Input t);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_CWISE_MATH_OPS_H_
