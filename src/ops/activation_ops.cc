// More activations (Elu, Selu, LeakyRelu, Relu6, Softplus, Softsign), each with its
// gradient op as TF 1.x defines it (EluGrad, SeluGrad, LeakyReluGrad, Relu6Grad, SoftplusGrad,
// SoftsignGrad), and SoftmaxCrossEntropyWithLogits (dense labels). Definitions, CPU kernels,
// gradients and graph-building functions (include/tensorweave/ops/activation_ops.h).
#include "tensorweave/ops/activation_ops.h"

#include <cmath>
#include <limits>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/cwise.h"
#include "src/ops/math_grad.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

// SELU's constants (Klambauer et al. 2017), as TF's kernel has them.
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

// A functor without attributes; functors with attributes (LeakyRelu's alpha) read them in
// their constructor and report a bad one through the construction's status.
struct NoAttrs {
  explicit NoAttrs(OpKernelConstruction*) {}
};

// y = f(x) element-wise for a float or double x. Functor: constructed from the
// OpKernelConstruction, with `template <typename T> void Apply(ConstArray<T> x, MutArray<T>
// y) const`.
template <typename Functor>
class ActivationOp : public OpKernel {
 public:
  explicit ActivationOp(OpKernelConstruction* c) : OpKernel(c), f_(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto n = static_cast<Eigen::Index>(x.num_elements());
      f_.template Apply<T>(ConstArray<T>(x.flat<T>().data(), n),
                           MutArray<T>(y->flat<T>().data(), n));
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }

 private:
  Functor f_;
};

// backprops = f(gradients, v) element-wise, where v (the forward op's features or outputs)
// has the shape of gradients; InvalidArgument naming the node otherwise. Functor as above
// with `Apply(ConstArray<T> g, ConstArray<T> v, MutArray<T> out) const`.
template <typename Functor>
class ActivationGradOp : public OpKernel {
 public:
  explicit ActivationGradOp(OpKernelConstruction* c) : OpKernel(c), f_(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& v = ctx->input(1);
    TW_OP_REQUIRES(
        ctx, g.shape() == v.shape(),
        errors::InvalidArgument("node ", name(), ": ", type_string(),
                                " inputs must have one shape, got gradients ",
                                g.shape().DebugString(), " and ", v.shape().DebugString()));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, g.shape(), &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto n = static_cast<Eigen::Index>(g.num_elements());
      f_.template Apply<T>(ConstArray<T>(g.flat<T>().data(), n),
                           ConstArray<T>(v.flat<T>().data(), n),
                           MutArray<T>(out->flat<T>().data(), n));
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }

 private:
  Functor f_;
};

// ---- Vectorized selects ----
// Eigen's select() does not vectorize in the Eigen this builds against; these binary functors
// do (compare and blend lanes) and keep a NaN x as TF's kernels do (comparisons are false).

// x < 0 ? v : x.
template <typename T>
struct NegativeSelectOp {
  T operator()(const T& x, const T& v) const { return x < T(0) ? v : x; }
  template <typename Packet>
  Packet packetOp(const Packet& x, const Packet& v) const {
    namespace ei = Eigen::internal;
    return ei::pselect(ei::pcmp_lt(x, ei::pzero(x)), v, x);
  }
};
// x > 0 ? x : v.
template <typename T>
struct PositiveSelectOp {
  T operator()(const T& x, const T& v) const { return x > T(0) ? x : v; }
  template <typename Packet>
  Packet packetOp(const Packet& x, const Packet& v) const {
    namespace ei = Eigen::internal;
    return ei::pselect(ei::pcmp_lt(ei::pzero(x), x), x, v);
  }
};

