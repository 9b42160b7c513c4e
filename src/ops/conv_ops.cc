// 2-D convolution over NHWC images: Conv2D (strides, dilations, SAME, VALID and EXPLICIT
// padding) and its two gradients, Conv2DBackpropInput (also Conv2DTranspose's forward op)
// and Conv2DBackpropFilter. Definitions, CPU kernels, the gradient and graph builders; the
// window arithmetic is src/graph/conv_geometry.h, shared with the shape functions.
//
// Float convolutions run on oneDNN's kernels (onednn_conv.h). The others, and what oneDNN
// declines, are lowered to matrix products (im2col): the windows of a block of output pixels
// become the rows of a patch matrix [pixels, kh*kw*in_c], which multiplied by the filter,
// an HWIO tensor that is already the matrix [kh*kw*in_c, out_c], gives the block's output.
// Blocks keep the patch matrix near kPatchBlockElements, whatever the image.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/framework/parallel_for.h"
#include "src/graph/conv_geometry.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/onednn_conv.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/nn_ops.h"

namespace tw {
namespace {

constexpr int64_t kPatchBlockElements = int64_t{1} << 20;  // 4 MB of floats

// Everything a kernel needs about one convolution, all dimensions known.
struct ConvShape {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t k_h = 0, k_w = 0, out_c = 0;
  int64_t out_h = 0, out_w = 0;
  WindowAttrs attrs;
  int64_t pad_top = 0, pad_left = 0;

