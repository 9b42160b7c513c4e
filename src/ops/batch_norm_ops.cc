// Batch normalization over 4-D images: FusedBatchNorm (and TF's V2 and V3 names, V3 with
// its extra reserve_space_3 output), in training form (the statistics of the batch) and
// inference form (the given mean and variance). Definitions, the CPU kernel, the shape
// functions of FusedBatchNorm and FusedBatchNormGrad (batch_norm_grad_ops.cc), the
// gradient and graph builders.
//
// As TF's CPU kernels: the statistics are over N, H and W for each channel; in training
// batch_variance is Bessel-corrected (n / (n - 1)) while reserve_space_2, which the
// gradient reads, is the biased variance. NCHW is computed by transposing to NHWC and back.
// The kernels work on channels-last rows [N*H*W, C]: a pass for the sums, a pass for the
// centred squares, and y = x * a + b with per-channel a and b; no per-element division.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/graph/shape_inference.h"
#include "src/ops/batch_norm.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/nn_ops.h"

namespace tw {
namespace batch_norm {

Status ReadFormat(const OpKernel& k, std::string* format) {
  TW_RETURN_IF_ERROR(GetNodeAttr(k.def(), "data_format", format));
  if (*format != "NHWC" && *format != "NCHW") {
    return errors::InvalidArgument("node ", k.name(), ": Invalid data format: ", *format);
  }
  return OkStatus();
}

StatusOr<BnShape> MakeBnShape(const OpKernel& k, bool nchw, const Tensor& x,
                              const std::vector<std::pair<const char*, const Tensor*>>& vectors) {
  if (x.rank() != 4) {
    return errors::InvalidArgument("node ", k.name(), ": input must be 4-dimensional",
                                   x.shape().DebugString());
  }
  BnShape s;
  s.nchw = nchw;
  s.n = x.dim(0);
  s.c = nchw ? x.dim(1) : x.dim(3);
  s.hw = nchw ? x.dim(2) * x.dim(3) : x.dim(1) * x.dim(2);
  for (const auto& [what, t] : vectors) {
    if (t->rank() != 1) {
      return errors::InvalidArgument("node ", k.name(), ": ", what, " must be 1-dimensional",
                                     t->shape().DebugString());
    }
    if (t->dim(0) != s.c) {
      return errors::InvalidArgument("node ", k.name(), ": ", what,
                                     " must have the same number of elements as the channels "
                                     "of x, got ",
                                     t->dim(0), " and ", s.c);
    }
  }
  return s;
}

Status CheckTypes(const OpKernel& k) {
  for (int i = 1; i < k.num_inputs(); ++i) {
    if (k.input_type(i) != k.input_type(0)) {
      return errors::InvalidArgument(
          "node ", k.name(), ": ", k.type_string(), " needs its per-channel inputs of x's type ",
          DataTypeName(k.input_type(0)), ", got ", DataTypeName(k.input_type(i)));
    }
  }
  return OkStatus();
}

}  // namespace batch_norm

namespace {

using batch_norm::BatchNormKernel;
using batch_norm::BnShape;
using batch_norm::ChannelsLast;
using batch_norm::CheckTypes;
using batch_norm::MakeBnShape;
using batch_norm::Transpose;
using batch_norm::Vec;

// Per-channel sums of rows of x (and of (x - mean)^2 when `mean` is given).
template <typename T>
Vec<T> ChannelSums(const BnShape& s, const T* x, const Vec<T>* mean) {
  Vec<T> sum = Vec<T>::Zero(s.c);
  for (int64_t r = 0; r < s.rows(); ++r) {
    if (mean == nullptr) {
      sum += ConstArray<T>(x + r * s.c, s.c);
    } else {
      sum += (ConstArray<T>(x + r * s.c, s.c) - *mean).square();
    }
  }
  return sum;
}

// y = x * a + b per channel, written in y's layout.
template <typename T>
void ScaleShift(const BnShape& s, const T* x, const Vec<T>& a, const Vec<T>& b, T* y) {
  std::vector<T> tmp;
  T* out = y;
  if (s.nchw) {
    tmp.resize(static_cast<size_t>(s.rows() * s.c));
    out = tmp.data();
  }
  for (int64_t r = 0; r < s.rows(); ++r) {
    MutArray<T>(out + r * s.c, s.c) = ConstArray<T>(x + r * s.c, s.c) * a + b;
  }
  if (s.nchw) Transpose(s, out, y, /*to_nhwc=*/false);
}

TW_REGISTER_OP("FusedBatchNorm")
    .Input("x: T")
    .Input("scale: T")
    .Input("offset: T")
    .Input("mean: T")
    .Input("variance: T")
    .Output("y: T")
    .Output("batch_mean: T")
    .Output("batch_variance: T")
    .Output("reserve_space_1: T")
    .Output("reserve_space_2: T")
    .Attr("T: {float, double}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: string = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("Batch normalization of 4-D x, per channel.");

TW_REGISTER_OP("FusedBatchNormV2")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Attr("T: {float, double}")
    .Attr("U: {float, double}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: string = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc(
        "FusedBatchNorm with a type attribute of its own for "
        "the per-channel tensors (here: x's type).");

TW_REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {float, double}")
    .Attr("U: {float, double}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: string = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc(
        "FusedBatchNormV2 with a third reserve output (a scalar "
        "on CPU).");

class FusedBatchNormOp : public BatchNormKernel {
 public:
  using BatchNormKernel::BatchNormKernel;
  void Compute(OpKernelContext* ctx) override {
    TW_OP_REQUIRES_OK(ctx, CheckTypes(*this));
    const Tensor& x = ctx->input(0);
    const bool inference = !is_training_;
    std::vector<std::pair<const char*, const Tensor*>> vectors = {{"scale", &ctx->input(1)},
                                                                  {"offset", &ctx->input(2)}};
    if (inference) {
      vectors.push_back({"mean", &ctx->input(3)});
      vectors.push_back({"variance", &ctx->input(4)});
    }
    auto s = MakeBnShape(*this, nchw_, x, vectors);
    TW_OP_REQUIRES_OK(ctx, s.status());
    Tensor* out[6] = {};
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out[0]));
    for (int i = 1; i < 5; ++i) {
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({s->c}), &out[i]));
    }
    if (num_outputs() == 6) {
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape({}), &out[5]));
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
    if (out[5] != nullptr) out[5]->flat<T>()[0] = T(0);
    const ConstArray<T> scale(ctx->input(1).flat<T>().data(), s.c);
    const ConstArray<T> offset(ctx->input(2).flat<T>().data(), s.c);
    std::vector<T> copy;
    const T* x = ChannelsLast(s, ctx->input(0), &copy);
    Vec<T> mean, var, reported_var;
    if (is_training_) {
      const T n = static_cast<T>(s.rows());
      if (s.rows() == 0) {
        mean = Vec<T>::Constant(s.c, std::numeric_limits<T>::quiet_NaN());
        var = mean;
      } else {
        mean = ChannelSums(s, x, static_cast<const Vec<T>*>(nullptr)) / n;
        var = ChannelSums(s, x, &mean) / n;
      }
      // TF's Bessel correction: n / (n - 1), infinite for a single element per channel.
      reported_var = var * (n / (n - T(1)));
    } else {
      mean = ConstArray<T>(ctx->input(3).flat<T>().data(), s.c);
      var = ConstArray<T>(ctx->input(4).flat<T>().data(), s.c);
      reported_var = var;
    }
    const Vec<T> a = scale * (var + static_cast<T>(epsilon_)).rsqrt();
    const Vec<T> b = offset - mean * a;
    ScaleShift(s, x, a, b, out[0]->flat<T>().data());
    MutArray<T>(out[1]->flat<T>().data(), s.c) = mean;
    MutArray<T>(out[2]->flat<T>().data(), s.c) = reported_var;
    MutArray<T>(out[3]->flat<T>().data(), s.c) = mean;
    MutArray<T>(out[4]->flat<T>().data(), s.c) = var;
  }
};
TW_REGISTER_KERNEL("FusedBatchNorm", "CPU", FusedBatchNormOp);
TW_REGISTER_KERNEL("FusedBatchNormV2", "CPU", FusedBatchNormOp);
TW_REGISTER_KERNEL("FusedBatchNormV3", "CPU", FusedBatchNormOp);

