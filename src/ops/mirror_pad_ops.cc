// MirrorPad: a tensor surrounded by mirror images of its own edges (REFLECT leaves the edge
// element out of the mirror, SYMMETRIC repeats it), and MirrorPadGrad, its gradient, which
// folds each mirrored element's gradient back onto the element it copied. Pad with zeros is
// in slice_ops.cc. Definitions, CPU kernels and gradients; graph-building functions declared
// in tensorweave/ops/array_ops.h, shape functions in src/graph/array_shape_fns.cc.
//
// Both kernels walk the larger tensor in order with, per dimension, a table from its index to
// the smaller tensor's index: no division per element.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/element_move.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/array_ops.h"

namespace tw {
namespace {

using internal::IndexValues;

// For each dimension, the index into the unpadded dimension of size `dims[d]` of every
// index of the padded one; `offset` is 1 for REFLECT, 0 for SYMMETRIC.
std::vector<std::vector<int64_t>> MirrorTables(const std::vector<int64_t>& dims,
                                               const std::vector<int64_t>& paddings,
                                               int64_t offset) {
  std::vector<std::vector<int64_t>> tables(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t before = paddings[2 * d], after = paddings[2 * d + 1], n = dims[d];
    std::vector<int64_t>& t = tables[d];
    for (int64_t i = 0; i < before; ++i) t.push_back(before - 1 - i + offset);
    for (int64_t i = 0; i < n; ++i) t.push_back(i);
    for (int64_t j = 0; j < after; ++j) t.push_back(n - 1 - j - offset);
  }
  return tables;
}

// Calls fn(padded_offset, unpadded_offset) for every element of the padded tensor in order.
template <typename Fn>
void ForEachMirrored(const std::vector<int64_t>& dims,
                     const std::vector<std::vector<int64_t>>& tables, Fn&& fn) {
  const size_t rank = dims.size();
  if (rank == 0) {
    fn(0, 0);
    return;
  }
  std::vector<int64_t> stride(rank, 1);  // of the unpadded tensor
  for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * dims[d + 1];
  for (const auto& t : tables) {
    if (t.empty()) return;
  }
  std::vector<size_t> idx(rank - 1, 0);
  int64_t out = 0;
  const std::vector<int64_t>& inner = tables[rank - 1];
  while (true) {
    int64_t base = 0;
    for (size_t d = 0; d + 1 < rank; ++d) base += tables[d][idx[d]] * stride[d];
    for (int64_t from : inner) fn(out++, base + from);
    size_t d = rank - 1;
    for (; d-- > 0;) {
      if (++idx[d] < tables[d].size()) break;
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) break;
  }
}

// Reads the mode attribute: 1 for REFLECT, 0 for SYMMETRIC (the mirror's offset).
int64_t ReadMode(OpKernelConstruction* c) {
  std::string mode;
  c->SetStatus(c->GetAttr("mode", &mode));
  if (mode == "REFLECT") return 1;
  if (mode != "SYMMETRIC") {
    c->SetStatus(  // the framework names the node
        errors::InvalidArgument("mode must be REFLECT or SYMMETRIC, got '", mode, "'"));
  }
  return 0;
}

// The paddings of a [rank, 2] matrix, checked for a tensor of dimensions `dims`; for
// `padded` inputs (MirrorPadGrad) the check is on the unpadded size. Empty on error.
std::vector<int64_t> ReadPaddings(OpKernelContext* ctx, const OpKernel& k, const Tensor& input,
                                  const Tensor& paddings_t, int64_t offset, bool padded) {
  const int rank = input.rank();
  if (paddings_t.rank() != 2 || paddings_t.dim(1) != 2) {
    ctx->SetStatus(errors::InvalidArgument(
        "node ", k.name(),
        ": paddings must be a matrix with 2 columns: ", paddings_t.shape().DebugString()));
    return {};
  }
  if (paddings_t.dim(0) != rank) {
    ctx->SetStatus(errors::InvalidArgument(
        "node ", k.name(), ": The first dimension of paddings must be the rank of inputs",
        paddings_t.shape().DebugString(), ", ", input.shape().DebugString()));
    return {};
  }
  std::vector<int64_t> paddings = IndexValues(paddings_t);
  for (int d = 0; d < rank; ++d) {
    const int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
    if (before < 0 || after < 0) {
      ctx->SetStatus(errors::InvalidArgument(
          "node ", k.name(), ": Paddings must be non-negative: ", before, " ", after));
      return {};
    }
    const int64_t size = padded ? input.dim(d) - before - after : input.dim(d);
    if (before > size - offset || after > size - offset) {
      ctx->SetStatus(errors::InvalidArgument(
          "node ", k.name(), ": paddings must be no greater than the dimension size: ", before,
          ", ", after, " greater than ", size - offset));
      return {};
    }
  }
  return paddings;
}

// ---- MirrorPad ----
TW_REGISTER_OP("MirrorPad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = int32")
    .Attr("mode: string")
    .Doc(
        "input surrounded by mirror images of its edges: paddings [rank, 2] gives the elements "
        "added before and after each dimension; mode REFLECT or SYMMETRIC.");

class MirrorPadOp : public OpKernel {
 public:
  explicit MirrorPadOp(OpKernelConstruction* c) : OpKernel(c), offset_(ReadMode(c)) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const std::vector<int64_t> paddings =
        ReadPaddings(ctx, *this, input, ctx->input(1), offset_, /*padded=*/false);
    if (!ctx->status().ok()) return;
    std::vector<int64_t> out_dims = input.shape().dims();
    for (size_t d = 0; d < out_dims.size(); ++d)
      out_dims[d] += paddings[2 * d] + paddings[2 * d + 1];
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->num_elements() == 0) return;
    const auto tables = MirrorTables(input.shape().dims(), paddings, offset_);
    internal::DispatchMove(input.dtype(), [&]<typename M>() {
      const M* src = internal::Elements<M>(input);
      M* dst = internal::Elements<M>(out);
      ForEachMirrored(input.shape().dims(), tables,
                      [&](int64_t to, int64_t from) { dst[to] = src[from]; });
    });
  }

