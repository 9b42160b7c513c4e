// More element-wise math: Floor, Ceil, Round (half to even, as TF), Sign, Reciprocal, Rsqrt
// (with RsqrtGrad), Cos, Sin, Erf; ClipByValue (scalar or same-shape bounds); L2Loss (sum(t^2) /
// 2). Definitions, CPU kernels, gradients and graph-building functions
// (include/tensorweave/ops/cwise_math_ops.h).
#include "tensorweave/ops/cwise_math_ops.h"

#include <cmath>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/cwise.h"
#include "src/ops/math_grad.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "unsupported/Eigen/SpecialFunctions"

namespace tw {
namespace {

struct FloorF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.floor();
  }
};
struct CeilF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.ceil();
  }
};
// Halves round to the even neighbour (banker's rounding, TF's Round): 0.5 -> 0, 1.5 -> 2,
// -2.5 -> -2. nearbyint rounds in the default (to nearest, ties to even) mode; integers are
// already round.
struct RoundF {
  using Types = NumericTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    if constexpr (std::is_floating_point_v<T>) {
      for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = std::nearbyint(x[i]);
    } else {
      y = x;
    }
  }
};
// -1, 0 or 1; NaN stays NaN.
struct SignF {
  using Types = NumericTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      const T v = x[i];
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v)) {
          y[i] = v;
          continue;
        }
      }
      y[i] = static_cast<T>((v > T(0)) - (v < T(0)));
    }
  }
};
struct ReciprocalF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.inverse();
  }
};
struct RsqrtF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.rsqrt();
  }
};
struct CosF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.cos();
  }
};
struct SinF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.sin();
  }
};
struct ErfF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.erf();  // Eigen's (vectorized for float), as TF's kernel
  }
};

#define TW_FLOATS "{float, double}"
#define TW_NUMERIC "{float, double, int32, int64}"
TW_UNARY_OP("Floor", FloorF, TW_FLOATS, "The largest integer not greater than x, element-wise.");
TW_UNARY_OP("Ceil", CeilF, TW_FLOATS, "The smallest integer not less than x, element-wise.");
TW_UNARY_OP("Round", RoundF, TW_NUMERIC,
            "x rounded to the nearest integer, halves to the even one, element-wise.");
TW_UNARY_OP("Sign", SignF, TW_NUMERIC, "-1 where x < 0, 0 where x == 0, 1 where x > 0.");
TW_UNARY_OP("Reciprocal", ReciprocalF, TW_FLOATS, "1 / x, element-wise.");
TW_UNARY_OP("Rsqrt", RsqrtF, TW_FLOATS, "1 / sqrt(x), element-wise.");
TW_UNARY_OP("Cos", CosF, TW_FLOATS, "Cosine, element-wise.");
TW_UNARY_OP("Sin", SinF, TW_FLOATS, "Sine, element-wise.");
TW_UNARY_OP("Erf", ErfF, TW_FLOATS, "The Gauss error function, element-wise.");

// ---- RsqrtGrad ----
TW_REGISTER_OP("RsqrtGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: " TW_FLOATS)
    .Doc("dy * -0.5 * y^3: the gradient of y = Rsqrt(x) from y.");

class RsqrtGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    TW_OP_REQUIRES(ctx, y.shape() == dy.shape(),
                   errors::InvalidArgument("node ", name(), ": RsqrtGrad inputs must have one ",
                                           "shape, got y ", y.shape().DebugString(), " and dy ",
                                           dy.shape().DebugString()));
    Tensor* z = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, y.shape(), &z));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto n = static_cast<Eigen::Index>(y.num_elements());
      const ConstArray<T> ys(y.flat<T>().data(), n);
      MutArray<T>(z->flat<T>().data(), n) =
          ConstArray<T>(dy.flat<T>().data(), n) * T(-0.5) * ys * ys * ys;
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("RsqrtGrad", "CPU", RsqrtGradOp);