// The gradient ops' blend, from (v, g): g * (a * v + b) where v < 0 (or v > 0 when
// `positive`), else g * c. EluGrad: a = b = c = 1; SeluGrad: a = 1, b = scale * alpha,
// c = scale; LeakyReluGrad: positive, a = 0, b = 1, c = alpha. NaN v takes the else branch.
template <typename T>
struct GradBlendOp {
  bool positive;
  T a, b, c;
  T operator()(const T& v, const T& g) const {
    return (positive ? v > T(0) : v < T(0)) ? g * (a * v + b) : g * c;
  }
  template <typename Packet>
  Packet packetOp(const Packet& v, const Packet& g) const {
    namespace ei = Eigen::internal;
    const Packet mask = positive ? ei::pcmp_lt(ei::pzero(v), v) : ei::pcmp_lt(v, ei::pzero(v));
    const Packet in =
        ei::pmul(g, ei::padd(ei::pmul(ei::pset1<Packet>(a), v), ei::pset1<Packet>(b)));
    return ei::pselect(mask, in, ei::pmul(g, ei::pset1<Packet>(c)));
  }
};
// Relu6Grad from (x, g): g where 0 < x < 6, else 0.
template <typename T>
struct Relu6GradOp {
  T operator()(const T& x, const T& g) const { return x > T(0) && x < T(6) ? g : T(0); }
  template <typename Packet>
  Packet packetOp(const Packet& x, const Packet& g) const {
    namespace ei = Eigen::internal;
    const Packet inside =
        ei::pand(ei::pcmp_lt(ei::pzero(x), x), ei::pcmp_lt(x, ei::pset1<Packet>(T(6))));
    return ei::pand(inside, g);
  }
};

}  // namespace
}  // namespace tw

template <typename T>
struct Eigen::internal::functor_traits<tw::NegativeSelectOp<T>> {
  enum { Cost = 2 * NumTraits<T>::AddCost, PacketAccess = packet_traits<T>::HasCmp };
};
template <typename T>
struct Eigen::internal::functor_traits<tw::PositiveSelectOp<T>> {
  enum { Cost = 2 * NumTraits<T>::AddCost, PacketAccess = packet_traits<T>::HasCmp };
};
template <typename T>
struct Eigen::internal::functor_traits<tw::GradBlendOp<T>> {
  enum { Cost = 4 * NumTraits<T>::MulCost, PacketAccess = packet_traits<T>::HasCmp };
};
template <typename T>
struct Eigen::internal::functor_traits<tw::Relu6GradOp<T>> {
  enum { Cost = 3 * NumTraits<T>::AddCost, PacketAccess = packet_traits<T>::HasCmp };
};

namespace tw {
namespace {

// ---- Forward functors ----

struct EluF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> x, MutArray<T> y) const {
    y = x.binaryExpr(x.exp() - T(1), NegativeSelectOp<T>());
  }
};
struct SeluF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> x, MutArray<T> y) const {
    const T scale(kSeluScale), alpha(kSeluAlpha);
    y = scale * x.binaryExpr(alpha * (x.exp() - T(1)), NegativeSelectOp<T>());
  }
};
// Reads the attr alpha (TF: float = 0.2).
struct LeakyAlpha {
  explicit LeakyAlpha(OpKernelConstruction* c) { c->SetStatus(c->GetAttr("alpha", &alpha)); }
  float alpha = 0.2f;
};
struct LeakyReluF : LeakyAlpha {
  using LeakyAlpha::LeakyAlpha;
  template <typename T>
  void Apply(ConstArray<T> x, MutArray<T> y) const {
    y = x.binaryExpr(x * T(alpha), PositiveSelectOp<T>());
  }
};
struct Relu6F : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> x, MutArray<T> y) const {
    y = x.max(T(0)).min(T(6));
  }
};
// log(1 + exp(x)) as TF computes it: x itself where exp(x) would swamp the 1, exp(x) where
// log1p(exp(x)) == exp(x) to the type's precision, log1p(exp(x)) between. exp and log1p run
// vectorized over the whole array (one temporary); the branches only pick lanes.
struct SoftplusF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> x, MutArray<T> y) const {
    const T threshold = std::log(std::numeric_limits<T>::epsilon()) + T(2);
    const Eigen::Array<T, Eigen::Dynamic, 1> e = x.exp();
    y = e.log1p();
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      if (x[i] > -threshold) {
        y[i] = x[i];
      } else if (x[i] < threshold) {
        y[i] = e[i];
      }
    }
  }
};
struct SoftsignF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> x, MutArray<T> y) const {
    y = x / (x.abs() + T(1));
  }
};

