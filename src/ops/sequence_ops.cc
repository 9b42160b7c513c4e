// Array ops that make or walk sequences: Range (an arithmetic sequence), OneHot (indices
// spelled out along a new dimension), ReverseV2 (dimensions walked backwards) and Cumsum
// (running sums along a dimension). Definitions, CPU kernels and gradients; graph-building
// functions declared in tensorweave/ops/array_ops.h, shape functions in
// src/graph/array_shape_fns.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/element_move.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/array_ops.h"

namespace tw {
namespace {

// ---- Range ----
TW_REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr("Tidx: {float, double, int32, int64} = int32")
    .Doc("start, start + delta, ... up to but not including limit.");

// The number of elements of Range(start, limit, delta), as TensorFlow counts them;
// preconditions: delta != 0 and limit is on delta's side of start.
template <typename T>
int64_t RangeSize(T start, T limit, T delta) {
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::abs(static_cast<int64_t>(delta));
    return (span + step - 1) / step;
  } else {
    return static_cast<int64_t>(std::ceil(std::abs((limit - start) / delta)));
  }
}

class RangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const char* kNames[] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; ++i) {
      TW_OP_REQUIRES(
          ctx, ctx->input(i).num_elements() == 1 && ctx->input(i).rank() <= 1,
          errors::InvalidArgument("node ", name(), ": ", kNames[i], " must be a scalar, not shape ",
                                  ctx->input(i).shape().DebugString()));
    }
    const bool known = Dispatch(NumericTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Compute<T>(ctx, ctx->input(0).flat<T>()[0], ctx->input(1).flat<T>()[0],
                 ctx->input(2).flat<T>()[0]);
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }

 private:
  template <typename T>
  void Compute(OpKernelContext* ctx, T start, T limit, T delta) {
    TW_OP_REQUIRES(ctx, delta != 0,
                   errors::InvalidArgument("node ", name(), ": Requires delta != 0: ", delta));
    if (delta > 0) {
      TW_OP_REQUIRES(
          ctx, start <= limit,
          errors::InvalidArgument("node ", name(),
                                  ": Requires start <= limit when delta > 0: ", start, "/", limit));
    } else {
      TW_OP_REQUIRES(
          ctx, start >= limit,
          errors::InvalidArgument("node ", name(),
                                  ": Requires start >= limit when delta < 0: ", start, "/", limit));
    }
    const int64_t size = RangeSize(start, limit, delta);
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({size}), &out));
    auto values = out->flat<T>();
    T value = start;
    for (int64_t i = 0; i < size; ++i, value += delta) values[i] = value;
  }
};
TW_REGISTER_KERNEL("Range", "CPU", RangeOp);
TW_NO_GRADIENT("Range");

