// Array ops on a box of a tensor: Slice takes one out, Pad surrounds one with zeros (each is
// the other's gradient); MirrorPad is in mirror_pad_ops.cc. StridedSlice has its own file
// (strided_slice_ops.cc). Definitions, CPU kernels, gradients and graph-building functions
// (declared in tensorweave/ops/basic_ops.h).
//
// The kernels are written once as templates over the C++ element type and dispatched on the
// dtype at run time; most take every type, strings and resource handles included.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

using internal::IndexValues;

// ---- Slice ----
TW_REGISTER_OP("Slice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("size: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Doc(
        "The part of input starting at begin with extent size in each dimension; a size of -1 "
        "takes the rest of that dimension.");

// Copies the box of `in` starting at `begin` with the dimensions of `out` into `out`.
template <typename T>
void SliceCopy(const Tensor& in, const std::vector<int64_t>& begin, Tensor* out) {
  auto src = in.flat<T>();
  auto dst = out->flat<T>();
  if (dst.empty()) return;
  const int rank = in.rank();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  // Trailing dimensions taken whole join the innermost sliced one into a contiguous run.
  int inner = rank - 1;
  int64_t run = out->dim(inner);
  while (inner > 0 && out->dim(inner) == in.dim(inner)) {
    --inner;
    run *= out->dim(inner);
  }
  std::vector<int64_t> stride(rank, 1);  // of the input
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * in.dim(d + 1);
  std::vector<int64_t> idx(inner, 0);  // position in the output's dimensions before `inner`
  auto it = dst.begin();
  while (true) {
    int64_t from = begin[inner] * stride[inner];
    for (int d = 0; d < inner; ++d) from += (begin[d] + idx[d]) * stride[d];
    it = std::copy_n(src.begin() + from, run, it);
    int d = inner - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < out->dim(d)) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

class SliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& begin_t = ctx->input(1);
    const Tensor& size_in = ctx->input(2);
    const int rank = input.rank();
    TW_OP_REQUIRES(ctx,
                   begin_t.rank() == 1 && size_in.rank() == 1 && begin_t.dim(0) == rank &&
                       size_in.dim(0) == rank,
                   errors::InvalidArgument(
                       "node ", name(), ": Slice of input shape ", input.shape().DebugString(),
                       " needs begin and size vectors of ", rank, " elements, got shapes ",
                       begin_t.shape().DebugString(), " and ", size_in.shape().DebugString()));
    const std::vector<int64_t> begin = IndexValues(begin_t);
    std::vector<int64_t> size = IndexValues(size_in);
    bool rows_only = true;  // the slice is a range of whole rows along dimension 0
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = input.dim(d);
      TW_OP_REQUIRES(ctx, begin[d] >= 0 && begin[d] <= dim,
                     errors::InvalidArgument("node ", name(), ": Slice begin[", d, "] = ", begin[d],
                                             " is not in [0, ", dim, "] for input shape ",
                                             input.shape().DebugString()));
      if (size[d] == -1) size[d] = dim - begin[d];
      TW_OP_REQUIRES(ctx, size[d] >= 0 && size[d] <= dim - begin[d],
                     errors::InvalidArgument("node ", name(), ": Slice size[", d, "] = ", size[d],
                                             " is not -1 or in [0, ", dim - begin[d],
                                             "] for begin[", d, "] = ", begin[d],
                                             " and input shape ", input.shape().DebugString()));
      if (d > 0 && size[d] != dim) rows_only = false;
    }
    if (rank > 0 && rows_only) {
      // Whole rows are contiguous: view them in place, as Tensor::Slice shares the buffer.
      auto view = input.Slice(begin[0], begin[0] + size[0]);
      TW_OP_REQUIRES_OK(ctx, view.status());
      ctx->set_output(0, *std::move(view));
      return;
    }
    auto shape = TensorShape::Create(size);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    DispatchType(input.dtype(), [&]<typename T>() { SliceCopy<T>(input, begin, out); });
  }
};
TW_REGISTER_KERNEL("Slice", "CPU", SliceOp);

