// 2-D pooling over NHWC images: MaxPool and AvgPool (ksize, strides, SAME or VALID) with
// their gradients MaxPoolGrad and AvgPoolGrad. Definitions, CPU kernels, gradients and
// graph builders; the window arithmetic is src/graph/conv_geometry.h, shared with the
// shape functions. As TF: SAME padding never wins a max, and an average counts only the
// window's elements inside the image.
#include <algorithm>
#include <limits>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/framework/parallel_for.h"
#include "src/graph/conv_geometry.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/nn_ops.h"

namespace tw {
namespace {

// One pooling, all dimensions known.
struct PoolShape {
  int64_t batch = 0, in_h = 0, in_w = 0, depth = 0, out_h = 0, out_w = 0;
  WindowAttrs attrs;
  int64_t pad_top = 0, pad_left = 0;
};

StatusOr<PoolShape> MakePoolShape(const OpKernel& k, const WindowAttrs& attrs,
                                  const TensorShape& input) {
  if (input.rank() != 4) {
    return errors::InvalidArgument("node ", k.name(), ": input must be 4-dimensional ",
                                   "[batch, height, width, channels], got ", input.DebugString());
  }
  PoolShape s;
  s.batch = input.dim(0);
  s.in_h = input.dim(1);
  s.in_w = input.dim(2);
  s.depth = input.dim(3);
  s.attrs = attrs;
  auto extents = WindowedOutputSizes(input.dims(), attrs);
  if (!extents.ok()) return errors::Annotate(extents.status(), "node " + k.name() + ": ");
  s.out_h = (*extents)[0].out;
  s.out_w = (*extents)[1].out;
  s.pad_top = (*extents)[0].pad_before;
  s.pad_left = (*extents)[1].pad_before;
  return s;
}

// The window of output pixel (oh, ow), clipped to the image: rows [r0, r1), cols [c0, c1).
struct Window {
  int64_t r0, r1, c0, c1;
};
Window WindowAt(const PoolShape& s, int64_t oh, int64_t ow) {
  const int64_t top = oh * s.attrs.stride[0] - s.pad_top;
  const int64_t left = ow * s.attrs.stride[1] - s.pad_left;
  return {std::max<int64_t>(top, 0), std::min(top + s.attrs.window[0], s.in_h),
          std::max<int64_t>(left, 0), std::min(left + s.attrs.window[1], s.in_w)};
}

// Calls fn(image_offset, out_offset, window) for every output pixel, the images split
// across the device's threads (a pixel's window lies in its own image, so shards read and
// write disjoint images); offsets are in elements of the first channel.
template <typename F>
void ForEachOutputPixel(DeviceBase* device, const PoolShape& s, F&& fn) {
  const int64_t visits_per_image =
      std::max<int64_t>(1, s.out_h * s.out_w * s.attrs.window[0] * s.attrs.window[1] * s.depth);
  ParallelFor(device, s.batch, kMinShardMultiplyAdds / visits_per_image,
              [&](int64_t first, int64_t last) {
                for (int64_t n = first; n < last; ++n) {
                  const int64_t image = n * s.in_h * s.in_w * s.depth;
                  for (int64_t oh = 0; oh < s.out_h; ++oh) {
                    for (int64_t ow = 0; ow < s.out_w; ++ow) {
                      fn(image, ((n * s.out_h + oh) * s.out_w + ow) * s.depth, WindowAt(s, oh, ow));
                    }
                  }
                }
              });
}

template <typename T>
using Vector = Eigen::Array<T, Eigen::Dynamic, 1>;

template <typename T>
void MaxPoolForward(DeviceBase* device, const PoolShape& s, const T* in, T* out) {
  ForEachOutputPixel(device, s, [&](int64_t image, int64_t o, const Window& w) {
    Eigen::Map<Vector<T>> best(out + o, s.depth);
    best.setConstant(std::numeric_limits<T>::lowest());
    for (int64_t r = w.r0; r < w.r1; ++r) {
      for (int64_t c = w.c0; c < w.c1; ++c) {
        best =
            best.max(Eigen::Map<const Vector<T>>(in + image + (r * s.in_w + c) * s.depth, s.depth));
      }
    }
  });
}

// Each output pixel's gradient goes to the first element of its window holding the max,
// which the forward pass left in `pooled` (MaxPoolGrad's orig_output): walking the window
// in row-major order with the channels innermost, the first element equal to its channel's
// max is where that channel's gradient goes (a NaN max: the first NaN, as a search that
// starts from the window's first element would pick it). The window is read first and
// written after: stores into the gradient between loads of the input would make every
// load wait on them (the two buffers are alike in their low address bits).
template <typename T>
void MaxPoolBackward(DeviceBase* device, const PoolShape& s, const T* in, const T* pooled,
                     const T* grad, T* in_grad) {
  std::fill(in_grad, in_grad + s.batch * s.in_h * s.in_w * s.depth, T(0));
  ForEachOutputPixel(device, s, [&](int64_t image, int64_t o, const Window& w) {
    thread_local std::vector<int64_t> where;  // per channel: the max's offset, or -1
    where.assign(static_cast<size_t>(s.depth), -1);
    int64_t* __restrict found = where.data();
    const T* __restrict max = pooled + o;
    for (int64_t r = w.r0; r < w.r1; ++r) {
      for (int64_t c = w.c0; c < w.c1; ++c) {
        const int64_t at = image + (r * s.in_w + c) * s.depth;
        const T* __restrict x = in + at;
        for (int64_t d = 0; d < s.depth; ++d) {
          // Bitwise, not short-circuit, operators: no branch to mispredict.
          const bool hit = (x[d] == max[d]) | ((x[d] != x[d]) & (max[d] != max[d]));
          found[d] = (hit & (found[d] < 0)) ? at + d : found[d];
        }
      }
    }
    for (int64_t d = 0; d < s.depth; ++d) {
      if (found[d] >= 0) in_grad[found[d]] += grad[o + d];
    }
  });
}

template <typename T>
void AvgPoolForward(DeviceBase* device, const PoolShape& s, const T* in, T* out) {
  ForEachOutputPixel(device, s, [&](int64_t image, int64_t o, const Window& w) {
    Eigen::Map<Vector<T>> sum(out + o, s.depth);
    sum.setZero();
    for (int64_t r = w.r0; r < w.r1; ++r) {
      for (int64_t c = w.c0; c < w.c1; ++c) {
        sum += Eigen::Map<const Vector<T>>(in + image + (r * s.in_w + c) * s.depth, s.depth);
      }
    }
    const int64_t count = (w.r1 - w.r0) * (w.c1 - w.c0);
    if (count > 0) sum /= static_cast<T>(count);
  });
}

template <typename T>
void AvgPoolBackward(DeviceBase* device, const PoolShape& s, const T* grad, T* in_grad) {
  std::fill(in_grad, in_grad + s.batch * s.in_h * s.in_w * s.depth, T(0));
  ForEachOutputPixel(device, s, [&](int64_t image, int64_t o, const Window& w) {
    const int64_t count = (w.r1 - w.r0) * (w.c1 - w.c0);
    if (count == 0) return;
    const Vector<T> share = Eigen::Map<const Vector<T>>(grad + o, s.depth) / static_cast<T>(count);
    for (int64_t r = w.r0; r < w.r1; ++r) {
      for (int64_t c = w.c0; c < w.c1; ++c) {
        Eigen::Map<Vector<T>>(in_grad + image + (r * s.in_w + c) * s.depth, s.depth) += share;
      }
    }
  });
}

class PoolKernel : public OpKernel {
 public:
  explicit PoolKernel(OpKernelConstruction* c) : OpKernel(c) {
    auto attrs = ReadWindowAttrs(def(), /*is_pool=*/true);
    if (!attrs.ok()) {
      c->SetStatus(attrs.status());
      return;
    }
    attrs_ = *attrs;
  }