// ---- OneHot ----
TW_REGISTER_OP("OneHot")
    .Input("indices: TI")
    .Input("depth: int32")
    .Input("on_value: T")
    .Input("off_value: T")
    .Output("output: T")
    .Attr("axis: int = -1")
    .Attr("T: type")
    .Attr("TI: {uint8, int32, int64} = int64")
    .Doc(
        "on_value where a new dimension of size depth (at axis, -1 the last) equals indices, "
        "off_value elsewhere; an index outside [0, depth) gives a row of off_value.");

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const int out_rank = indices.rank() + 1;
    TW_OP_REQUIRES(
        ctx, axis_ == -1 || (axis_ >= 0 && axis_ < out_rank),
        errors::InvalidArgument("node ", name(), ": Expected axis to be -1 or between [0, ",
                                out_rank, ").  But received: ", axis_));
    const char* kNames[] = {"depth", "on_value", "off_value"};
    for (int i = 1; i < 4; ++i) {
      TW_OP_REQUIRES(ctx, ctx->input(i).rank() == 0,
                     errors::InvalidArgument(
                         "node ", name(), ": ", kNames[i - 1],
                         " must be a scalar, but got: ", ctx->input(i).shape().DebugString()));
    }
    const int64_t depth = ctx->input(1).scalar<int32_t>();
    TW_OP_REQUIRES(
        ctx, depth >= 0,
        errors::InvalidArgument("node ", name(), ": depth must be non-negative, got: ", depth));
    const int axis = axis_ == -1 ? out_rank - 1 : static_cast<int>(axis_);
    std::vector<int64_t> dims = indices.shape().dims();
    dims.insert(dims.begin() + axis, depth);
    auto shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": OneHot: "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    // Output [prefix, depth, suffix]: the indices' dimensions before and after axis.
    int64_t suffix = 1;
    for (int d = axis; d < indices.rank(); ++d) suffix *= indices.dim(d);
    const std::vector<int64_t> index =
        internal::IndexValues(indices.dtype() == DT_UINT8 ? Widened(indices) : indices);
    internal::DispatchMove(out->dtype(), [&]<typename M>() {
      M* dst = internal::Elements<M>(out);
      const M& on = *internal::Elements<M>(ctx->input(2));
      const M& off = *internal::Elements<M>(ctx->input(3));
      std::fill_n(dst, out->num_elements(), off);
      for (size_t i = 0; i < index.size(); ++i) {
        const int64_t k = index[i];
        if (k < 0 || k >= depth) continue;
        const int64_t p = static_cast<int64_t>(i) / suffix, s = static_cast<int64_t>(i) % suffix;
        dst[(p * depth + k) * suffix + s] = on;
      }
    });
  }

 private:
  // uint8 indices as int64, for IndexValues.
  static Tensor Widened(const Tensor& t) {
    auto v = t.flat<uint8_t>();
    return Tensor::FromVector<int64_t>(std::vector<int64_t>(v.begin(), v.end()), t.shape());
  }
  int64_t axis_ = -1;
};
TW_REGISTER_KERNEL("OneHot", "CPU", OneHotOp);
TW_NO_GRADIENT("OneHot");  // as TF: no gradient reaches on_value, off_value or the indices

// ---- ReverseV2 ----
TW_REGISTER_OP("ReverseV2")
    .Input("tensor: T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("Tidx: {int32, int64} = int32")
    .Attr("T: type")
    .Doc("tensor with the dimensions listed in axis (negative counts from the end) reversed.");

// Copies the block of dimension `d` on from `src` to `dst`, walking the dimensions in
// `reversed` backwards; dimensions after `last` (none reversed) move as one run of `run`.
template <typename M>
void ReverseCopy(const M* src, M* dst, size_t d, size_t last, const std::vector<int64_t>& dims,
                 const std::vector<bool>& reversed, const std::vector<int64_t>& stride,
                 int64_t run) {
  const int64_t n = dims[d];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t from = reversed[d] ? n - 1 - i : i;
    if (d == last) {
      std::copy_n(src + from * run, run, dst + i * run);
    } else {
      ReverseCopy(src + from * stride[d], dst + i * stride[d], d + 1, last, dims, reversed, stride,
                  run);
    }
  }
}

class ReverseV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    TW_OP_REQUIRES(ctx, axis_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": 'dims' must be 1-dimension, not ",
                                           axis_t.rank()));
    const int rank = input.rank();
    std::vector<bool> reversed(static_cast<size_t>(rank), false);
    const std::vector<int64_t> axes = internal::IndexValues(axis_t);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = axes[i];
      TW_OP_REQUIRES(ctx, a >= -rank && a < rank,
                     errors::InvalidArgument("node ", name(), ": 'axis'[", i, "] = ", a,
                                             " is out of valid range [0, ", rank - 1, "]"));
      const int64_t canonical = a < 0 ? a + rank : a;
      TW_OP_REQUIRES(ctx, !reversed[canonical],
                     errors::InvalidArgument("node ", name(), ": axis ", canonical,
                                             " specified more than once."));
      reversed[canonical] = true;
    }
    int last = -1;  // the last dimension walked backwards that has more than one element
    for (int d = 0; d < rank; ++d) {
      if (reversed[d] && input.dim(d) > 1) last = d;
    }
    if (last == -1 || input.num_elements() == 0) {
      ctx->set_output(0, input);  // nothing moves
      return;
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    std::vector<int64_t> stride(static_cast<size_t>(rank), 1);
    for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * input.dim(d + 1);
    internal::DispatchMove(input.dtype(), [&]<typename M>() {
      ReverseCopy(internal::Elements<M>(input), internal::Elements<M>(out), 0,
                  static_cast<size_t>(last), input.shape().dims(), reversed, stride, stride[last]);
    });
  }
};
TW_REGISTER_KERNEL("ReverseV2", "CPU", ReverseV2Op);

