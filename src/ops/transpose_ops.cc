// Array ops that permute or repeat a tensor's elements into a new shape: Transpose (with
// InvertPermutation, its gradient's helper), Tile and BroadcastTo. Definitions, CPU kernels
// and gradients; graph-building functions declared in tensorweave/ops/array_ops.h, shape
// functions in src/graph/array_shape_fns.cc.
//
// The kernels move elements by size (src/ops/element_move.h) and walk the output in order
// with running offsets: no division or modulo per element.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/element_move.h"
#include "tensorweave/ops/array_ops.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

using internal::DispatchMove;
using internal::Elements;
using internal::IndexValues;
using internal::VectorString;

// ---- Transpose ----
TW_REGISTER_OP("Transpose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {int32, int64} = int32")
    .Doc("x with its dimensions permuted: y.shape[k] = x.shape[perm[k]].");

// A transpose reduced to its essentials: dimensions of size 1 dropped and runs of input
// dimensions that stay adjacent and in order merged into one. `out_dims[k]` is the k-th
// output dimension, `in_strides[k]` the input's stride (in elements) along it.
struct TransposePlan {
  std::vector<int64_t> out_dims;
  std::vector<int64_t> in_strides;
};

TransposePlan PlanTranspose(const TensorShape& in, const std::vector<int64_t>& perm) {
  struct Group {
    int64_t first, last;  // input dimensions, inclusive
    int64_t size;
  };
  std::vector<Group> groups;  // in output order
  for (int64_t p : perm) {
    const int64_t dim = in.dim(static_cast<int>(p));
    if (dim == 1) continue;
    if (!groups.empty()) {
      // Merge when p directly follows the previous group's last input dimension, skipping
      // dimensions of size 1 in between.
      Group& g = groups.back();
      int64_t next = g.last + 1;
      while (next < p && in.dim(static_cast<int>(next)) == 1) ++next;
      if (next == p) {
        g.last = p;
        g.size *= dim;
        continue;
      }
    }
    groups.push_back({p, p, dim});
  }
  std::vector<size_t> by_input(groups.size());
  for (size_t i = 0; i < by_input.size(); ++i) by_input[i] = i;
  std::sort(by_input.begin(), by_input.end(),
            [&](size_t a, size_t b) { return groups[a].first < groups[b].first; });
  TransposePlan plan;
  plan.out_dims.resize(groups.size());
  plan.in_strides.resize(groups.size());
  int64_t stride = 1;
  for (size_t i = by_input.size(); i-- > 0;) {
    plan.in_strides[by_input[i]] = stride;
    stride *= groups[by_input[i]].size;
  }
  for (size_t k = 0; k < groups.size(); ++k) plan.out_dims[k] = groups[k].size;
  return plan;
}

// Writes the transpose `plan` (at least two dimensions) of `src` to `dst` in output order.
// The two innermost output dimensions go in 8 x 8 blocks so that reads along a large input
// stride stay within a few cache lines; larger blocks lose to cache-set conflicts when the
// stride is a power of two (bench/array_bench: 8 is 2x faster than 16 on a 1024 x 1024
// float matrix, about 4x Eigen's single-thread shuffle).
template <typename M>
void TransposeCopy(const M* src, M* dst, const TransposePlan& plan) {
  constexpr int64_t kBlock = 8;
  const size_t r = plan.out_dims.size();
  const int64_t rows = plan.out_dims[r - 2], cols = plan.out_dims[r - 1];
  const int64_t row_stride = plan.in_strides[r - 2], col_stride = plan.in_strides[r - 1];
  std::vector<int64_t> idx(r - 2, 0);
  int64_t base = 0;  // input offset of the current outer index
  while (true) {
    for (int64_t i0 = 0; i0 < rows; i0 += kBlock) {
      const int64_t i_end = std::min(i0 + kBlock, rows);
      for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
        const int64_t j_end = std::min(j0 + kBlock, cols);
        for (int64_t i = i0; i < i_end; ++i) {
          const M* s = src + base + i * row_stride + j0 * col_stride;
          M* d = dst + i * cols + j0;
          for (int64_t j = j0; j < j_end; ++j, s += col_stride) *d++ = *s;
        }
      }
    }
    dst += rows * cols;
    size_t d = r - 2;
    for (; d-- > 0;) {
      base += plan.in_strides[d];
      if (++idx[d] < plan.out_dims[d]) break;
      base -= idx[d] * plan.in_strides[d];
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) break;
  }
}

class TransposeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& perm_t = ctx->input(1);
    TW_OP_REQUIRES(ctx, perm_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": perm must be rank 1, got shape ",
                                           perm_t.shape().DebugString()));
    const int rank = x.rank();
    const std::vector<int64_t> perm = IndexValues(perm_t);
    TW_OP_REQUIRES(
        ctx, static_cast<int64_t>(perm.size()) == rank,
        errors::InvalidArgument("node ", name(), ": transpose expects a vector of size ", rank,
                                ". But input(1) is a vector of size ", perm.size()));
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    std::vector<int64_t> out_dims(static_cast<size_t>(rank));
    for (int k = 0; k < rank; ++k) {
      const int64_t d = perm[k];
      TW_OP_REQUIRES(
          ctx, d >= 0 && d < rank,
          errors::InvalidArgument("node ", name(), ": ", d, " is out of range [0 .. ", rank, ")"));
      seen[d] = true;
      out_dims[k] = x.dim(static_cast<int>(d));
    }
    for (int i = 0; i < rank; ++i) {
      TW_OP_REQUIRES(ctx, seen[i],
                     errors::InvalidArgument("node ", name(), ": ", i, " is missing from {",
                                             absl::StrJoin(perm, ","), "}."));
    }
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    const TransposePlan plan = PlanTranspose(x.shape(), perm);
    if (x.num_elements() == 0 || plan.out_dims.size() <= 1) {
      // The elements keep their order: a view of the input's buffer.
      auto view = x.Reshaped(*shape);
      TW_OP_REQUIRES_OK(ctx, view.status());
      ctx->set_output(0, *std::move(view));
      return;
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    DispatchMove(x.dtype(),
                 [&]<typename M>() { TransposeCopy(Elements<M>(x), Elements<M>(out), plan); });
  }
};
TW_REGISTER_KERNEL("Transpose", "CPU", TransposeOp);

// ---- InvertPermutation ----
TW_REGISTER_OP("InvertPermutation")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {int32, int64} = int32")
    .Doc("The inverse of the permutation x (a vector): y[x[i]] = i.");

class InvertPermutationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_OP_REQUIRES(ctx, x.rank() == 1,
                   errors::InvalidArgument("node ", name(),
                                           ": invert_permutation expects a 1D vector, got shape ",
                                           x.shape().DebugString()));
    const std::vector<int64_t> p = IndexValues(x);
    const int64_t n = static_cast<int64_t>(p.size());
    std::vector<int64_t> inverse(p.size(), -1);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t d = p[i];
      TW_OP_REQUIRES(
          ctx, d >= 0 && d < n,
          errors::InvalidArgument("node ", name(), ": ", d, " is not between 0 and ", n));
      TW_OP_REQUIRES(
          ctx, inverse[d] == -1,
          errors::InvalidArgument("node ", name(), ": ", d, " is duplicated in the input."));
      inverse[d] = i;
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    if (x.dtype() == DT_INT32) {
      std::copy(inverse.begin(), inverse.end(), out->flat<int32_t>().begin());
    } else {
      std::copy(inverse.begin(), inverse.end(), out->flat<int64_t>().begin());
    }
  }
};
TW_REGISTER_KERNEL("InvertPermutation", "CPU", InvertPermutationOp);

// ---- Tile and BroadcastTo ----

