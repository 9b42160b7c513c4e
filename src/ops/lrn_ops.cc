// Local response normalization over the depth of 4-D NHWC tensors: LRN and its gradient op
// LRNGrad, as TF defines them:
//   sqr_sum[n, h, w, d] = sum of input[n, h, w, d - r .. d + r]^2 (inside the depth),
//   output = input / (bias + alpha * sqr_sum)^beta.
// Definitions, CPU kernels, shape functions, the gradient and graph builders. Each pixel's
// channels are contiguous; the window sums are running sums along them (O(depth) a pixel).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/graph/shape_inference.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/nn_ops.h"

namespace tw {
namespace {

struct LrnParams {
  int64_t radius = 5;
  double bias = 1, alpha = 1, beta = 0.5;
};

// out[d] = sum of in[d - r .. d + r] inside [0, depth), for one pixel; `prefix` is scratch
// space kept across pixels (no allocation per pixel).
template <typename T>
void WindowSums(const T* in, int64_t depth, int64_t r, std::vector<double>* prefix,
                std::vector<double>* out) {
  prefix->resize(static_cast<size_t>(depth + 1));
  (*prefix)[0] = 0.0;
  for (int64_t d = 0; d < depth; ++d) (*prefix)[d + 1] = (*prefix)[d] + static_cast<double>(in[d]);
  out->resize(static_cast<size_t>(depth));
  for (int64_t d = 0; d < depth; ++d) {
    const int64_t lo = std::max<int64_t>(0, d - r), hi = std::min<int64_t>(depth, d + r + 1);
    (*out)[d] = (*prefix)[hi] - (*prefix)[lo];
  }
}

// norm^-beta, with TF's fast paths for the usual betas (0.5, 0.75, 1) instead of pow.
inline double NegativePower(double norm, double beta) {
  if (beta == 0.5) return 1.0 / std::sqrt(norm);
  if (beta == 0.75) {
    const double r = 1.0 / std::sqrt(norm);
    return r * std::sqrt(r);
  }
  if (beta == 1.0) return 1.0 / norm;
  return std::pow(norm, -beta);
}

class LrnKernel : public OpKernel {
 public:
  explicit LrnKernel(OpKernelConstruction* c) : OpKernel(c) {
    float bias = 1, alpha = 1, beta = 0.5f;
    c->SetStatus(c->GetAttr("depth_radius", &p_.radius));
    c->SetStatus(c->GetAttr("bias", &bias));
    c->SetStatus(c->GetAttr("alpha", &alpha));
    c->SetStatus(c->GetAttr("beta", &beta));
    p_.bias = bias;
    p_.alpha = alpha;
    p_.beta = beta;
    if (p_.radius < 0) {
      c->SetStatus(errors::InvalidArgument("node ", name(), ": depth_radius = ", p_.radius,
                                           " must be non-negative"));
    }
  }