// ---- Shape functions ----

// y (and x_backprop) like x; the per-channel outputs [C], C from x and the vectors' shapes.
Status FusedBatchNormShape(ShapeContext* ctx, int x_input, int first_vector, int num_vectors,
                           int num_channel_outputs) {
  std::string format = "NHWC";
  (void)GetNodeAttr(ctx->node(), "data_format", &format);
  const StaticShape& x = ctx->input(x_input);
  int64_t c = TensorShape::kUnknownDim;
  if (x) {
    if (x->rank() != 4) {
      return ctx->Error(absl::StrCat("Shape must be rank 4 but is rank ", x->rank()));
    }
    c = x->dim(format == "NCHW" ? 1 : 3);
  }
  for (int i = first_vector; i < first_vector + num_vectors; ++i) {
    const StaticShape& v = ctx->input(i);
    if (!v) continue;
    if (v->rank() != 1) {
      return ctx->Error(absl::StrCat("Shape must be rank 1 but is rank ", v->rank()));
    }
    if (!MergeDim(c, v->dim(0), &c)) {
      return ctx->Error(absl::StrCat("Dimensions must be equal, but are ", c, " and ", v->dim(0)));
    }
  }
  ctx->set_output(0, x);
  for (int i = 1; i <= num_channel_outputs; ++i) {
    auto shape = TensorShape::Create({c});
    ctx->set_output(i, shape.ok() ? StaticShape(*shape) : std::nullopt);
  }
  return OkStatus();
}