  int64_t patch_size() const { return k_h * k_w * in_c; }
  int64_t pixels() const { return batch * out_h * out_w; }
};

// Checks the input and filter shapes against each other and computes the output's.
StatusOr<ConvShape> MakeConvShape(const OpKernel& k, const WindowAttrs& attrs,
                                  const TensorShape& input, const TensorShape& filter) {
  if (input.rank() != 4) {
    return errors::InvalidArgument("node ", k.name(), ": input must be 4-dimensional ",
                                   "[batch, height, width, channels], got ", input.DebugString());
  }
  if (filter.rank() != 4) {
    return errors::InvalidArgument("node ", k.name(), ": filter must be 4-dimensional ",
                                   "[height, width, in_channels, out_channels], got ",
                                   filter.DebugString());
  }
  if (filter.dim(2) != input.dim(3) || filter.dim(2) == 0) {
    return errors::InvalidArgument("node ", k.name(), ": input depth must be evenly divisible ",
                                   "by filter depth: ", input.dim(3), " vs ", filter.dim(2));
  }
  ConvShape s;
  s.batch = input.dim(0);
  s.in_h = input.dim(1);
  s.in_w = input.dim(2);
  s.in_c = input.dim(3);
  s.k_h = filter.dim(0);
  s.k_w = filter.dim(1);
  s.out_c = filter.dim(3);
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

// Calls fn(image_row, image_col, patch_offset) for each filter tap of output pixel `pixel`
// that falls inside the image (the padding contributes zeros and is skipped).
template <typename F>
void ForEachTap(const ConvShape& s, int64_t pixel, F&& fn) {
  const int64_t ow = pixel % s.out_w;
  const int64_t oh = (pixel / s.out_w) % s.out_h;
  const int64_t top = oh * s.attrs.stride[0] - s.pad_top;
  const int64_t left = ow * s.attrs.stride[1] - s.pad_left;
  for (int64_t kh = 0; kh < s.k_h; ++kh) {
    const int64_t r = top + kh * s.attrs.dilation[0];
    if (r < 0 || r >= s.in_h) continue;
    for (int64_t kw = 0; kw < s.k_w; ++kw) {
      const int64_t c = left + kw * s.attrs.dilation[1];
      if (c < 0 || c >= s.in_w) continue;
      fn(r, c, (kh * s.k_w + kw) * s.in_c);
    }
  }
}

// Without dilation along the width, the taps of one filter row that fall inside the image
// are one run, contiguous in the image and in the patch alike: calls fn(image_row,
// first_image_col, patch_offset, taps) once per filter row.
template <typename F>
void ForEachTapRun(const ConvShape& s, int64_t pixel, F&& fn) {
  const int64_t ow = pixel % s.out_w;
  const int64_t oh = (pixel / s.out_w) % s.out_h;
  const int64_t top = oh * s.attrs.stride[0] - s.pad_top;
  const int64_t left = ow * s.attrs.stride[1] - s.pad_left;
  const int64_t first = std::max<int64_t>(0, -left);
  const int64_t last = std::min(s.k_w, s.in_w - left);  // one past the last tap inside
  if (first >= last) return;
  for (int64_t kh = 0; kh < s.k_h; ++kh) {
    const int64_t r = top + kh * s.attrs.dilation[0];
    if (r < 0 || r >= s.in_h) continue;
    fn(r, left + first, (kh * s.k_w + first) * s.in_c, last - first);
  }
}

// Whether every tap of output pixel `pixel`'s window lies inside the image.
bool WindowInside(const ConvShape& s, int64_t pixel) {
  const int64_t ow = pixel % s.out_w;
  const int64_t oh = (pixel / s.out_w) % s.out_h;
  const int64_t top = oh * s.attrs.stride[0] - s.pad_top;
  const int64_t left = ow * s.attrs.stride[1] - s.pad_left;
  return top >= 0 && left >= 0 && top + (s.k_h - 1) * s.attrs.dilation[0] < s.in_h &&
         left + (s.k_w - 1) * s.attrs.dilation[1] < s.in_w;
}

// The patch rows of pixels [begin, end) into `cols` ([end - begin, patch_size]). Only the
// rows of windows that reach into the padding are zeroed first: the others are copied
// over whole.
template <typename T>
void Im2Col(const ConvShape& s, const T* input, int64_t begin, int64_t end, T* cols) {
  for (int64_t p = begin; p < end; ++p) {
    const T* image = input + (p / (s.out_h * s.out_w)) * s.in_h * s.in_w * s.in_c;
    T* row = cols + (p - begin) * s.patch_size();
    if (!WindowInside(s, p)) std::fill(row, row + s.patch_size(), T(0));
    if (s.attrs.dilation[1] == 1) {
      // One copy per filter row: with few channels a copy per tap would cost more than
      // the product itself.
      ForEachTapRun(s, p, [&](int64_t r, int64_t c, int64_t offset, int64_t taps) {
        std::memcpy(row + offset, image + (r * s.in_w + c) * s.in_c, sizeof(T) * taps * s.in_c);
      });
      continue;
    }
    ForEachTap(s, p, [&](int64_t r, int64_t c, int64_t offset) {
      std::memcpy(row + offset, image + (r * s.in_w + c) * s.in_c, sizeof(T) * s.in_c);
    });
  }
}

// Adds the patch rows of pixels [begin, end) back onto the image gradient (im2col's
// transpose).
template <typename T>
void Col2ImAdd(const ConvShape& s, const T* cols, int64_t begin, int64_t end, T* input_grad) {
  using Vector = Eigen::Array<T, Eigen::Dynamic, 1>;
  for (int64_t p = begin; p < end; ++p) {
    T* image = input_grad + (p / (s.out_h * s.out_w)) * s.in_h * s.in_w * s.in_c;
    const T* row = cols + (p - begin) * s.patch_size();
    ForEachTap(s, p, [&](int64_t r, int64_t c, int64_t offset) {
      Eigen::Map<Vector>(image + (r * s.in_w + c) * s.in_c, s.in_c) +=
          Eigen::Map<const Vector>(row + offset, s.in_c);
    });
  }
}

// A thread's patch-matrix buffer, kept between kernels: a fresh 4 MB buffer per block
// would be fresh pages from the kernel, faulted in and zeroed on every step.
template <typename T>
std::vector<T>& Scratch() {
  thread_local std::vector<T> buffer;
  return buffer;
}

int64_t BlockPixels(const ConvShape& s) {
  return std::max<int64_t>(1, kPatchBlockElements / std::max<int64_t>(1, s.patch_size()));
}

// The fewest output pixels (or images, with `per_image`) worth a shard of their own.
int64_t MinShard(const ConvShape& s, bool per_image = false) {
  int64_t per_unit = std::max<int64_t>(1, s.patch_size() * s.out_c);
  if (per_image) per_unit *= std::max<int64_t>(1, s.out_h * s.out_w);
  return std::max<int64_t>(1, kMinShardMultiplyAdds / per_unit);
}

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Lays out the patch rows of pixels [first, last) block by block in this thread's scratch
// buffer and calls fn(begin, end, patches) with each block's [end - begin, patch_size]
// matrix.
template <typename T, typename F>
void ForEachPatchBlock(const ConvShape& s, const T* input, int64_t first, int64_t last, F&& fn) {
  std::vector<T>& cols = Scratch<T>();
  for (int64_t begin = first; begin < last; begin += BlockPixels(s)) {
    const int64_t end = std::min(last, begin + BlockPixels(s));
    cols.resize(static_cast<size_t>((end - begin) * s.patch_size()));
    Im2Col(s, input, begin, end, cols.data());
    fn(begin, end, Eigen::Map<const RowMatrix<T>>(cols.data(), end - begin, s.patch_size()));
  }
}

// ---- im2col + Eigen: doubles, and what oneDNN has no fast kernel for ----

// out[pixels, out_c] = patches(input) * filter for output pixels [first, last).
template <typename T>
void ForwardPixels(const ConvShape& s, const T* input, const T* filter, int64_t first, int64_t last,
                   T* out) {
  Eigen::Map<const RowMatrix<T>> f(filter, s.patch_size(), s.out_c);
  ForEachPatchBlock(s, input, first, last, [&](int64_t begin, int64_t end, const auto& patches) {
    Eigen::Map<RowMatrix<T>>(out + begin * s.out_c, end - begin, s.out_c).noalias() = patches * f;
  });
}

// input_grad = col2im(out_grad * filter^T) for images [first_image, last_image) (a pixel's
// patch adds onto its own image only).
template <typename T>
void BackpropInputImages(const ConvShape& s, const T* filter, const T* out_grad,
                         int64_t first_image, int64_t last_image, T* input_grad) {
  Eigen::Map<const RowMatrix<T>> f(filter, s.patch_size(), s.out_c);
  const int64_t image_pixels = s.out_h * s.out_w;
  const int64_t image_size = s.in_h * s.in_w * s.in_c;
  std::fill(input_grad + first_image * image_size, input_grad + last_image * image_size, T(0));
  std::vector<T>& scratch = Scratch<T>();
  const int64_t last = last_image * image_pixels;
  for (int64_t begin = first_image * image_pixels; begin < last; begin += BlockPixels(s)) {
    const int64_t end = std::min(last, begin + BlockPixels(s));
    Eigen::Map<const RowMatrix<T>> dy(out_grad + begin * s.out_c, end - begin, s.out_c);
    scratch.resize(static_cast<size_t>((end - begin) * s.patch_size()));
    Eigen::Map<RowMatrix<T>> cols(scratch.data(), end - begin, s.patch_size());
    cols.noalias() = dy * f.transpose();
    Col2ImAdd(s, scratch.data(), begin, end, input_grad);
  }
}

// sum = patches(input)^T * out_grad over output pixels [first, last).
template <typename T>
void BackpropFilterPixels(const ConvShape& s, const T* input, const T* out_grad, int64_t first,
                          int64_t last, T* sum) {
  Eigen::Map<RowMatrix<T>> df(sum, s.patch_size(), s.out_c);
  df.setZero();
  ForEachPatchBlock(s, input, first, last, [&](int64_t begin, int64_t end, const auto& patches) {
    Eigen::Map<const RowMatrix<T>> dy(out_grad + begin * s.out_c, end - begin, s.out_c);
    df.noalias() += patches.transpose() * dy;
  });
}

// ---- The kernels' drivers: oneDNN for floats, split by images; im2col otherwise ----

// The convolution of `images` of `s`'s images, as onednn_conv.h takes it.
onednn::ConvGeometry GeometryOf(const ConvShape& s, int64_t images) {
  return {.batch = images,
          .in_h = s.in_h,
          .in_w = s.in_w,
          .in_c = s.in_c,
          .k_h = s.k_h,
          .k_w = s.k_w,
          .out_c = s.out_c,
          .out_h = s.out_h,
          .out_w = s.out_w,
          .stride_h = s.attrs.stride[0],
          .stride_w = s.attrs.stride[1],
          .dilation_h = s.attrs.dilation[0],
          .dilation_w = s.attrs.dilation[1],
          .pad_top = s.pad_top,
          .pad_left = s.pad_left};
}

int64_t InputImageSize(const ConvShape& s) { return s.in_h * s.in_w * s.in_c; }
int64_t OutputImageSize(const ConvShape& s) { return s.out_h * s.out_w * s.out_c; }
int64_t ImagePixels(const ConvShape& s) { return s.out_h * s.out_w; }

// Floats go to oneDNN a shard of whole images at a time (each shard on one thread); a shard
// oneDNN declines is computed by im2col. Doubles (which oneDNN has no kernels for) split
// by output pixels, which keeps a single large image parallel.
template <typename T>
void ConvForward(DeviceBase* device, const ConvShape& s, const T* input, const T* filter, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    ParallelFor(device, s.batch, MinShard(s, /*per_image=*/true), [&](int64_t first, int64_t last) {
      if (onednn::ConvForward(GeometryOf(s, last - first), input + first * InputImageSize(s),
                              filter, out + first * OutputImageSize(s))) {
        return;
      }
      ForwardPixels(s, input, filter, first * ImagePixels(s), last * ImagePixels(s), out);
    });
  } else {
    ParallelFor(device, s.pixels(), MinShard(s), [&](int64_t first, int64_t last) {
      ForwardPixels(s, input, filter, first, last, out);
    });
  }
}

template <typename T>
void ConvBackpropInput(DeviceBase* device, const ConvShape& s, const T* filter, const T* out_grad,
                       T* input_grad) {
  ParallelFor(device, s.batch, MinShard(s, /*per_image=*/true), [&](int64_t first, int64_t last) {
    if constexpr (std::is_same_v<T, float>) {
      if (onednn::ConvBackwardData(GeometryOf(s, last - first), filter,
                                   out_grad + first * OutputImageSize(s),
                                   input_grad + first * InputImageSize(s))) {
        return;
      }
    }
    BackpropInputImages(s, filter, out_grad, first, last, input_grad);
  });
}

// Each shard sums its images' (or pixels') share into its own matrix, the first into
// filter_grad; the partial sums are added up at the end.
template <typename T>
void ConvBackpropFilter(DeviceBase* device, const ConvShape& s, const T* input, const T* out_grad,
                        T* filter_grad) {
  constexpr bool by_images = std::is_same_v<T, float>;
  const int64_t units = by_images ? s.batch : s.pixels();
  const int64_t min_shard = MinShard(s, /*per_image=*/by_images);
  const int64_t shards = ParallelShards(device, units, min_shard);
  std::vector<RowMatrix<T>> partial(static_cast<size_t>(shards - 1));
  ParallelForShards(device, units, min_shard, [&](int shard, int64_t first, int64_t last) {
    T* sum = filter_grad;
    if (shard > 0) {
      RowMatrix<T>& mine = partial[static_cast<size_t>(shard - 1)];
      mine.resize(s.patch_size(), s.out_c);
      sum = mine.data();
    }
    if constexpr (by_images) {
      if (onednn::ConvBackwardWeights(GeometryOf(s, last - first),
                                      input + first * InputImageSize(s),
                                      out_grad + first * OutputImageSize(s), sum)) {
        return;
      }
      first *= ImagePixels(s);
      last *= ImagePixels(s);
    }
    BackpropFilterPixels(s, input, out_grad, first, last, sum);
  });
  Eigen::Map<RowMatrix<T>> df(filter_grad, s.patch_size(), s.out_c);
  for (const RowMatrix<T>& p : partial) df += p;
}

// The common part of the three kernels: the attributes, read once.
class ConvKernel : public OpKernel {
 public:
  explicit ConvKernel(OpKernelConstruction* c) : OpKernel(c) {
    auto attrs = ReadWindowAttrs(def(), /*is_pool=*/false);
    if (!attrs.ok()) {
      c->SetStatus(attrs.status());
      return;
    }
    attrs_ = *attrs;
  }
  bool IsExpensive() const override { return true; }