// ---- Gradient functors: (gradients, features or outputs) ----

// From the outputs y: g where y >= 0, g * (y + 1) (= g * exp(x)) where y < 0.
struct EluGradF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> g, ConstArray<T> y, MutArray<T> out) const {
    out = y.binaryExpr(g, GradBlendOp<T>{false, T(1), T(1), T(1)});
  }
};
// From the outputs y: g * scale where y >= 0, g * (y + scale * alpha) where y < 0.
struct SeluGradF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> g, ConstArray<T> y, MutArray<T> out) const {
    const T scale(kSeluScale), scale_alpha(kSeluScale * kSeluAlpha);
    out = y.binaryExpr(g, GradBlendOp<T>{false, T(1), scale_alpha, scale});
  }
};
// From the features x: g where x > 0, g * alpha elsewhere.
struct LeakyReluGradF : LeakyAlpha {
  using LeakyAlpha::LeakyAlpha;
  template <typename T>
  void Apply(ConstArray<T> g, ConstArray<T> x, MutArray<T> out) const {
    out = x.binaryExpr(g, GradBlendOp<T>{true, T(0), T(1), T(alpha)});
  }
};
// g where 0 < x < 6, else 0 (x may be Relu6's input or output).
struct Relu6GradF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> g, ConstArray<T> x, MutArray<T> out) const {
    out = x.binaryExpr(g, Relu6GradOp<T>());
  }
};
// g * sigmoid(x).
struct SoftplusGradF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> g, ConstArray<T> x, MutArray<T> out) const {
    out = g * x.logistic();
  }
};
// g / (1 + |x|)^2.
struct SoftsignGradF : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename T>
  void Apply(ConstArray<T> g, ConstArray<T> x, MutArray<T> out) const {
    out = g / (x.abs() + T(1)).square();
  }
};

#define TW_ACTIVATION(NAME, FUNCTOR, DOC) \
  TW_REGISTER_OP(NAME)                    \
      .Input("features: T")               \
      .Output("activations: T")           \
      .Attr("T: {float, double}")         \
      .Doc(DOC);                          \
  TW_REGISTER_KERNEL(NAME, "CPU", ActivationOp<FUNCTOR>)

#define TW_ACTIVATION_GRAD(NAME, SECOND, FUNCTOR, DOC) \
  TW_REGISTER_OP(NAME)                                 \
      .Input("gradients: T")                           \
      .Input(SECOND ": T")                             \
      .Output("backprops: T")                          \
      .Attr("T: {float, double}")                      \
      .Doc(DOC);                                       \
  TW_REGISTER_KERNEL(NAME, "CPU", ActivationGradOp<FUNCTOR>)

TW_ACTIVATION("Elu", EluF, "exp(features) - 1 where features < 0, else features.");
TW_ACTIVATION("Selu", SeluF,
              "scale * alpha * (exp(features) - 1) where features < 0, else scale * features "
              "(scale 1.0507..., alpha 1.6732...).");
TW_ACTIVATION("Relu6", Relu6F, "min(max(features, 0), 6), element-wise.");
TW_ACTIVATION("Softplus", SoftplusF, "log(exp(features) + 1), computed stably.");
TW_ACTIVATION("Softsign", SoftsignF, "features / (abs(features) + 1), element-wise.");

