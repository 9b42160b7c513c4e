// Depthwise 2-D convolution over NHWC images: DepthwiseConv2dNative (strides, dilations,
// SAME and VALID padding, a channel multiplier) and its two gradients,
// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter. Definitions,
// CPU kernels, shape functions, the gradient and graph builders; the window arithmetic is
// src/graph/conv_geometry.h, shared with Conv2D.
//
// Input channel c with filter [kh, kw, c, m] gives output channel c * M + m. The kernels
// loop over output pixels and the filter taps inside the image; at each tap the work is
// over the channels, contiguous in the image, the filter and the output alike (NHWC keeps
// them innermost), so it is one vector operation (M = 1) or a short loop per channel.
#include <algorithm>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "src/framework/op_kernel.h"
#include "src/graph/conv_geometry.h"
#include "src/graph/gradient_registry.h"
#include "src/graph/shape_inference.h"
#include "src/ops/array_util.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/nn_ops.h"

namespace tw {
namespace {

struct DepthwiseShape {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t k_h = 0, k_w = 0, mult = 0;
  int64_t out_h = 0, out_w = 0;
  WindowAttrs attrs;
  int64_t pad_top = 0, pad_left = 0;
  int64_t out_c() const { return in_c * mult; }
};

StatusOr<DepthwiseShape> MakeDepthwiseShape(const OpKernel& k, const WindowAttrs& attrs,
                                            const TensorShape& input, const TensorShape& filter) {
  if (input.rank() != 4) {
    return errors::InvalidArgument("node ", k.name(), ": input must be 4-dimensional",
                                   input.DebugString());
  }
  if (filter.rank() != 4) {
    return errors::InvalidArgument("node ", k.name(),
                                   ": filter must be 4-dimensional: ", filter.DebugString());
  }
  if (filter.dim(2) != input.dim(3)) {
    return errors::InvalidArgument("node ", k.name(),
                                   ": input and filter must have the same depth: ", input.dim(3),
                                   " vs ", filter.dim(2));
  }
  DepthwiseShape s;
  s.batch = input.dim(0);
  s.in_h = input.dim(1);
  s.in_w = input.dim(2);
  s.in_c = input.dim(3);
  s.k_h = filter.dim(0);
  s.k_w = filter.dim(1);
  s.mult = filter.dim(3);
  s.attrs = attrs;
  s.attrs.window = {s.k_h, s.k_w};
  if (s.k_h < 1 || s.k_w < 1) {
    return errors::InvalidArgument("node ", k.name(), ": filter ", filter.DebugString(),
                                   " has an empty window");
  }
  auto extents = WindowedOutputSizes(input.dims(), s.attrs);
  if (!extents.ok()) return errors::Annotate(extents.status(), "node " + k.name() + ": ");
  s.out_h = (*extents)[0].out;
  s.out_w = (*extents)[1].out;
  s.pad_top = (*extents)[0].pad_before;
  s.pad_left = (*extents)[1].pad_before;
  return s;
}

// Calls fn(out_offset, in_offset, filter_offset) (element offsets of the first channel)
// for every output pixel and each of its filter taps inside the image.
template <typename F>
void ForEachTap(const DepthwiseShape& s, F&& fn) {
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      const int64_t top = oh * s.attrs.stride[0] - s.pad_top;
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        const int64_t left = ow * s.attrs.stride[1] - s.pad_left;
        const int64_t out = ((b * s.out_h + oh) * s.out_w + ow) * s.out_c();
        for (int64_t kh = 0; kh < s.k_h; ++kh) {
          const int64_t r = top + kh * s.attrs.dilation[0];
          if (r < 0 || r >= s.in_h) continue;
          for (int64_t kw = 0; kw < s.k_w; ++kw) {
            const int64_t c = left + kw * s.attrs.dilation[1];
            if (c < 0 || c >= s.in_w) continue;
            fn(out, ((b * s.in_h + r) * s.in_w + c) * s.in_c, (kh * s.k_w + kw) * s.out_c());
          }
        }
      }
    }
  }
}