// ---- Pad ----
TW_REGISTER_OP("Pad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64, uint8, bool}")
    .Attr("Tpaddings: {int32, int64} = int32")
    .Doc(
        "input surrounded by zeros: paddings [rank, 2] gives the elements added before and "
        "after each dimension.");

class PadOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& paddings_t = ctx->input(1);
    const int rank = input.rank();
    TW_OP_REQUIRES(
        ctx, paddings_t.rank() == 2 && paddings_t.dim(0) == rank && paddings_t.dim(1) == 2,
        errors::InvalidArgument("node ", name(), ": Pad of input shape ",
                                input.shape().DebugString(), " needs paddings of shape [", rank,
                                ",2], got ", paddings_t.shape().DebugString()));
    const std::vector<int64_t> paddings = IndexValues(paddings_t);
    std::vector<int64_t> out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      const int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
      TW_OP_REQUIRES(ctx, before >= 0 && after >= 0,
                     errors::InvalidArgument("node ", name(), ": Pad paddings must be >= 0, got [",
                                             before, ",", after, "] for dimension ", d));
      out_dims[d] = input.dim(d) + before + after;
    }
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": Pad: "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    DispatchNumeric(input.dtype(), [&]<typename T>() {
      auto dst = out->flat<T>();
      std::fill(dst.begin(), dst.end(), T(0));
      auto src = input.flat<T>();
      if (src.empty()) return;
      if (rank == 0) {
        dst[0] = src[0];
        return;
      }
      // Copy the input row by row (its innermost dimension) into the box at `before`.
      std::vector<int64_t> stride(rank, 1);  // of the output
      for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * out_dims[d + 1];
      const int64_t row = input.dim(rank - 1);
      std::vector<int64_t> idx(rank - 1, 0);
      for (int64_t from = 0; from < static_cast<int64_t>(src.size()); from += row) {
        int64_t to = paddings[2 * (rank - 1)];
        for (int d = 0; d < rank - 1; ++d) to += (idx[d] + paddings[2 * d]) * stride[d];
        std::copy_n(src.begin() + from, row, dst.begin() + to);
        for (int d = rank - 2; d >= 0; --d) {
          if (++idx[d] < input.dim(d)) break;
          idx[d] = 0;
        }
      }
    });
  }
};
TW_REGISTER_KERNEL("Pad", "CPU", PadOp);

// ---- Gradients ----

// The output gradient padded back to the input's shape with zeros.
Status SliceGradient(const Scope& scope, const ForwardOp& op,
                     const std::vector<Gradient>& grad_outputs,
                     std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  const Output& begin = op.input(1);
  const Output after = ops::Sub(scope,
                                ops::Sub(scope, ops::Shape(scope, op.input(0), begin.type()),
                                         ops::Shape(scope, g, begin.type())),
                                begin);
  (*grad_inputs)[0].dense = ops::Pad(scope, g, ops::Pack(scope, {begin, after}, 1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Slice", SliceGradient);

// The input's box of the output gradient, at the `before` paddings.
Status PadGradient(const Scope& scope, const ForwardOp& op,
                   const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  const Output& paddings = op.input(1);
  const Output begin = ops::Reshape(scope, ops::Slice(scope, paddings, {0, 0}, {-1, 1}), {-1});
  (*grad_inputs)[0].dense = ops::Slice(scope, grad_outputs[0].dense, begin,
                                       ops::Shape(scope, op.input(0), paddings.type()));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Pad", PadGradient);

}  // namespace

namespace ops {

Output Slice(const Scope& scope, Input input, Input begin, Input size) {
  return scope.AddNodeOutput("Slice", {{input}, {begin}, {size}});
}

Output Pad(const Scope& scope, Input input, Input paddings) {
  return scope.AddNodeOutput("Pad", {{input}, {paddings}});
}

}  // namespace ops
}  // namespace tw