// ---- Cumsum ----
TW_REGISTER_OP("Cumsum")
    .Input("x: T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Attr("T: {float, double, int32, int64}")
    .Attr("Tidx: {int32, int64} = int32")
    .Doc(
        "Running sums of x along axis: from the end when reverse, each one without its own "
        "element when exclusive.");

class CumsumOp : public OpKernel {
 public:
  explicit CumsumOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("exclusive", &exclusive_));
    c->SetStatus(c->GetAttr("reverse", &reverse_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    TW_OP_REQUIRES(ctx, axis_t.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": ScanOp: axis must be a scalar, not ",
                                           axis_t.shape().DebugString()));
    const int rank = x.rank();
    int64_t axis = internal::IndexValues(axis_t)[0];
    TW_OP_REQUIRES(
        ctx, axis >= -rank && axis < rank,
        errors::InvalidArgument("node ", name(), ": ScanOp: Expected scan axis in the range [",
                                -rank, ", ", rank, "), but got ", axis));
    if (axis < 0) axis += rank;
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = static_cast<int>(axis) + 1; d < rank; ++d) inner *= x.dim(d);
    const int64_t length = x.dim(static_cast<int>(axis));
    const bool known = Dispatch(NumericTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Scan<T>(x.flat<T>().data(), out->flat<T>().data(), outer, length, inner);
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, x.dtype()));
  }

 private:
  // Each row of `inner` elements is added to a running row: the rows of one outer index
  // run contiguously, so the inner loop vectorizes.
  template <typename T>
  void Scan(const T* x, T* y, int64_t outer, int64_t length, int64_t inner) const {
    std::vector<T> acc(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t step = 0; step < length; ++step) {
        const int64_t k = reverse_ ? length - 1 - step : step;
        const T* src = x + (o * length + k) * inner;
        T* dst = y + (o * length + k) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          const T v = src[j];
          if (exclusive_) dst[j] = acc[j];
          acc[j] += v;
          if (!exclusive_) dst[j] = acc[j];
        }
      }
    }
  }
  bool exclusive_ = false;
  bool reverse_ = false;
};
TW_REGISTER_KERNEL("Cumsum", "CPU", CumsumOp);

// ---- Gradients ----

Status ReverseV2Gradient(const Scope& scope, const ForwardOp& op,
                         const std::vector<Gradient>& grad_outputs,
                         std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::ReverseV2(scope, grad_outputs[0].dense, op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("ReverseV2", ReverseV2Gradient);

// Each x[k] enters the sums on its other side: the gradient's cumsum the other way.
Status CumsumGradient(const Scope& scope, const ForwardOp& op,
                      const std::vector<Gradient>& grad_outputs,
                      std::vector<Gradient>* grad_inputs) {
  bool exclusive = false, reverse = false;
  TW_RETURN_IF_ERROR(op.GetAttr("exclusive", &exclusive));
  TW_RETURN_IF_ERROR(op.GetAttr("reverse", &reverse));
  (*grad_inputs)[0].dense = ops::Cumsum(scope, grad_outputs[0].dense, op.input(1),
                                        {.exclusive = exclusive, .reverse = !reverse});
  return OkStatus();
}
TW_REGISTER_GRADIENT("Cumsum", CumsumGradient);

}  // namespace

namespace ops {

Output OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value,
              int axis) {
  return scope.AddNodeOutput("OneHot", {{indices}, {depth}, {on_value}, {off_value}},
                             {{"axis", MakeAttr(axis)}});
}

Output ReverseV2(const Scope& scope, Input tensor, Input axis) {
  return scope.AddNodeOutput("ReverseV2", {{tensor}, {axis}});
}

Output Cumsum(const Scope& scope, Input x, Input axis, const CumsumOptions& options) {
  return scope.AddNodeOutput(
      "Cumsum", {{x}, {axis}},
      {{"exclusive", MakeAttr(options.exclusive)}, {"reverse", MakeAttr(options.reverse)}});
}

Output Range(const Scope& scope, Input start, Input limit, Input delta) {
  return scope.AddNodeOutput("Range", {{start}, {limit}, {delta}});
}

}  // namespace ops
}  // namespace tw