 protected:
  Status CheckGrad(const PoolShape& s, const Tensor& grad) const {
    const TensorShape expected({s.batch, s.out_h, s.out_w, s.depth});
    if (grad.shape() == expected) return OkStatus();
    return errors::InvalidArgument("node ", name(), ": grad has shape ", grad.shape().DebugString(),
                                   ", but the pooling's output is ", expected.DebugString());
  }
  Status AllocatePooled(OpKernelContext* ctx, const PoolShape& s, Tensor** out) const {
    return ctx->allocate_output(0, TensorShape({s.batch, s.out_h, s.out_w, s.depth}), out);
  }

  WindowAttrs attrs_;
};

TW_REGISTER_OP("MaxPool")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: string")
    .Attr("data_format: string = 'NHWC'")
    .Doc("The maximum of each ksize window of NHWC input.");

// MaxPool and AvgPool: the same checks and output, a different pooling of each window.
template <bool kMax>
class PoolOp : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    auto s = MakePoolShape(*this, attrs_, input.shape());
    TW_OP_REQUIRES_OK(ctx, s.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, AllocatePooled(ctx, *s, &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kMax) {
        MaxPoolForward(ctx->device(), *s, input.flat<T>().data(), out->flat<T>().data());
      } else {
        AvgPoolForward(ctx->device(), *s, input.flat<T>().data(), out->flat<T>().data());
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("MaxPool", "CPU", PoolOp<true>);

TW_REGISTER_OP("MaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: string")
    .Attr("data_format: string = 'NHWC'")
    .Doc("MaxPool's gradient: grad routed to the first maximum of each window.");

class MaxPoolGradOp : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    auto s = MakePoolShape(*this, attrs_, input.shape());
    TW_OP_REQUIRES_OK(ctx, s.status());
    TW_OP_REQUIRES_OK(ctx, CheckGrad(*s, grad));
    const Tensor& pooled = ctx->input(1);
    TW_OP_REQUIRES(ctx, pooled.shape() == grad.shape(),
                   errors::InvalidArgument("node ", name(), ": orig_output has shape ",
                                           pooled.shape().DebugString(), ", but the pooling's ",
                                           "output is ", grad.shape().DebugString()));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      MaxPoolBackward(ctx->device(), *s, input.flat<T>().data(), pooled.flat<T>().data(),
                      grad.flat<T>().data(), out->flat<T>().data());
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("MaxPoolGrad", "CPU", MaxPoolGradOp);

TW_REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: string")
    .Attr("data_format: string = 'NHWC'")
    .Doc("The mean of each ksize window of NHWC value (padding not counted).");

TW_REGISTER_KERNEL("AvgPool", "CPU", PoolOp<false>);

TW_REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: string")
    .Attr("data_format: string = 'NHWC'")
    .Doc("AvgPool's gradient: each window's grad shared by the elements it averaged.");

class AvgPoolGradOp : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    TW_OP_REQUIRES(
        ctx, sizes.rank() == 1 && sizes.num_elements() == 4,
        errors::InvalidArgument("node ", name(), ": orig_input_shape must be a ",
                                "vector of 4 dimensions, got shape ", sizes.shape().DebugString()));
    std::vector<int64_t> dims(sizes.flat<int32_t>().begin(), sizes.flat<int32_t>().end());
    auto input_shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, input_shape.status());
    TW_OP_REQUIRES(ctx, input_shape->IsFullyDefined(),
                   errors::InvalidArgument("node ", name(), ": orig_input_shape ",
                                           input_shape->DebugString(), " has a negative size"));
    const Tensor& grad = ctx->input(1);
    auto s = MakePoolShape(*this, attrs_, *input_shape);
    TW_OP_REQUIRES_OK(ctx, s.status());
    TW_OP_REQUIRES_OK(ctx, CheckGrad(*s, grad));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *input_shape, &out));
    const bool known = Dispatch(FloatTypes{}, input_type(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      AvgPoolBackward(ctx->device(), *s, grad.flat<T>().data(), out->flat<T>().data());
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(1)));
  }
};
TW_REGISTER_KERNEL("AvgPoolGrad", "CPU", AvgPoolGradOp);