 protected:
  Status Check4D(const Tensor& t, const char* what) const {
    if (t.rank() == 4) return OkStatus();
    return errors::InvalidArgument("node ", name(), ": ", what, " must be 4-dimensional, got ",
                                   t.shape().DebugString());
  }
  LrnParams p_;
};

TW_REGISTER_OP("LRN")
    .Input("input: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1")
    .Attr("alpha: float = 1")
    .Attr("beta: float = 0.5")
    .Attr("T: {float, double} = float")
    .Doc(
        "input / (bias + alpha * sum of squares over a depth window of radius "
        "depth_radius)^beta.");

class LrnOp : public LrnKernel {
 public:
  using LrnKernel::LrnKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_OP_REQUIRES_OK(ctx, Check4D(x, "input"));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    if (x.num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t depth = x.dim(3), rows = x.num_elements() / depth;
      const T* in = x.flat<T>().data();
      T* o = out->flat<T>().data();
      std::vector<T> sq(static_cast<size_t>(depth));
      std::vector<double> sums, prefix;
      for (int64_t r = 0; r < rows; ++r) {
        const T* px = in + r * depth;
        for (int64_t d = 0; d < depth; ++d) sq[d] = px[d] * px[d];
        WindowSums(sq.data(), depth, p_.radius, &prefix, &sums);
        for (int64_t d = 0; d < depth; ++d) {
          o[r * depth + d] =
              static_cast<T>(px[d] * NegativePower(p_.bias + p_.alpha * sums[d], p_.beta));
        }
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("LRN", "CPU", LrnOp);

TW_REGISTER_OP("LRNGrad")
    .Input("input_grads: T")
    .Input("input_image: T")
    .Input("output_image: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1")
    .Attr("alpha: float = 1")
    .Attr("beta: float = 0.5")
    .Attr("T: {float, double} = float")
    .Doc("LRN's gradient with respect to its input, from the gradient of its output.");

// With norm_i = bias + alpha * window sum of x^2 and y_i = x_i * norm_i^-beta:
//   dx_j = dy_j * norm_j^-beta
//          - 2 alpha beta x_j * sum over i within r of j of dy_i x_i norm_i^(-beta-1).
class LrnGradOp : public LrnKernel {
 public:
  using LrnKernel::LrnKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& y = ctx->input(2);
    TW_OP_REQUIRES_OK(ctx, Check4D(dy, "input_grads"));
    TW_OP_REQUIRES(ctx, dy.shape() == x.shape() && dy.shape() == y.shape(),
                   errors::InvalidArgument("node ", name(), ": input_grads, input_image, and ",
                                           "out_image should have the same shape, got ",
                                           dy.shape().DebugString(), ", ", x.shape().DebugString(),
                                           " and ", y.shape().DebugString()));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    if (x.num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t depth = x.dim(3), rows = x.num_elements() / depth;
      std::vector<double> sq(static_cast<size_t>(depth)), t(static_cast<size_t>(depth));
      std::vector<double> norm_pow(static_cast<size_t>(depth)), sums, tsums, prefix;
      for (int64_t r = 0; r < rows; ++r) {
        const T* px = x.flat<T>().data() + r * depth;
        const T* g = dy.flat<T>().data() + r * depth;
        for (int64_t d = 0; d < depth; ++d) sq[d] = static_cast<double>(px[d]) * px[d];
        WindowSums(sq.data(), depth, p_.radius, &prefix, &sums);
        for (int64_t d = 0; d < depth; ++d) {
          const double norm = p_.bias + p_.alpha * sums[d];
          norm_pow[d] = NegativePower(norm, p_.beta);
          t[d] = static_cast<double>(g[d]) * px[d] * norm_pow[d] / norm;
        }
        WindowSums(t.data(), depth, p_.radius, &prefix, &tsums);
        T* o = out->flat<T>().data() + r * depth;
        for (int64_t d = 0; d < depth; ++d) {
          o[d] = static_cast<T>(g[d] * norm_pow[d] - 2 * p_.alpha * p_.beta * px[d] * tsums[d]);
        }
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("LRNGrad", "CPU", LrnGradOp);

Status Rank4SameShape(ShapeContext* ctx) {
  const StaticShape& x = ctx->input(0);
  if (x && x->rank() != 4) {
    return ctx->Error(absl::StrCat("Shape must be rank 4 but is rank ", x->rank()));
  }
  ctx->set_output(0, x);
  return OkStatus();
}
TW_REGISTER_SHAPE_FN("LRN", Rank4SameShape);
TW_REGISTER_SHAPE_FN("LRNGrad", Rank4SameShape);

ops::LrnOptions OptionsOf(const ForwardOp& op, Status* status) {
  ops::LrnOptions o;
  *status = op.GetAttr("depth_radius", &o.depth_radius);
  if (status->ok()) *status = op.GetAttr("bias", &o.bias);
  if (status->ok()) *status = op.GetAttr("alpha", &o.alpha);
  if (status->ok()) *status = op.GetAttr("beta", &o.beta);
  return o;
}

Status LrnGradient(const Scope& scope, const ForwardOp& op,
                   const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  Status status;
  const ops::LrnOptions options = OptionsOf(op, &status);
  TW_RETURN_IF_ERROR(status);
  (*grad_inputs)[0].dense =
      ops::LRNGrad(scope, grad_outputs[0].dense, op.input(0), op.output(0), options);
  return OkStatus();
}
TW_REGISTER_GRADIENT("LRN", LrnGradient);

AttrMap LrnAttrs(const ops::LrnOptions& o) {
  return {{"depth_radius", MakeAttr(o.depth_radius)},
          {"bias", MakeAttr(o.bias)},
          {"alpha", MakeAttr(o.alpha)},
          {"beta", MakeAttr(o.beta)}};
}

}  // namespace

namespace ops {

Output LRN(const Scope& scope, Input input, const LrnOptions& options) {
  return scope.AddNodeOutput("LRN", {{input}}, LrnAttrs(options));
}

Output LRNGrad(const Scope& scope, Input input_grads, Input input_image, Input output_image,
               const LrnOptions& options) {
  return scope.AddNodeOutput("LRNGrad", {{input_grads}, {input_image}, {output_image}},
                             LrnAttrs(options));
}

}  // namespace ops
}  // namespace tw