TW_REGISTER_OP("LeakyRelu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("alpha: float = 0.2")
    .Attr("T: {float, double}")
    .Doc("features where features > 0, else alpha * features.");
TW_REGISTER_KERNEL("LeakyRelu", "CPU", ActivationOp<LeakyReluF>);

TW_ACTIVATION_GRAD("EluGrad", "outputs", EluGradF,
                   "gradients where outputs >= 0, else gradients * (outputs + 1).");
TW_ACTIVATION_GRAD("SeluGrad", "outputs", SeluGradF,
                   "gradients * scale where outputs >= 0, else gradients * (outputs + scale * "
                   "alpha).");
TW_ACTIVATION_GRAD("Relu6Grad", "features", Relu6GradF,
                   "gradients where 0 < features < 6, else 0.");
TW_ACTIVATION_GRAD("SoftplusGrad", "features", SoftplusGradF, "gradients / (1 + exp(-features)).");
TW_ACTIVATION_GRAD("SoftsignGrad", "features", SoftsignGradF, "gradients / (1 + abs(features))^2.");

TW_REGISTER_OP("LeakyReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("alpha: float = 0.2")
    .Attr("T: {float, double}")
    .Doc("gradients where features > 0, else alpha * gradients.");
TW_REGISTER_KERNEL("LeakyReluGrad", "CPU", ActivationGradOp<LeakyReluGradF>);

#undef TW_ACTIVATION
#undef TW_ACTIVATION_GRAD

// ---- Gradients ----

// A scalar v of x's (floating-point) type.
Output FloatConstLike(const Scope& scope, double v, const Output& x) {
  return FloatConst(scope, v, x.type());
}

Status EluGradient(const Scope& scope, const ForwardOp& op,
                   const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::EluGrad(scope, grad_outputs[0].dense, op.output(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Elu", EluGradient);

Status SeluGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::SeluGrad(scope, grad_outputs[0].dense, op.output(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Selu", SeluGradient);

Status LeakyReluGradient(const Scope& scope, const ForwardOp& op,
                         const std::vector<Gradient>& grad_outputs,
                         std::vector<Gradient>* grad_inputs) {
  float alpha = 0.2f;
  TW_RETURN_IF_ERROR(op.GetAttr("alpha", &alpha));
  (*grad_inputs)[0].dense =
      ops::LeakyReluGrad(scope, grad_outputs[0].dense, op.input(0), {.alpha = alpha});
  return OkStatus();
}
TW_REGISTER_GRADIENT("LeakyRelu", LeakyReluGradient);

// As TF, from the output (0 < y < 6 exactly where 0 < x < 6).
Status Relu6Gradient(const Scope& scope, const ForwardOp& op,
                     const std::vector<Gradient>& grad_outputs,
                     std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Relu6Grad(scope, grad_outputs[0].dense, op.output(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Relu6", Relu6Gradient);

Status SoftplusGradient(const Scope& scope, const ForwardOp& op,
                        const std::vector<Gradient>& grad_outputs,
                        std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::SoftplusGrad(scope, grad_outputs[0].dense, op.input(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Softplus", SoftplusGradient);

Status SoftsignGradient(const Scope& scope, const ForwardOp& op,
                        const std::vector<Gradient>& grad_outputs,
                        std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::SoftsignGrad(scope, grad_outputs[0].dense, op.input(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Softsign", SoftsignGradient);

// ---- Gradients of the gradient ops (second derivatives), as TF ----

// EluGrad(g, y) and SeluGrad(g, y): linear in g; in y, slope g where y < 0 (Elu: g * (y + 1),
// Selu: g * (y + scale * alpha)) and 0 elsewhere.
template <Output (*kGradOp)(const Scope&, Input, Input)>
Status ExpGradGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  const Output& grad = grad_outputs[0].dense;
  const Output& y = op.input(1);
  (*grad_inputs)[0].dense = kGradOp(scope, grad, y);
  if (op.needs_gradient(1)) {
    const Output negative = ops::Less(scope, y, FloatConstLike(scope, 0, y));
    (*grad_inputs)[1].dense =
        ops::Select(scope, negative, ops::Mul(scope, grad, op.input(0)), ops::ZerosLike(scope, y));
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("EluGrad", ExpGradGradient<&ops::EluGrad>);
TW_REGISTER_GRADIENT("SeluGrad", ExpGradGradient<&ops::SeluGrad>);

// Relu6Grad and LeakyReluGrad: linear in the gradients, piecewise constant in the features.
Status Relu6GradGradient(const Scope& scope, const ForwardOp& op,
                         const std::vector<Gradient>& grad_outputs,
                         std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Relu6Grad(scope, grad_outputs[0].dense, op.input(1));
  (*grad_inputs)[1].dense = ops::ZerosLike(scope, op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Relu6Grad", Relu6GradGradient);

Status LeakyReluGradGradient(const Scope& scope, const ForwardOp& op,
                             const std::vector<Gradient>& grad_outputs,
                             std::vector<Gradient>* grad_inputs) {
  float alpha = 0.2f;
  TW_RETURN_IF_ERROR(op.GetAttr("alpha", &alpha));
  (*grad_inputs)[0].dense =
      ops::LeakyReluGrad(scope, grad_outputs[0].dense, op.input(1), {.alpha = alpha});
  (*grad_inputs)[1].dense = ops::ZerosLike(scope, op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("LeakyReluGrad", LeakyReluGradGradient);

// SoftplusGrad(dy, x) = dy * sigmoid(x): in dy, SoftplusGrad again; in x,
// dy * sigmoid'(x) = dy / (exp(-x) + 2 + exp(x)).
Status SoftplusGradGradient(const Scope& scope, const ForwardOp& op,
                            const std::vector<Gradient>& grad_outputs,
                            std::vector<Gradient>* grad_inputs) {
  const Output& grad = grad_outputs[0].dense;
  const Output& dy = op.input(0);
  const Output& x = op.input(1);
  (*grad_inputs)[0].dense = ops::SoftplusGrad(scope, grad, x);
  if (op.needs_gradient(1)) {
    const Output denom =
        ops::Add(scope, ops::Add(scope, ops::Exp(scope, ops::Neg(scope, x)), ops::Exp(scope, x)),
                 FloatConstLike(scope, 2, x));
    (*grad_inputs)[1].dense = ops::Div(scope, ops::Mul(scope, grad, dy), denom);
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("SoftplusGrad", SoftplusGradGradient);

}  // namespace

namespace ops {

Output Elu(const Scope& scope, Input features) { return scope.AddNodeOutput("Elu", {{features}}); }
Output Selu(const Scope& scope, Input features) {
  return scope.AddNodeOutput("Selu", {{features}});
}
Output LeakyRelu(const Scope& scope, Input features, const LeakyReluOptions& options) {
  return scope.AddNodeOutput("LeakyRelu", {{features}}, {{"alpha", MakeAttr(options.alpha)}});
}
Output Relu6(const Scope& scope, Input features) {
  return scope.AddNodeOutput("Relu6", {{features}});
}
Output Softplus(const Scope& scope, Input features) {
  return scope.AddNodeOutput("Softplus", {{features}});
}
Output Softsign(const Scope& scope, Input features) {
  return scope.AddNodeOutput("Softsign", {{features}});
}

Output EluGrad(const Scope& scope, Input gradients, Input outputs) {
  return scope.AddNodeOutput("EluGrad", {{gradients}, {outputs}});
}
Output SeluGrad(const Scope& scope, Input gradients, Input outputs) {
  return scope.AddNodeOutput("SeluGrad", {{gradients}, {outputs}});
}
Output LeakyReluGrad(const Scope& scope, Input gradients, Input features,
                     const LeakyReluOptions& options) {
  return scope.AddNodeOutput("LeakyReluGrad", {{gradients}, {features}},
                             {{"alpha", MakeAttr(options.alpha)}});
}
Output Relu6Grad(const Scope& scope, Input gradients, Input features) {
  return scope.AddNodeOutput("Relu6Grad", {{gradients}, {features}});
}
Output SoftplusGrad(const Scope& scope, Input gradients, Input features) {
  return scope.AddNodeOutput("SoftplusGrad", {{gradients}, {features}});
}
Output SoftsignGrad(const Scope& scope, Input gradients, Input features) {
  return scope.AddNodeOutput("SoftsignGrad", {{gradients}, {features}});
}

}  // namespace ops
}  // namespace tw