// ---- ClipByValue ----
TW_REGISTER_OP("ClipByValue")
    .Input("t: T")
    .Input("clip_value_min: T")
    .Input("clip_value_max: T")
    .Output("output: T")
    .Attr("T: " TW_NUMERIC)
    .Doc(
        "max(min(t, clip_value_max), clip_value_min) element-wise; each bound is a scalar or "
        "has t's shape.");

class ClipByValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const Tensor& lo = ctx->input(1);
    const Tensor& hi = ctx->input(2);
    auto fits = [&](const Tensor& b) { return b.rank() == 0 || b.shape() == t.shape(); };
    TW_OP_REQUIRES(ctx, fits(lo) && fits(hi),
                   errors::InvalidArgument(
                       "node ", name(), ": clip_value_min and clip_value_max must be either ",
                       "scalars or have the same shape as t: t shape ", t.shape().DebugString(),
                       ", clip_value_min shape ", lo.shape().DebugString(),
                       ", clip_value_max shape ", hi.shape().DebugString()));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, t.shape(), &out));
    const bool known = Dispatch(NumericTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto ts = t.flat<T>();
      const auto ls = lo.flat<T>();
      const auto hs = hi.flat<T>();
      auto os = out->flat<T>();
      // A scalar bound is read at index 0 for every element (step 0).
      const size_t ls_step = lo.rank() == 0 ? 0 : 1;
      const size_t hs_step = hi.rank() == 0 ? 0 : 1;
      for (size_t i = 0; i < os.size(); ++i) {
        const T upper = hs[i * hs_step];
        const T lower = ls[i * ls_step];
        const T v = ts[i] < upper ? ts[i] : upper;
        os[i] = v > lower ? v : lower;
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("ClipByValue", "CPU", ClipByValueOp);

// ---- L2Loss ----
TW_REGISTER_OP("L2Loss")
    .Input("t: T")
    .Output("output: T")
    .Attr("T: " TW_FLOATS)
    .Doc("sum(t^2) / 2 over every element: a scalar.");

class L2LossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto n = static_cast<Eigen::Index>(t.num_elements());
      out->flat<T>()[0] = ConstArray<T>(t.flat<T>().data(), n).square().sum() / T(2);
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("L2Loss", "CPU", L2LossOp);

// ---- Gradients ----

// Piecewise constant: TF gives them no gradient (None); Sign's is zeros.
TW_NO_GRADIENT("Floor");
TW_NO_GRADIENT("Ceil");
TW_NO_GRADIENT("Round");

Status SignGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>&,
                std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::ZerosLike(scope, op.input(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Sign", SignGrad);

// d(1/x) = -1/x^2 = -y^2.
Status ReciprocalGrad(const Scope& scope, const ForwardOp& op,
                      const std::vector<Gradient>& grad_outputs,
                      std::vector<Gradient>* grad_inputs) {
  const Output& y = op.output(0);
  (*grad_inputs)[0].dense =
      ops::Mul(scope, grad_outputs[0].dense, ops::Neg(scope, ops::Square(scope, y)));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Reciprocal", ReciprocalGrad);

Status RsqrtGradient(const Scope& scope, const ForwardOp& op,
                     const std::vector<Gradient>& grad_outputs,
                     std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::RsqrtGrad(scope, op.output(0), grad_outputs[0].dense);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Rsqrt", RsqrtGradient);

// RsqrtGrad(y, dy) = -0.5 * dy * y^3: in y, -1.5 * dy * y^2; in dy, RsqrtGrad again (as TF).
Status RsqrtGradGradient(const Scope& scope, const ForwardOp& op,
                         const std::vector<Gradient>& grad_outputs,
                         std::vector<Gradient>* grad_inputs) {
  const Output& grad = grad_outputs[0].dense;
  const Output& y = op.input(0);
  const Output& dy = op.input(1);
  if (op.needs_gradient(0)) {
    (*grad_inputs)[0].dense =
        ops::Mul(scope, ops::Mul(scope, FloatConst(scope, -1.5, y.type()), grad),
                 ops::Mul(scope, dy, ops::Square(scope, y)));
  }
  (*grad_inputs)[1].dense = ops::RsqrtGrad(scope, y, grad);
  return OkStatus();
}
TW_REGISTER_GRADIENT("RsqrtGrad", RsqrtGradGradient);

Status CosGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense =
      ops::Mul(scope, grad_outputs[0].dense, ops::Neg(scope, ops::Sin(scope, op.input(0))));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Cos", CosGrad);

Status SinGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Mul(scope, grad_outputs[0].dense, ops::Cos(scope, op.input(0)));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Sin", SinGrad);

// d erf(x) = 2 / sqrt(pi) * exp(-x^2).
Status ErfGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  const Output& x = op.input(0);
  const Output two_over_root_pi = FloatConst(scope, 2 / std::sqrt(M_PI), x.type());
  const Output slope =
      ops::Mul(scope, two_over_root_pi, ops::Exp(scope, ops::Neg(scope, ops::Square(scope, x))));
  (*grad_inputs)[0].dense = ops::Mul(scope, grad_outputs[0].dense, slope);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Erf", ErfGrad);

// As TF: t's gradient where t is within the bounds, each bound's where t passed it (summed
// to the bound's shape, a scalar bound's over every element).
Status ClipByValueGrad(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  const Output& t = op.input(0);
  const Output below = ops::Less(scope, t, op.input(1));
  const Output above = ops::Greater(scope, t, op.input(2));
  const Output zeros = ops::ZerosLike(scope, g);
  (*grad_inputs)[0].dense = ops::Select(scope, ops::LogicalOr(scope, below, above), zeros, g);
  const Output sg = ops::Shape(scope, g);
  for (int i = 1; i <= 2; ++i) {
    if (!op.needs_gradient(i)) continue;
    const Output picked = ops::Select(scope, i == 1 ? below : above, g, zeros);
    const Output si = ops::Shape(scope, op.input(i));
    const auto r = ops::BroadcastGradientArgs(scope, si, sg);
    (*grad_inputs)[i].dense = ops::Reshape(scope, ops::Sum(scope, picked, r.r0), si);
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("ClipByValue", ClipByValueGrad);

Status L2LossGrad(const Scope& scope, const ForwardOp& op,
                  const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Mul(scope, op.input(0), grad_outputs[0].dense);
  return OkStatus();
}
TW_REGISTER_GRADIENT("L2Loss", L2LossGrad);

#undef TW_FLOATS
#undef TW_NUMERIC

}  // namespace

namespace ops {

Output Floor(const Scope& scope, Input x) { return scope.AddNodeOutput("Floor", {{x}}); }
Output Ceil(const Scope& scope, Input x) { return scope.AddNodeOutput("Ceil", {{x}}); }
Output Round(const Scope& scope, Input x) { return scope.AddNodeOutput("Round", {{x}}); }
Output Sign(const Scope& scope, Input x) { return scope.AddNodeOutput("Sign", {{x}}); }
Output Reciprocal(const Scope& scope, Input x) { return scope.AddNodeOutput("Reciprocal", {{x}}); }
Output Rsqrt(const Scope& scope, Input x) { return scope.AddNodeOutput("Rsqrt", {{x}}); }
Output Cos(const Scope& scope, Input x) { return scope.AddNodeOutput("Cos", {{x}}); }
Output Sin(const Scope& scope, Input x) { return scope.AddNodeOutput("Sin", {{x}}); }
Output Erf(const Scope& scope, Input x) { return scope.AddNodeOutput("Erf", {{x}}); }
Output RsqrtGrad(const Scope& scope, Input y, Input dy) {
  return scope.AddNodeOutput("RsqrtGrad", {{y}, {dy}});
}
Output ClipByValue(const Scope& scope, Input t, Input clip_value_min, Input clip_value_max) {
  return scope.AddNodeOutput("ClipByValue", {{t}, {clip_value_min}, {clip_value_max}});
}
Output L2Loss(const Scope& scope, Input t) { return scope.AddNodeOutput("L2Loss", {{t}}); }

}  // namespace ops
}  // namespace tw