// ---- Gradients ----

Status PoolOptionsOf(const ForwardOp& op, ops::PoolOptions* options) {
  TW_RETURN_IF_ERROR(op.GetAttr("ksize", &options->ksize));
  TW_RETURN_IF_ERROR(op.GetAttr("strides", &options->strides));
  TW_RETURN_IF_ERROR(op.GetAttr("padding", &options->padding));
  return op.GetAttr("data_format", &options->data_format);
}

Status MaxPoolGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  ops::PoolOptions options;
  TW_RETURN_IF_ERROR(PoolOptionsOf(op, &options));
  (*grad_inputs)[0].dense =
      ops::MaxPoolGrad(scope, op.input(0), op.output(0), grad_outputs[0].dense, options);
  return OkStatus();
}
TW_REGISTER_GRADIENT("MaxPool", MaxPoolGradient);

Status AvgPoolGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  ops::PoolOptions options;
  TW_RETURN_IF_ERROR(PoolOptionsOf(op, &options));
  (*grad_inputs)[0].dense =
      ops::AvgPoolGrad(scope, ops::Shape(scope, op.input(0)), grad_outputs[0].dense, options);
  return OkStatus();
}
TW_REGISTER_GRADIENT("AvgPool", AvgPoolGradient);
TW_NO_GRADIENT("MaxPoolGrad");
TW_NO_GRADIENT("AvgPoolGrad");

AttrMap PoolAttrs(const ops::PoolOptions& o) {
  return {{"ksize", MakeAttr(o.ksize)},
          {"strides", MakeAttr(o.strides)},
          {"padding", MakeAttr(o.padding)},
          {"data_format", MakeAttr(o.data_format)}};
}

}  // namespace

namespace ops {

Output MaxPool(const Scope& scope, Input input, const PoolOptions& options) {
  return scope.AddNodeOutput("MaxPool", {{input}}, PoolAttrs(options));
}
Output MaxPoolGrad(const Scope& scope, Input orig_input, Input orig_output, Input grad,
                   const PoolOptions& options) {
  return scope.AddNodeOutput("MaxPoolGrad", {{orig_input}, {orig_output}, {grad}},
                             PoolAttrs(options));
}
Output AvgPool(const Scope& scope, Input value, const PoolOptions& options) {
  return scope.AddNodeOutput("AvgPool", {{value}}, PoolAttrs(options));
}
Output AvgPoolGrad(const Scope& scope, Input orig_input_shape, Input grad,
                   const PoolOptions& options) {
  return scope.AddNodeOutput("AvgPoolGrad", {{orig_input_shape}, {grad}}, PoolAttrs(options));
}

}  // namespace ops
}  // namespace tw