template <typename T>
void DepthwiseForward(const DepthwiseShape& s, const T* in, const T* f, T* out) {
  std::fill(out, out + s.batch * s.out_h * s.out_w * s.out_c(), T(0));
  const int64_t C = s.in_c, M = s.mult;
  ForEachTap(s, [&](int64_t o, int64_t i, int64_t k) {
    if (M == 1) {
      MutArray<T>(out + o, C) += ConstArray<T>(in + i, C) * ConstArray<T>(f + k, C);
      return;
    }
    for (int64_t c = 0; c < C; ++c) {
      MutArray<T>(out + o + c * M, M) += in[i + c] * ConstArray<T>(f + k + c * M, M);
    }
  });
}

template <typename T>
void DepthwiseBackpropInput(const DepthwiseShape& s, const T* f, const T* dy, T* dx) {
  std::fill(dx, dx + s.batch * s.in_h * s.in_w * s.in_c, T(0));
  const int64_t C = s.in_c, M = s.mult;
  ForEachTap(s, [&](int64_t o, int64_t i, int64_t k) {
    if (M == 1) {
      MutArray<T>(dx + i, C) += ConstArray<T>(dy + o, C) * ConstArray<T>(f + k, C);
      return;
    }
    for (int64_t c = 0; c < C; ++c) {
      dx[i + c] += (ConstArray<T>(dy + o + c * M, M) * ConstArray<T>(f + k + c * M, M)).sum();
    }
  });
}

template <typename T>
void DepthwiseBackpropFilter(const DepthwiseShape& s, const T* in, const T* dy, T* df) {
  std::fill(df, df + s.k_h * s.k_w * s.out_c(), T(0));
  const int64_t C = s.in_c, M = s.mult;
  ForEachTap(s, [&](int64_t o, int64_t i, int64_t k) {
    if (M == 1) {
      MutArray<T>(df + k, C) += ConstArray<T>(in + i, C) * ConstArray<T>(dy + o, C);
      return;
    }
    for (int64_t c = 0; c < C; ++c) {
      MutArray<T>(df + k + c * M, M) += in[i + c] * ConstArray<T>(dy + o + c * M, M);
    }
  });
}

class DepthwiseKernel : public OpKernel {
 public:
  explicit DepthwiseKernel(OpKernelConstruction* c) : OpKernel(c) {
    auto attrs = ReadWindowAttrs(def(), /*is_pool=*/false);
    if (!attrs.ok()) {
      c->SetStatus(attrs.status());
      return;
    }
    attrs_ = *attrs;
  }
  bool IsExpensive() const override { return true; }

 protected:
  Status CheckOutGrad(const DepthwiseShape& s, const Tensor& dy) const {
    const TensorShape expected({s.batch, s.out_h, s.out_w, s.out_c()});
    if (dy.shape() == expected) return OkStatus();
    return errors::InvalidArgument("node ", name(), ": out_backprop has shape ",
                                   dy.shape().DebugString(), ", but the convolution's ",
                                   "output is ", expected.DebugString());
  }
  WindowAttrs attrs_;
};

TW_REGISTER_OP("DepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: string")
    .Attr("data_format: string = 'NHWC'")
    .Attr("dilations: list(int) = []")
    .Doc(
        "Each channel of NHWC input convolved with its own filters [kh, kw, in_c, M]: "
        "in_c * M output channels.");

