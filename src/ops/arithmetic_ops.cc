// Element-wise arithmetic beside math_ops.cc's: FloorDiv, FloorMod and Pow (NumPy
// broadcasting) and Abs. Definitions, CPU kernels, gradients and graph-building functions.
//
// Integer results wrap on overflow like Add and Neg do; integer FloorDiv and FloorMod reject
// a zero divisor and integer Pow a negative exponent, as TensorFlow's CPU kernels do.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/cwise.h"
#include "src/ops/cwise_binary.h"
#include "src/ops/math_grad.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

// ---- Binary ----

// Rounds the quotient toward -inf: 7 // -2 = -4, -7 // 2 = -4; floats floor(x / y).
struct FloorDivF : RejectsIntegerZeroDivisor {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Zero divisors were rejected by CheckY; min / -1 overflows (and traps on x86).
      if (b == -1) return WrapNeg(a);
      const T q = a / b;  // toward zero: one too high when the exact quotient is negative
      return a % b != 0 && ((a < 0) != (b < 0)) ? q - 1 : q;
    } else {
      return std::floor(a / b);
    }
  }
};

// The remainder of FloorDiv, x - floor(x / y) * y: it has the sign of the divisor
// (7 mod -2 = -1, -7 mod 2 = 1). Floats take fmod and move it by y (a zero divisor is NaN).
struct FloorModF : RejectsIntegerZeroDivisor {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    T r;
    if constexpr (std::is_integral_v<T>) {
      if (b == -1) return 0;  // min % -1 overflows (and traps on x86)
      r = a % b;
    } else {
      r = std::fmod(a, b);
    }
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  }
};

// x to the power y. Integers by repeated squaring, wrapping on overflow; 0^0 is 1.
struct PowF {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      T result = 1;  // b >= 0: negative exponents were rejected by CheckY
      for (T base = a; b > 0; b >>= 1) {
        if (b & 1) result = WrapMul(result, base);
        base = WrapMul(base, base);
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
  // TensorFlow's error for an integer result that would be a fraction.
  template <typename T>
  static Status CheckY(const OpKernel& kernel, absl::Span<const T> y) {
    if constexpr (std::is_integral_v<T>) {
      for (T e : y) {
        if (e < 0) {
          return errors::InvalidArgument("node ", kernel.name(),
                                         ": Integers to negative integer powers are not allowed");
        }
      }
    }
    return OkStatus();
  }
};

#define TW_NUMERIC "{float, double, int32, int64}"
TW_BINARY_OP("FloorDiv", FloorDivF, TW_NUMERIC, "T",
             "floor(x / y), with broadcasting; integers reject a zero divisor.");
TW_BINARY_OP("FloorMod", FloorModF, TW_NUMERIC, "T",
             "x - floor(x / y) * y (the sign of y), with broadcasting; integers reject a zero "
             "divisor.");
TW_BINARY_OP("Pow", PowF, TW_NUMERIC, "T",
             "x^y, with broadcasting; integers wrap and reject negative exponents.");

// ---- Unary ----

// |x|; the lowest integer wraps to itself, as with Neg.
struct AbsF {
  using Types = NumericTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    if constexpr (std::is_floating_point_v<T>) {
      y = x.abs();
    } else {
      for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = x[i] < 0 ? WrapNeg(x[i]) : x[i];
    }
  }
};
TW_UNARY_OP("Abs", AbsF, TW_NUMERIC, "|x|, element-wise; integers wrap.");
#undef TW_NUMERIC

// ---- Gradients, as TensorFlow 1.x's math_grad.py defines them ----

// Integer-valued, so no gradient flows through it (as in TensorFlow).
TW_NO_GRADIENT("FloorDiv");

// x mod y = x - floor(x / y) * y, with floor(x / y) piecewise constant: dx = grad and
// dy = grad * -floor(x / y).
Status FloorModGrad(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  BinaryGrad(
      scope, op, grad_inputs, [&] { return g; },
      [&] {
        return ops::Mul(scope, g, ops::Neg(scope, ops::FloorDiv(scope, op.input(0), op.input(1))));
      });
  return OkStatus();
}
TW_REGISTER_GRADIENT("FloorMod", FloorModGrad);

// z = x^y: dx = grad * y * x^(y - 1) and dy = grad * z * log(x), where log(x) is taken as 0
// for x <= 0 (no real value; this also avoids a false NaN at x = 0, where z is 0).
Status PowGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  const Output& x = op.input(0);
  const Output& y = op.input(1);
  BinaryGrad(
      scope, op, grad_inputs,
      [&] {
        const Output y_minus_one = ops::Sub(scope, y, FloatConst(scope, 1, y.type()));
        return ops::Mul(scope, ops::Mul(scope, g, y), ops::Pow(scope, x, y_minus_one));
      },
      [&] {
        const Output positive = ops::Greater(scope, x, FloatConst(scope, 0, x.type()));
        const Output log_x =
            ops::Select(scope, positive, ops::Log(scope, x), ops::ZerosLike(scope, x));
        return ops::Mul(scope, ops::Mul(scope, g, op.output(0)), log_x);
      });
  return OkStatus();
}
TW_REGISTER_GRADIENT("Pow", PowGrad);

// grad * sign(x), with sign(0) = 0; sign is (x > 0) - (x < 0), there being no Sign op.
Status AbsGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  const Output& x = op.input(0);
  const Output zero = FloatConst(scope, 0, x.type());
  const Output sign = ops::Sub(scope, ops::Cast(scope, ops::Greater(scope, x, zero), x.type()),
                               ops::Cast(scope, ops::Less(scope, x, zero), x.type()));
  (*grad_inputs)[0].dense = ops::Mul(scope, grad_outputs[0].dense, sign);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Abs", AbsGrad);

}  // namespace

namespace ops {

Output FloorDiv(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("FloorDiv", {{x}, {y}});
}
Output FloorMod(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("FloorMod", {{x}, {y}});
}
Output Pow(const Scope& scope, Input x, Input y) { return scope.AddNodeOutput("Pow", {{x}, {y}}); }
Output Abs(const Scope& scope, Input x) { return scope.AddNodeOutput("Abs", {{x}}); }

}  // namespace ops
}  // namespace tw
