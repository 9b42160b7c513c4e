// Array ops that cut a tensor into pieces along one dimension: Split (equal pieces) and
// SplitV (pieces of given sizes, one of them -1 for the rest); each one's gradient joins the
// pieces' gradients with Concat. Definitions, CPU kernels and gradients; graph-building
// functions declared in tensorweave/ops/array_ops.h, shape functions in
// src/graph/array_shape_fns.cc.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/element_move.h"
#include "tensorweave/ops/array_ops.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

using internal::DispatchMove;
using internal::Elements;
using internal::IndexValues;

// The pieces of `input` along dimension `axis` with the sizes `sizes` (summing to the
// dimension) as outputs 0, 1, ...: views of the input's buffer when the pieces are
// contiguous (nothing but dimensions of 1 before `axis`), copies otherwise.
void SetPieces(OpKernelContext* ctx, const Tensor& input, int axis,
               const std::vector<int64_t>& sizes) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= input.dim(d);
  for (int d = axis + 1; d < input.rank(); ++d) inner *= input.dim(d);
  const int64_t total = input.dim(axis);
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> dims = input.shape().dims();
    dims[axis] = sizes[i];
    auto shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    if (outer == 1 && input.num_elements() > 0) {
      auto flat = input.Reshaped(TensorShape({total, inner}));
      TW_OP_REQUIRES_OK(ctx, flat.status());
      auto rows = flat->Slice(offset, offset + sizes[i]);
      TW_OP_REQUIRES_OK(ctx, rows.status());
      auto view = rows->Reshaped(*shape);
      TW_OP_REQUIRES_OK(ctx, view.status());
      ctx->set_output(static_cast<int>(i), *std::move(view));
    } else {
      Tensor* out = nullptr;
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(i), *shape, &out));
      const int64_t run = sizes[i] * inner;
      if (run > 0) {
        DispatchMove(input.dtype(), [&]<typename M>() {
          const M* src = Elements<M>(input) + offset * inner;
          M* dst = Elements<M>(out);
          for (int64_t o = 0; o < outer; ++o, src += total * inner, dst += run) {
            std::copy_n(src, run, dst);
          }
        });
      }
    }
    offset += sizes[i];
  }
}

// The split dimension from the scalar `t`, checked against `input`'s rank; -1 on error.
int SplitAxis(OpKernelContext* ctx, const OpKernel& k, const Tensor& t, const Tensor& input) {
  const int rank = input.rank();
  if (t.num_elements() != 1) {
    ctx->SetStatus(errors::InvalidArgument(
        "node ", k.name(), ": split_dim must be a scalar, got shape ", t.shape().DebugString()));
    return -1;
  }
  const int64_t axis = IndexValues(t)[0];
  if (axis < -rank || axis >= rank) {
    ctx->SetStatus(errors::InvalidArgument("node ", k.name(), ": -input rank(-", rank,
                                           ") <= split_dim < input rank (", rank, "), but got ",
                                           axis));
    return -1;
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// ---- Split ----
TW_REGISTER_OP("Split")
    .Input("split_dim: int32")
    .Input("value: T")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Doc("value cut along split_dim into num_split pieces of equal size.");

class SplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(1);
    const int axis = SplitAxis(ctx, *this, ctx->input(0), input);
    if (axis < 0) return;
    const int64_t n = num_outputs();
    TW_OP_REQUIRES(ctx, input.dim(axis) % n == 0,
                   errors::InvalidArgument(
                       "node ", name(),
                       ": Number of ways to split should evenly divide the split dimension, but "
                       "got split_dim ",
                       axis, " (size = ", input.dim(axis), ") and num_split ", n));
    SetPieces(ctx, input, axis, std::vector<int64_t>(static_cast<size_t>(n), input.dim(axis) / n));
  }
};
TW_REGISTER_KERNEL("Split", "CPU", SplitOp);