 protected:
  // Checks that `out_grad` has the shape the convolution `s` outputs.
  Status CheckOutGrad(const ConvShape& s, const Tensor& out_grad) const {
    const TensorShape expected({s.batch, s.out_h, s.out_w, s.out_c});
    if (out_grad.shape() == expected) return OkStatus();
    return errors::InvalidArgument("node ", name(), ": out_backprop has shape ",
                                   out_grad.shape().DebugString(), ", but the convolution's ",
                                   "output is ", expected.DebugString());
  }

  WindowAttrs attrs_;
};

TW_REGISTER_OP("Conv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: string")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: string = 'NHWC'")
    .Attr("dilations: list(int) = []")
    .Doc("The 2-D convolution of NHWC input with filter.");

class Conv2DOp : public ConvKernel {
 public:
  using ConvKernel::ConvKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    auto s = MakeConvShape(*this, attrs_, input.shape(), filter.shape());
    TW_OP_REQUIRES_OK(ctx, s.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(
        ctx, ctx->allocate_output(0, TensorShape({s->batch, s->out_h, s->out_w, s->out_c}), &out));
    if (out->num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ConvForward(ctx->device(), *s, input.flat<T>().data(), filter.flat<T>().data(),
                  out->flat<T>().data());
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("Conv2D", "CPU", Conv2DOp);

TW_REGISTER_OP("Conv2DBackpropInput")
    .Input("input_sizes: Tsizes")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("Tsizes: {int32, int64} = int32")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: string")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: string = 'NHWC'")
    .Attr("dilations: list(int) = []")
    .Doc("Conv2D's gradient with respect to its input, of shape input_sizes.");

class Conv2DBackpropInputOp : public ConvKernel {
 public:
  using ConvKernel::ConvKernel;
  void Compute(OpKernelContext* ctx) override {
    auto input_shape = internal::ShapeFromSizesInput(name(), ctx->input(0), "input_sizes");
    TW_OP_REQUIRES_OK(ctx, input_shape.status());
    const Tensor& filter = ctx->input(1);
    const Tensor& out_grad = ctx->input(2);
    auto s = MakeConvShape(*this, attrs_, *input_shape, filter.shape());
    TW_OP_REQUIRES_OK(ctx, s.status());
    TW_OP_REQUIRES_OK(ctx, CheckOutGrad(*s, out_grad));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *input_shape, &out));
    if (out->num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ConvBackpropInput(ctx->device(), *s, filter.flat<T>().data(), out_grad.flat<T>().data(),
                        out->flat<T>().data());
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(1)));
  }
};
TW_REGISTER_KERNEL("Conv2DBackpropInput", "CPU", Conv2DBackpropInputOp);

TW_REGISTER_OP("Conv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: Tsizes")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("Tsizes: {int32, int64} = int32")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: string")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: string = 'NHWC'")
    .Attr("dilations: list(int) = []")
    .Doc("Conv2D's gradient with respect to its filter, of shape filter_sizes.");