// Writes into `dst` the tiling of the input block at `src` from dimension `d` on: each
// input row copied, then each finished block repeated, so every output element is written
// once by a straight copy. `in_stride`/`out_stride` are the strides (in elements) of the
// input and output along each dimension.
template <typename M>
void TileFill(const M* src, M* dst, size_t d, const std::vector<int64_t>& dims,
              const std::vector<int64_t>& multiples, const std::vector<int64_t>& in_stride,
              const std::vector<int64_t>& out_stride) {
  const int64_t n = dims[d];
  if (d + 1 == dims.size()) {
    std::copy_n(src, n, dst);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      TileFill(src + i * in_stride[d], dst + i * out_stride[d], d + 1, dims, multiples, in_stride,
               out_stride);
    }
  }
  const int64_t block = n * out_stride[d];
  for (int64_t r = 1; r < multiples[d]; ++r) std::copy_n(dst, block, dst + r * block);
}

// The output of tiling `in` (whose dimensions are `dims`, possibly `in`'s with leading 1s)
// by `multiples`; `out` is already allocated with the product shape and is not empty.
void Tile(const Tensor& in, const std::vector<int64_t>& dims, const std::vector<int64_t>& multiples,
          Tensor* out) {
  const size_t rank = dims.size();
  DispatchMove(in.dtype(), [&]<typename M>() {
    const M* src = Elements<M>(in);
    M* dst = Elements<M>(out);
    if (rank == 0) {
      *dst = *src;
      return;
    }
    std::vector<int64_t> in_stride(rank, 1), out_stride(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) {
      in_stride[d] = in_stride[d + 1] * dims[d + 1];
      out_stride[d] = out_stride[d + 1] * dims[d + 1] * multiples[d + 1];
    }
    TileFill(src, dst, 0, dims, multiples, in_stride, out_stride);
  });
}

TW_REGISTER_OP("Tile")
    .Input("input: T")
    .Input("multiples: Tmultiples")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tmultiples: {int32, int64} = int32")
    .Doc("input repeated multiples[d] times along each dimension d.");

class TileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& multiples_t = ctx->input(1);
    const int rank = input.rank();
    TW_OP_REQUIRES(ctx, multiples_t.rank() == 1 && multiples_t.dim(0) == rank,
                   errors::InvalidArgument(
                       "node ", name(), ": Expected multiples argument to be a vector of length ",
                       rank, " but got length ",
                       multiples_t.rank() == 1 ? multiples_t.dim(0) : multiples_t.num_elements()));
    const std::vector<int64_t> multiples = IndexValues(multiples_t);
    std::vector<int64_t> out_dims(static_cast<size_t>(rank));
    bool same = true;
    for (int d = 0; d < rank; ++d) {
      TW_OP_REQUIRES(ctx, multiples[d] >= 0,
                     errors::InvalidArgument("node ", name(), ": Expected multiples[", d,
                                             "] >= 0, but got ", multiples[d]));
      TW_OP_REQUIRES(
          ctx, !__builtin_mul_overflow(input.dim(d), multiples[d], &out_dims[d]),
          errors::InvalidArgument("node ", name(), ": Tile of shape ", input.shape().DebugString(),
                                  " by ", VectorString(multiples), " is too large"));
      same = same && multiples[d] == 1;
    }
    if (same) {
      ctx->set_output(0, input);
      return;
    }
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": Tile: "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->num_elements() == 0) return;
    Tile(input, input.shape().dims(), multiples, out);
  }
};
TW_REGISTER_KERNEL("Tile", "CPU", TileOp);

TW_REGISTER_OP("BroadcastTo")
    .Input("input: T")
    .Input("shape: Tidx")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = int32")
    .Doc("input broadcast to shape by NumPy's rules (shape has at least input's rank).");

class BroadcastToOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& shape_t = ctx->input(1);
    TW_OP_REQUIRES(ctx, shape_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": shape must be a vector, got shape ",
                                           shape_t.shape().DebugString()));
    const std::vector<int64_t> out_dims = IndexValues(shape_t);
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": BroadcastTo: "));
    const int rank = static_cast<int>(out_dims.size());
    TW_OP_REQUIRES(
        ctx, input.rank() <= rank,
        errors::InvalidArgument("node ", name(), ": Rank of input (", input.rank(),
                                ") must be no greater than rank of output shape (", rank, ")."));
    // The input's dimensions aligned to the right, and how often each is repeated.
    std::vector<int64_t> dims(static_cast<size_t>(rank), 1), multiples(dims);
    bool same = true;
    for (int d = 0; d < rank; ++d) {
      const int i = d - (rank - input.rank());
      if (i >= 0) dims[d] = input.dim(i);
      if (dims[d] == out_dims[d]) continue;
      TW_OP_REQUIRES(
          ctx, dims[d] == 1,
          errors::InvalidArgument("node ", name(), ": Unable to broadcast tensor of shape ",
                                  input.shape().DebugString(), " to tensor of shape ",
                                  shape->DebugString()));
      multiples[d] = out_dims[d];
      same = false;
    }
    if (same) {  // only leading 1s added: a view of the input's buffer
      auto view = input.Reshaped(*shape);
      TW_OP_REQUIRES_OK(ctx, view.status());
      ctx->set_output(0, *std::move(view));
      return;
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->num_elements() == 0) return;
    Tile(input, dims, multiples, out);
  }
};
TW_REGISTER_KERNEL("BroadcastTo", "CPU", BroadcastToOp);

// ---- Gradients ----

Status TransposeGradient(const Scope& scope, const ForwardOp& op,
                         const std::vector<Gradient>& grad_outputs,
                         std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense =
      ops::Transpose(scope, grad_outputs[0].dense, ops::InvertPermutation(scope, op.input(1)));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Transpose", TransposeGradient);
TW_NO_GRADIENT("InvertPermutation");

// The output gradient seen as [m0, d0, m1, d1, ...] (each dimension split into its copies)
// and summed over the copies, as TensorFlow's _TileGrad.
Status TileGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  const Output& multiples = op.input(1);
  const Output input_shape = ops::Shape(scope, op.input(0), multiples.type());
  const Output split_shape =
      ops::Reshape(scope, ops::Pack(scope, {multiples, input_shape}, 1), {-1});
  // Range needs a scalar limit: the split shape's length reshaped to [].
  const Output count = ops::Reshape(scope, ops::Shape(scope, split_shape),
                                    Tensor::FromVector<int32_t>(std::vector<int32_t>{}));
  const Output axes = ops::Range(scope, 0, count, 2);
  (*grad_inputs)[0].dense =
      ops::Sum(scope, ops::Reshape(scope, grad_outputs[0].dense, split_shape), axes);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Tile", TileGradient);

// The output gradient summed over the broadcast dimensions, as TensorFlow's
// _BroadcastToGrad.
Status BroadcastToGradient(const Scope& scope, const ForwardOp& op,
                           const std::vector<Gradient>& grad_outputs,
                           std::vector<Gradient>* grad_inputs) {
  const Output& shape = op.input(1);
  const Output input_shape = ops::Shape(scope, op.input(0), shape.type());
  const auto axes = ops::BroadcastGradientArgs(scope, shape, input_shape);
  const Output summed = ops::Sum(scope, grad_outputs[0].dense, axes.r1, {.keep_dims = true});
  (*grad_inputs)[0].dense = ops::Reshape(scope, summed, input_shape);
  return OkStatus();
}
TW_REGISTER_GRADIENT("BroadcastTo", BroadcastToGradient);

}  // namespace

namespace ops {

Output Transpose(const Scope& scope, Input x, Input perm) {
  return scope.AddNodeOutput("Transpose", {{x}, {perm}});
}

Output InvertPermutation(const Scope& scope, Input x) {
  return scope.AddNodeOutput("InvertPermutation", {{x}});
}

Output Tile(const Scope& scope, Input input, Input multiples) {
  return scope.AddNodeOutput("Tile", {{input}, {multiples}});
}

Output BroadcastTo(const Scope& scope, Input input, Input shape) {
  return scope.AddNodeOutput("BroadcastTo", {{input}, {shape}});
}

}  // namespace ops
}  // namespace tw