// ---- SplitV ----
TW_REGISTER_OP("SplitV")
    .Input("value: T")
    .Input("size_splits: Tlen")
    .Input("split_dim: int32")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Attr("Tlen: {int32, int64} = int64")
    .Doc(
        "value cut along split_dim into pieces of the sizes size_splits; one size may be -1: "
        "the rest of the dimension.");

class SplitVOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes_t = ctx->input(1);
    const int axis = SplitAxis(ctx, *this, ctx->input(2), input);
    if (axis < 0) return;
    TW_OP_REQUIRES(
        ctx, sizes_t.rank() == 1 && sizes_t.num_elements() == num_outputs(),
        errors::InvalidArgument(
            "node ", name(),
            ": size of the split_tensor must be 1-D and have the same elements as outputs got ",
            sizes_t.rank(), " -D and ", sizes_t.num_elements(), " elements"));
    std::vector<int64_t> sizes = IndexValues(sizes_t);
    int unknown = -1;
    int64_t determined = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1) {
        TW_OP_REQUIRES(
            ctx, unknown == -1,
            errors::InvalidArgument("node ", name(), ": There can only be one -1 in the input."));
        unknown = static_cast<int>(i);
        continue;
      }
      TW_OP_REQUIRES(ctx, sizes[i] >= 0,
                     errors::InvalidArgument("node ", name(), ": Split size at index ", i,
                                             " must be >= 0. Got: ", sizes[i]));
      determined += sizes[i];
    }
    const int64_t dim = input.dim(axis);
    TW_OP_REQUIRES(
        ctx, (unknown == -1 && determined == dim) || (unknown != -1 && determined <= dim),
        errors::InvalidArgument(
            "node ", name(),
            ": Determined shape must either match input shape along split_dim exactly if fully "
            "specified, or be less than the size of the input along split_dim if not fully "
            "specified.  Got: ",
            determined));
    if (unknown != -1) sizes[unknown] = dim - determined;
    SetPieces(ctx, input, axis, sizes);
  }
};
TW_REGISTER_KERNEL("SplitV", "CPU", SplitVOp);

// ---- Gradients ----

// The pieces' gradients joined along the split dimension, zeros for pieces nothing used.
Output JoinPieces(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grads,
                  const Output& axis) {
  InputList pieces;
  for (int k = 0; k < op.num_outputs(); ++k) {
    pieces.push_back(grads[k].exists() ? grads[k].dense : ops::ZerosLike(scope, op.output(k)));
  }
  return ops::Concat(scope, pieces, axis);
}

Status SplitGradient(const Scope& scope, const ForwardOp& op,
                     const std::vector<Gradient>& grad_outputs,
                     std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[1].dense = JoinPieces(scope, op, grad_outputs, op.input(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Split", SplitGradient);

Status SplitVGradient(const Scope& scope, const ForwardOp& op,
                      const std::vector<Gradient>& grad_outputs,
                      std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = JoinPieces(scope, op, grad_outputs, op.input(2));
  return OkStatus();
}
TW_REGISTER_GRADIENT("SplitV", SplitVGradient);

std::vector<Output> AllOutputs(const Operation& op) {
  std::vector<Output> outputs;
  for (int i = 0; i < op.num_outputs(); ++i) outputs.emplace_back(op, i);
  return outputs;
}

}  // namespace

namespace ops {

std::vector<Output> Split(const Scope& scope, Input axis, Input value, int num_split) {
  return AllOutputs(
      scope.AddNode("Split", {{axis}, {value}}, {{"num_split", MakeAttr(num_split)}}));
}

std::vector<Output> SplitV(const Scope& scope, Input value, Input size_splits, Input axis,
                           int num_split) {
  return AllOutputs(scope.AddNode("SplitV", {{value}, {size_splits}, {axis}},
                                  {{"num_split", MakeAttr(num_split)}}));
}

}  // namespace ops
}  // namespace tw