class Conv2DBackpropFilterOp : public ConvKernel {
 public:
  using ConvKernel::ConvKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    auto filter_shape = internal::ShapeFromSizesInput(name(), ctx->input(1), "filter_sizes");
    TW_OP_REQUIRES_OK(ctx, filter_shape.status());
    const Tensor& out_grad = ctx->input(2);
    auto s = MakeConvShape(*this, attrs_, input.shape(), *filter_shape);
    TW_OP_REQUIRES_OK(ctx, s.status());
    TW_OP_REQUIRES_OK(ctx, CheckOutGrad(*s, out_grad));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *filter_shape, &out));
    if (out->num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ConvBackpropFilter(ctx->device(), *s, input.flat<T>().data(), out_grad.flat<T>().data(),
                         out->flat<T>().data());
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("Conv2DBackpropFilter", "CPU", Conv2DBackpropFilterOp);

// ---- Gradient ----

// The forward node's window attributes, passed on to its gradient ops.
Status ConvOptionsOf(const ForwardOp& op, ops::Conv2DOptions* options) {
  TW_RETURN_IF_ERROR(op.GetAttr("strides", &options->strides));
  TW_RETURN_IF_ERROR(op.GetAttr("padding", &options->padding));
  TW_RETURN_IF_ERROR(op.GetAttr("explicit_paddings", &options->explicit_paddings));
  TW_RETURN_IF_ERROR(op.GetAttr("dilations", &options->dilations));
  return op.GetAttr("data_format", &options->data_format);
}

Status Conv2DGradient(const Scope& scope, const ForwardOp& op,
                      const std::vector<Gradient>& grad_outputs,
                      std::vector<Gradient>* grad_inputs) {
  ops::Conv2DOptions options;
  TW_RETURN_IF_ERROR(ConvOptionsOf(op, &options));
  const Output& dy = grad_outputs[0].dense;
  if (op.needs_gradient(0)) {
    (*grad_inputs)[0].dense =
        ops::Conv2DBackpropInput(scope, ops::Shape(scope, op.input(0)), op.input(1), dy, options);
  }
  if (op.needs_gradient(1)) {
    (*grad_inputs)[1].dense =
        ops::Conv2DBackpropFilter(scope, op.input(0), ops::Shape(scope, op.input(1)), dy, options);
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("Conv2D", Conv2DGradient);

// Conv2DBackpropInput is Conv2DTranspose's forward op: its gradients are a convolution
// (for out_backprop) and a filter gradient with the roles of input and output swapped.
Status Conv2DBackpropInputGradient(const Scope& scope, const ForwardOp& op,
                                   const std::vector<Gradient>& grad_outputs,
                                   std::vector<Gradient>* grad_inputs) {
  ops::Conv2DOptions options;
  TW_RETURN_IF_ERROR(ConvOptionsOf(op, &options));
  const Output& dy = grad_outputs[0].dense;
  if (op.needs_gradient(1)) {
    (*grad_inputs)[1].dense =
        ops::Conv2DBackpropFilter(scope, dy, ops::Shape(scope, op.input(1)), op.input(2), options);
  }
  if (op.needs_gradient(2)) {
    (*grad_inputs)[2].dense = ops::Conv2D(scope, dy, op.input(1), options);
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("Conv2DBackpropInput", Conv2DBackpropInputGradient);
TW_NO_GRADIENT("Conv2DBackpropFilter");

AttrMap ConvAttrs(const ops::Conv2DOptions& o) {
  return {{"strides", MakeAttr(o.strides)},
          {"padding", MakeAttr(o.padding)},
          {"explicit_paddings", MakeAttr(o.explicit_paddings)},
          {"dilations", MakeAttr(o.dilations)},
          {"data_format", MakeAttr(o.data_format)}};
}

}  // namespace

namespace ops {

Output Conv2D(const Scope& scope, Input input, Input filter, const Conv2DOptions& options) {
  return scope.AddNodeOutput("Conv2D", {{input}, {filter}}, ConvAttrs(options));
}

Output Conv2DBackpropInput(const Scope& scope, Input input_sizes, Input filter, Input out_backprop,
                           const Conv2DOptions& options) {
  return scope.AddNodeOutput("Conv2DBackpropInput", {{input_sizes}, {filter}, {out_backprop}},
                             ConvAttrs(options));
}

Output Conv2DBackpropFilter(const Scope& scope, Input input, Input filter_sizes, Input out_backprop,
                            const Conv2DOptions& options) {
  return scope.AddNodeOutput("Conv2DBackpropFilter", {{input}, {filter_sizes}, {out_backprop}},
                             ConvAttrs(options));
}

}  // namespace ops
}  // namespace tw
