// FusedBatchNormGrad (and TF's V2 and V3 names): FusedBatchNorm's gradients for x, scale
// and offset, in training form (reserve_space_1 and 2: the batch statistics the forward op
// saved) and inference form (the mean and variance it was given). Definitions and the CPU
// kernel; the shape functions, the gradient that builds these ops and the graph builders
// are in batch_norm_ops.cc. One pass for the per-channel sums, one for dx, over
// channels-last rows (NCHW transposed to NHWC and back).
#include <string>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/ops/batch_norm.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"

namespace tw {
namespace {

using batch_norm::BatchNormKernel;
using batch_norm::BnShape;
using batch_norm::ChannelsLast;
using batch_norm::CheckTypes;
using batch_norm::MakeBnShape;
using batch_norm::Transpose;
using batch_norm::Vec;

TW_REGISTER_OP("FusedBatchNormGrad")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: T")
    .Input("reserve_space_1: T")
    .Input("reserve_space_2: T")
    .Output("x_backprop: T")
    .Output("scale_backprop: T")
    .Output("offset_backprop: T")
    .Output("reserve_space_3: T")
    .Output("reserve_space_4: T")
    .Attr("T: {float, double}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: string = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc(
        "FusedBatchNorm's gradients for x, scale and offset; reserve_space_1 and 2 are the "
        "forward op's (training) or its given mean and variance (inference).");

TW_REGISTER_OP("FusedBatchNormGradV2")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: U")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_3: U")
    .Output("reserve_space_4: U")
    .Attr("T: {float, double}")
    .Attr("U: {float, double}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: string = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("FusedBatchNormV2's gradients.");

TW_REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: U")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {float, double}")
    .Attr("U: {float, double}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: string = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("FusedBatchNormV3's gradients (reserve_space_3 is unused on CPU).");

// With xc = x - mean and inv = rsqrt(var + eps), per channel:
//   offset_backprop = sum(dy), scale_backprop = sum(dy * xc) * inv;
//   training:  dx = scale * inv * (dy - sum(dy) / n - xc * sum(dy * xc) * inv^2 / n)
//   inference: dx = scale * inv * dy
// each dx an affine function of (dy, x) per channel: dx = k1 * dy + k2 * x + k3.
class FusedBatchNormGradOp : public BatchNormKernel {
 public:
  using BatchNormKernel::BatchNormKernel;
  void Compute(OpKernelContext* ctx) override {
    TW_OP_REQUIRES_OK(ctx, CheckTypes(*this));
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    TW_OP_REQUIRES(ctx, dy.rank() == 4,
                   errors::InvalidArgument("node ", name(), ": input must be 4-dimensional",
                                           dy.shape().DebugString()));
    TW_OP_REQUIRES(ctx, dy.shape() == x.shape(),
                   errors::InvalidArgument("node ", name(),
                                           ": x and y_backprop must have same shape, but x has "
                                           "shape ",
                                           x.shape().DebugString(), " and y_backprop has shape ",
                                           dy.shape().DebugString()));
    auto s = MakeBnShape(*this, nchw_, x,
                         {{"scale", &ctx->input(2)},
                          {"reserve_space_1", &ctx->input(3)},
                          {"reserve_space_2", &ctx->input(4)}});
    TW_OP_REQUIRES_OK(ctx, s.status());
    Tensor* out[5] = {};
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out[0]));
    for (int i = 1; i < 3; ++i) {
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({s->c}), &out[i]));
    }
    for (int i = 3; i < 5; ++i) {
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({0}), &out[i]));
    }
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Compute<T>(ctx, *s, out);
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }

 private:
  template <typename T>
  void Compute(OpKernelContext* ctx, const BnShape& s, Tensor* const* out) {
    std::vector<T> dy_copy, x_copy;
    const T* dy = ChannelsLast(s, ctx->input(0), &dy_copy);
    const T* x = ChannelsLast(s, ctx->input(1), &x_copy);
    const ConstArray<T> scale(ctx->input(2).flat<T>().data(), s.c);
    const ConstArray<T> mean(ctx->input(3).flat<T>().data(), s.c);
    const ConstArray<T> var(ctx->input(4).flat<T>().data(), s.c);
    const Vec<T> inv = (var + static_cast<T>(epsilon_)).rsqrt();
    Vec<T> sum_dy = Vec<T>::Zero(s.c), sum_dy_xc = Vec<T>::Zero(s.c);
    for (int64_t r = 0; r < s.rows(); ++r) {
      const ConstArray<T> g(dy + r * s.c, s.c);
      sum_dy += g;
      sum_dy_xc += g * (ConstArray<T>(x + r * s.c, s.c) - mean);
    }
    MutArray<T>(out[1]->flat<T>().data(), s.c) = sum_dy_xc * inv;
    MutArray<T>(out[2]->flat<T>().data(), s.c) = sum_dy;
    const Vec<T> k1 = scale * inv;
    Vec<T> k2 = Vec<T>::Zero(s.c), k3 = Vec<T>::Zero(s.c);
    if (is_training_ && s.rows() > 0) {
      const T n = static_cast<T>(s.rows());
      k2 = -k1 * sum_dy_xc * inv.square() / n;
      k3 = -k1 * sum_dy / n - k2 * mean;
    }
    ScaleShift2(s, dy, x, k1, k2, k3, out[0]->flat<T>().data());
  }

  // dx = k1 * dy + k2 * x + k3 per channel, written in dx's layout.
  template <typename T>
  static void ScaleShift2(const BnShape& s, const T* dy, const T* x, const Vec<T>& k1,
                          const Vec<T>& k2, const Vec<T>& k3, T* dx) {
    std::vector<T> tmp;
    T* out = dx;
    if (s.nchw) {
      tmp.resize(static_cast<size_t>(s.rows() * s.c));
      out = tmp.data();
    }
    for (int64_t r = 0; r < s.rows(); ++r) {
      MutArray<T>(out + r * s.c, s.c) =
          ConstArray<T>(dy + r * s.c, s.c) * k1 + ConstArray<T>(x + r * s.c, s.c) * k2 + k3;
    }
    if (s.nchw) Transpose(s, out, dx, /*to_nhwc=*/false);
  }
};
TW_REGISTER_KERNEL("FusedBatchNormGrad", "CPU", FusedBatchNormGradOp);
TW_REGISTER_KERNEL("FusedBatchNormGradV2", "CPU", FusedBatchNormGradOp);
TW_REGISTER_KERNEL("FusedBatchNormGradV3", "CPU", FusedBatchNormGradOp);

}  // namespace
}  // namespace tw