class DepthwiseConv2dNativeOp : public DepthwiseKernel {
 public:
  using DepthwiseKernel::DepthwiseKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    auto s = MakeDepthwiseShape(*this, attrs_, input.shape(), filter.shape());
    TW_OP_REQUIRES_OK(ctx, s.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(
                               0, TensorShape({s->batch, s->out_h, s->out_w, s->out_c()}), &out));
    if (out->num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      DepthwiseForward(*s, input.flat<T>().data(), filter.flat<T>().data(), out->flat<T>().data());
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("DepthwiseConv2dNative", "CPU", DepthwiseConv2dNativeOp);

TW_REGISTER_OP("DepthwiseConv2dNativeBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: string")
    .Attr("data_format: string = 'NHWC'")
    .Attr("dilations: list(int) = []")
    .Doc("DepthwiseConv2dNative's gradient with respect to its input, of shape input_sizes.");

class DepthwiseBackpropInputOp : public DepthwiseKernel {
 public:
  using DepthwiseKernel::DepthwiseKernel;
  void Compute(OpKernelContext* ctx) override {
    auto input_shape = internal::ShapeFromSizesInput(name(), ctx->input(0), "input_sizes");
    TW_OP_REQUIRES_OK(ctx, input_shape.status());
    const Tensor& filter = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    auto s = MakeDepthwiseShape(*this, attrs_, *input_shape, filter.shape());
    TW_OP_REQUIRES_OK(ctx, s.status());
    TW_OP_REQUIRES_OK(ctx, CheckOutGrad(*s, dy));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *input_shape, &out));
    if (out->num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      DepthwiseBackpropInput(*s, filter.flat<T>().data(), dy.flat<T>().data(),
                             out->flat<T>().data());
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(1)));
  }
};
TW_REGISTER_KERNEL("DepthwiseConv2dNativeBackpropInput", "CPU", DepthwiseBackpropInputOp);

TW_REGISTER_OP("DepthwiseConv2dNativeBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: string")
    .Attr("data_format: string = 'NHWC'")
    .Attr("dilations: list(int) = []")
    .Doc("DepthwiseConv2dNative's gradient with respect to its filter, of shape filter_sizes.");