 private:
  const int64_t offset_;
};
TW_REGISTER_KERNEL("MirrorPad", "CPU", MirrorPadOp);

// ---- MirrorPadGrad ----
TW_REGISTER_OP("MirrorPadGrad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("Tpaddings: {int32, int64} = int32")
    .Attr("mode: string")
    .Doc(
        "The gradient of MirrorPad: input (shaped like MirrorPad's output) with each mirrored "
        "element added onto the element it mirrors and the padding removed.");

class MirrorPadGradOp : public OpKernel {
 public:
  explicit MirrorPadGradOp(OpKernelConstruction* c) : OpKernel(c), offset_(ReadMode(c)) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const std::vector<int64_t> paddings =
        ReadPaddings(ctx, *this, input, ctx->input(1), offset_, /*padded=*/true);
    if (!ctx->status().ok()) return;
    std::vector<int64_t> out_dims = input.shape().dims();
    for (size_t d = 0; d < out_dims.size(); ++d)
      out_dims[d] -= paddings[2 * d] + paddings[2 * d + 1];
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const auto tables = MirrorTables(out_dims, paddings, offset_);
    const bool known = Dispatch(NumericTypes{}, input.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto g = input.flat<T>();
      auto dst = out->flat<T>();
      std::fill(dst.begin(), dst.end(), T(0));
      if (out->num_elements() == 0) return;
      ForEachMirrored(out_dims, tables, [&](int64_t from, int64_t to) { dst[to] += g[from]; });
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input.dtype()));
  }

 private:
  const int64_t offset_;
};
TW_REGISTER_KERNEL("MirrorPadGrad", "CPU", MirrorPadGradOp);

// ---- Gradients ----

Status MirrorPadGradient(const Scope& scope, const ForwardOp& op,
                         const std::vector<Gradient>& grad_outputs,
                         std::vector<Gradient>* grad_inputs) {
  std::string mode;
  TW_RETURN_IF_ERROR(op.GetAttr("mode", &mode));
  (*grad_inputs)[0].dense = ops::MirrorPadGrad(scope, grad_outputs[0].dense, op.input(1), mode);
  return OkStatus();
}
TW_REGISTER_GRADIENT("MirrorPad", MirrorPadGradient);

// MirrorPadGrad is linear; its adjoint is MirrorPad (as TF's _MirrorPadGradGrad).
Status MirrorPadGradGradient(const Scope& scope, const ForwardOp& op,
                             const std::vector<Gradient>& grad_outputs,
                             std::vector<Gradient>* grad_inputs) {
  std::string mode;
  TW_RETURN_IF_ERROR(op.GetAttr("mode", &mode));
  (*grad_inputs)[0].dense = ops::MirrorPad(scope, grad_outputs[0].dense, op.input(1), mode);
  return OkStatus();
}
TW_REGISTER_GRADIENT("MirrorPadGrad", MirrorPadGradGradient);

}  // namespace

namespace ops {

Output MirrorPad(const Scope& scope, Input input, Input paddings, const std::string& mode) {
  return scope.AddNodeOutput("MirrorPad", {{input}, {paddings}}, {{"mode", MakeAttr(mode)}});
}

Output MirrorPadGrad(const Scope& scope, Input input, Input paddings, const std::string& mode) {
  return scope.AddNodeOutput("MirrorPadGrad", {{input}, {paddings}}, {{"mode", MakeAttr(mode)}});
}

}  // namespace ops
}  // namespace tw