Status ForwardShape(ShapeContext* ctx) {
  bool is_training = true;
  (void)GetNodeAttr(ctx->node(), "is_training", &is_training);
  TW_RETURN_IF_ERROR(FusedBatchNormShape(ctx, 0, 1, is_training ? 2 : 4, 4));
  if (ctx->num_outputs() == 6) ctx->set_output(5, TensorShape({}));
  return OkStatus();
}

Status GradShape(ShapeContext* ctx) {
  TW_RETURN_IF_ERROR(FusedBatchNormShape(ctx, 1, 2, 3, 2));
  if (ctx->input(0) && !ctx->input(1)) ctx->set_output(0, ctx->input(0));
  ctx->set_output(3, TensorShape({0}));
  ctx->set_output(4, TensorShape({0}));
  return OkStatus();
}

TW_REGISTER_SHAPE_FN("FusedBatchNorm", ForwardShape);
TW_REGISTER_SHAPE_FN("FusedBatchNormV2", ForwardShape);
TW_REGISTER_SHAPE_FN("FusedBatchNormV3", ForwardShape);
TW_REGISTER_SHAPE_FN("FusedBatchNormGrad", GradShape);
TW_REGISTER_SHAPE_FN("FusedBatchNormGradV2", GradShape);
TW_REGISTER_SHAPE_FN("FusedBatchNormGradV3", GradShape);

// ---- Gradient ----

// As TF (nn_grad._BaseFusedBatchNormGrad): only y's gradient flows back. In training the
// grad op reads the forward op's reserve spaces (the batch statistics); in inference the
// given mean and variance, which get no gradient themselves.
Status FusedBatchNormGradient(const Scope& scope, const ForwardOp& op,
                              const std::vector<Gradient>& grad_outputs,
                              std::vector<Gradient>* grad_inputs) {
  ops::FusedBatchNormOptions options;
  TW_RETURN_IF_ERROR(op.GetAttr("epsilon", &options.epsilon));
  TW_RETURN_IF_ERROR(op.GetAttr("data_format", &options.data_format));
  TW_RETURN_IF_ERROR(op.GetAttr("is_training", &options.is_training));
  const bool v3 = op.type() == "FusedBatchNormV3";
  const Output mean = options.is_training ? op.output(3) : op.input(3);
  const Output var = options.is_training ? op.output(4) : op.input(4);
  ops::FusedBatchNormGradOutputs g;
  if (v3) {
    g = ops::FusedBatchNormGradV3(scope, grad_outputs[0].dense, op.input(0), op.input(1), mean, var,
                                  op.output(5), options);
  } else {
    g = ops::FusedBatchNormGrad(scope, grad_outputs[0].dense, op.input(0), op.input(1), mean, var,
                                options);
  }
  (*grad_inputs)[0].dense = g.x_backprop;
  (*grad_inputs)[1].dense = g.scale_backprop;
  (*grad_inputs)[2].dense = g.offset_backprop;
  return OkStatus();
}
TW_REGISTER_GRADIENT("FusedBatchNorm", FusedBatchNormGradient);
TW_REGISTER_GRADIENT("FusedBatchNormV2", FusedBatchNormGradient);
TW_REGISTER_GRADIENT("FusedBatchNormV3", FusedBatchNormGradient);

AttrMap BatchNormAttrs(const ops::FusedBatchNormOptions& o) {
  return {{"epsilon", MakeAttr(o.epsilon)},
          {"data_format", MakeAttr(o.data_format)},
          {"is_training", MakeAttr(o.is_training)}};
}

}  // namespace

namespace ops {

FusedBatchNormOutputs FusedBatchNorm(const Scope& scope, Input x, Input scale, Input offset,
                                     Input mean, Input variance,
                                     const FusedBatchNormOptions& options) {
  const Operation op = scope.AddNode(
      "FusedBatchNormV3", {{x}, {scale}, {offset}, {mean}, {variance}}, BatchNormAttrs(options));
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2), Output(op, 3), Output(op, 4), Output(op, 5)};
}

FusedBatchNormGradOutputs FusedBatchNormGrad(const Scope& scope, Input y_backprop, Input x,
                                             Input scale, Input reserve_space_1,
                                             Input reserve_space_2,
                                             const FusedBatchNormOptions& options) {
  const Operation op = scope.AddNode(
      "FusedBatchNormGradV2", {{y_backprop}, {x}, {scale}, {reserve_space_1}, {reserve_space_2}},
      BatchNormAttrs(options));
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

FusedBatchNormGradOutputs FusedBatchNormGradV3(const Scope& scope, Input y_backprop, Input x,
                                               Input scale, Input reserve_space_1,
                                               Input reserve_space_2, Input reserve_space_3,
                                               const FusedBatchNormOptions& options) {
  const Operation op = scope.AddNode(
      "FusedBatchNormGradV3",
      {{y_backprop}, {x}, {scale}, {reserve_space_1}, {reserve_space_2}, {reserve_space_3}},
      BatchNormAttrs(options));
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

}  // namespace ops
}  // namespace tw