class DepthwiseBackpropFilterOp : public DepthwiseKernel {
 public:
  using DepthwiseKernel::DepthwiseKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    auto filter_shape = internal::ShapeFromSizesInput(name(), ctx->input(1), "filter_sizes");
    TW_OP_REQUIRES_OK(ctx, filter_shape.status());
    const Tensor& dy = ctx->input(2);
    auto s = MakeDepthwiseShape(*this, attrs_, input.shape(), *filter_shape);
    TW_OP_REQUIRES_OK(ctx, s.status());
    TW_OP_REQUIRES_OK(ctx, CheckOutGrad(*s, dy));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *filter_shape, &out));
    if (out->num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      DepthwiseBackpropFilter(*s, input.flat<T>().data(), dy.flat<T>().data(),
                              out->flat<T>().data());
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("DepthwiseConv2dNativeBackpropFilter", "CPU", DepthwiseBackpropFilterOp);

// ---- Shape functions ----

Status DepthwiseShapeFn(ShapeContext* ctx) {
  std::string format;
  if (GetNodeAttr(ctx->node(), "data_format", &format).ok() && format == "NCHW") {
    return OkStatus();  // refused when the step runs, as TF's CPU kernel
  }
  TW_ASSIGN_OR_RETURN(WindowAttrs attrs, ReadWindowAttrs(ctx->node(), /*is_pool=*/false));
  const StaticShape& in = ctx->input(0);
  const StaticShape& f = ctx->input(1);
  for (const StaticShape* s : {&in, &f}) {
    if (*s && (*s)->rank() != 4) {
      return ctx->Error(absl::StrCat("Shape must be rank 4 but is rank ", (*s)->rank()));
    }
  }
  std::vector<int64_t> input = in ? in->dims() : std::vector<int64_t>(4, TensorShape::kUnknownDim);
  std::vector<int64_t> filter = f ? f->dims() : std::vector<int64_t>(4, TensorShape::kUnknownDim);
  int64_t depth = TensorShape::kUnknownDim;
  if (!MergeDim(input[3], filter[2], &depth)) {
    return ctx->Error(
        absl::StrCat("Dimensions must be equal, but are ", input[3], " and ", filter[2]));
  }
  const int64_t out_c = depth >= 0 && filter[3] >= 0 ? depth * filter[3] : TensorShape::kUnknownDim;
  int64_t out_h = TensorShape::kUnknownDim, out_w = TensorShape::kUnknownDim;
  if (filter[0] >= 0 && filter[1] >= 0) {
    attrs.window = {filter[0], filter[1]};
    auto extents = WindowedOutputSizes(input, attrs);
    if (!extents.ok()) return ctx->Error(std::string(extents.status().message()));
    out_h = (*extents)[0].out;
    out_w = (*extents)[1].out;
  }
  auto shape = TensorShape::Create({input[0], out_h, out_w, out_c});
  if (shape.ok()) ctx->set_output(0, *shape);
  return OkStatus();
}

ShapeFn ShapeGivenBy(int i) {
  return [i](ShapeContext* ctx) {
    ctx->set_output(0, ctx->input_as_shape(i));
    return OkStatus();
  };
}

TW_REGISTER_SHAPE_FN("DepthwiseConv2dNative", DepthwiseShapeFn);
TW_REGISTER_SHAPE_FN("DepthwiseConv2dNativeBackpropInput", ShapeGivenBy(0));
TW_REGISTER_SHAPE_FN("DepthwiseConv2dNativeBackpropFilter", ShapeGivenBy(1));

// ---- Gradient ----

Status OptionsOf(const ForwardOp& op, ops::DepthwiseConv2dOptions* options) {
  TW_RETURN_IF_ERROR(op.GetAttr("strides", &options->strides));
  TW_RETURN_IF_ERROR(op.GetAttr("padding", &options->padding));
  TW_RETURN_IF_ERROR(op.GetAttr("dilations", &options->dilations));
  return op.GetAttr("data_format", &options->data_format);
}

Status DepthwiseConv2dNativeGradient(const Scope& scope, const ForwardOp& op,
                                     const std::vector<Gradient>& grad_outputs,
                                     std::vector<Gradient>* grad_inputs) {
  ops::DepthwiseConv2dOptions options;
  TW_RETURN_IF_ERROR(OptionsOf(op, &options));
  const Output& dy = grad_outputs[0].dense;
  if (op.needs_gradient(0)) {
    (*grad_inputs)[0].dense = ops::DepthwiseConv2dNativeBackpropInput(
        scope, ops::Shape(scope, op.input(0)), op.input(1), dy, options);
  }
  if (op.needs_gradient(1)) {
    (*grad_inputs)[1].dense = ops::DepthwiseConv2dNativeBackpropFilter(
        scope, op.input(0), ops::Shape(scope, op.input(1)), dy, options);
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("DepthwiseConv2dNative", DepthwiseConv2dNativeGradient);
TW_NO_GRADIENT("DepthwiseConv2dNativeBackpropInput");
TW_NO_GRADIENT("DepthwiseConv2dNativeBackpropFilter");

AttrMap DepthwiseAttrs(const ops::DepthwiseConv2dOptions& o) {
  return {{"strides", MakeAttr(o.strides)},
          {"padding", MakeAttr(o.padding)},
          {"dilations", MakeAttr(o.dilations)},
          {"data_format", MakeAttr(o.data_format)}};
}

}  // namespace

namespace ops {

Output DepthwiseConv2dNative(const Scope& scope, Input input, Input filter,
                             const DepthwiseConv2dOptions& options) {
  return scope.AddNodeOutput("DepthwiseConv2dNative", {{input}, {filter}}, DepthwiseAttrs(options));
}

Output DepthwiseConv2dNativeBackpropInput(const Scope& scope, Input input_sizes, Input filter,
                                          Input out_backprop,
                                          const DepthwiseConv2dOptions& options) {
  return scope.AddNodeOutput("DepthwiseConv2dNativeBackpropInput",
                             {{input_sizes}, {filter}, {out_backprop}}, DepthwiseAttrs(options));
}

Output DepthwiseConv2dNativeBackpropFilter(const Scope& scope, Input input, Input filter_sizes,
                                           Input out_backprop,
                                           const DepthwiseConv2dOptions& options) {
  return scope.AddNodeOutput("DepthwiseConv2dNativeBackpropFilter",
                             {{input}, {filter_sizes}, {out_backprop}}, DepthwiseAttrs(options));
}

}  // namespace ops
}  // namespace tw
