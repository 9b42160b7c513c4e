// GatherNd and ScatterNd: slices addressed by index tuples (the last dimension of an index
// tensor) rather than by rows. Each is the other's gradient. Definitions, CPU kernels,
// gradients and graph-building functions (declared in tensorweave/ops/index_ops.h); shape
// functions are in src/graph/index_shape_fns.cc.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_join.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/index_ops.h"

namespace tw {
namespace {

using internal::IndexValues;
using internal::VectorString;

// "[1,0]": the position of index tuple `i` among `batch` (indices.shape[:-1]); "" for none.
std::string TuplePosition(const std::vector<int64_t>& batch, int64_t i) {
  if (batch.empty()) return "";
  std::vector<int64_t> pos(batch.size());
  for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
    pos[d] = i % batch[d];
    i /= batch[d];
  }
  return VectorString(pos);
}

// The index tuples of `indices` (`n` tuples of `depth` ints) as slice numbers into the
// first `depth` dimensions of `dims`, or the first tuple that does not index into them
// (TF's "indices[1,0] = [3, 1] does not index into param shape [3,2]").
struct NdOffsets {
  std::vector<int64_t> offsets;
  int64_t bad = -1;
  std::vector<int64_t> bad_tuple;
};
NdOffsets FlatOffsets(const Tensor& indices, int64_t n, int64_t depth,
                      const std::vector<int64_t>& dims) {
  const std::vector<int64_t> idx = IndexValues(indices);
  std::vector<int64_t> strides(static_cast<size_t>(depth), 1);
  for (int64_t d = depth - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  NdOffsets r;
  r.offsets.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < depth; ++d) {
      const int64_t v = idx[i * depth + d];
      if (v < 0 || v >= dims[d]) {
        r.bad = i;
        r.bad_tuple.assign(idx.begin() + i * depth, idx.begin() + (i + 1) * depth);
        return r;
      }
      off += v * strides[d];
    }
    r.offsets[i] = off;
  }
  return r;
}

template <typename T>
void CopySlice(const T* src, T* dst, int64_t n) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else {
    std::copy_n(src, n, dst);
  }
}

// ---- GatherNd ----
TW_REGISTER_OP("GatherNd")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int32, int64}")
    .Doc(
        "Slices of params at the index tuples in the last dimension of indices: shape "
        "indices.shape[:-1] + params.shape[indices.shape[-1]:].");

class GatherNdOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    // TensorFlow's messages.
    TW_OP_REQUIRES(ctx, params.rank() >= 1,
                   errors::InvalidArgument("node ", name(), ": params must be at least a vector"));
    TW_OP_REQUIRES(ctx, indices.rank() >= 1,
                   errors::InvalidArgument("node ", name(), ": indices must be at least a vector"));
    const int64_t depth = indices.dim(indices.rank() - 1);
    TW_OP_REQUIRES(
        ctx, depth <= params.rank(),
        errors::InvalidArgument("node ", name(), ": index innermost dimension length must be <= ",
                                "params rank; saw: ", depth, " vs. ", params.rank()));
    const std::vector<int64_t>& pdims = params.shape().dims();
    std::vector<int64_t> batch(indices.shape().dims().begin(), indices.shape().dims().end() - 1);
    int64_t n = 1;
    for (int64_t b : batch) n *= b;
    int64_t slice = 1;
    for (size_t d = static_cast<size_t>(depth); d < pdims.size(); ++d) slice *= pdims[d];
    NdOffsets where = FlatOffsets(indices, n, depth, pdims);
    TW_OP_REQUIRES(ctx, where.bad < 0,
                   errors::InvalidArgument(
                       "node ", name(), ": indices", TuplePosition(batch, where.bad), " = [",
                       absl::StrJoin(where.bad_tuple, ", "), "] does not index into param shape ",
                       params.shape().DebugString()));
    std::vector<int64_t> out_dims = batch;
    out_dims.insert(out_dims.end(), pdims.begin() + depth, pdims.end());
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (slice == 0 || n == 0) return;
    DispatchType(params.dtype(), [&]<typename T>() {
      const T* src = params.flat<T>().data();
      T* dst = out->flat<T>().data();
      for (int64_t i = 0; i < n; ++i)
        CopySlice(src + where.offsets[i] * slice, dst + i * slice, slice);
    });
  }
};
TW_REGISTER_KERNEL("GatherNd", "CPU", GatherNdOp);

// ---- ScatterNd ----
TW_REGISTER_OP("ScatterNd")
    .Input("indices: Tindices")
    .Input("updates: T")
    .Input("shape: Tindices")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("Tindices: {int32, int64}")
    .Doc(
        "Zeros of `shape` with the slices of updates added at the index tuples in the last "
        "dimension of indices (duplicates add up); updates.shape must be "
        "indices.shape[:-1] + shape[indices.shape[-1]:].");

class ScatterNdOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    const Tensor& shape_t = ctx->input(2);
    TW_OP_REQUIRES(ctx, shape_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": Shape must be a 1-D vector, got ",
                                           shape_t.shape().DebugString()));
    const std::vector<int64_t> dims = IndexValues(shape_t);
    auto out_shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(out_shape.status(), "node " + name() + ": shape: "));
    // TensorFlow's checks and messages (scatter_nd_op.cc).
    TW_OP_REQUIRES(ctx, !dims.empty(),
                   errors::InvalidArgument("node ", name(), ": Output must be at least 1-D, ",
                                           "got shape: []"));
    TW_OP_REQUIRES(
        ctx, indices.rank() >= 1 && updates.rank() >= 1,
        errors::InvalidArgument("node ", name(), ": Indices and updates must have rank ",
                                "at least one, got indices.shape ", indices.shape().DebugString(),
                                " and updates.shape ", updates.shape().DebugString()));
    TW_OP_REQUIRES(ctx,
                   out_shape->num_elements() > 0 ||
                       (indices.num_elements() == 0 && updates.num_elements() == 0),
                   errors::InvalidArgument("node ", name(), ": Indices and updates specified ",
                                           "for empty output shape"));
    // Indices [n] are n tuples of one index each (as TF).
    const int irank = indices.rank();
    const int64_t depth = irank > 1 ? indices.dim(irank - 1) : 1;
    const int batch_rank = irank > 1 ? irank - 1 : 1;
    std::vector<int64_t> batch(indices.shape().dims().begin(),
                               indices.shape().dims().begin() + batch_rank);
    std::vector<int64_t> want = batch;
    if (depth <= static_cast<int64_t>(dims.size()))
      want.insert(want.end(), dims.begin() + depth, dims.end());
    TW_OP_REQUIRES(
        ctx, depth <= static_cast<int64_t>(dims.size()) && updates.shape().dims() == want,
        errors::InvalidArgument(
            "node ", name(), ": Must have updates.shape = indices.shape[:batch_dim] + ",
            "shape[slice_dim:], got updates.shape: ", updates.shape().DebugString(),
            ", indices.shape: ", indices.shape().DebugString(), ", shape: ", VectorString(dims),
            ", slice_dim: ", depth, ", and batch_dim: ", batch_rank));
    int64_t n = 1;
    for (int64_t b : batch) n *= b;
    int64_t slice = 1;
    for (size_t d = static_cast<size_t>(depth); d < dims.size(); ++d) slice *= dims[d];
    NdOffsets where = FlatOffsets(indices, n, depth, dims);
    TW_OP_REQUIRES(
        ctx, where.bad < 0,
        errors::InvalidArgument("node ", name(), ": indices", TuplePosition(batch, where.bad),
                                " = [", absl::StrJoin(where.bad_tuple, ", "),
                                "] does not index into shape ", VectorString(dims)));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    Dispatch(NumericTypes{}, updates.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = out->flat<T>().data();
      std::fill(dst, dst + out->num_elements(), T(0));
      const T* src = updates.flat<T>().data();
      for (int64_t i = 0; i < n; ++i) {
        T* o = dst + where.offsets[i] * slice;
        const T* u = src + i * slice;
        if constexpr (std::is_floating_point_v<T>) {
          for (int64_t k = 0; k < slice; ++k) o[k] += u[k];
        } else {  // integers wrap, as Add does
          using U = std::make_unsigned_t<T>;
          for (int64_t k = 0; k < slice; ++k) {
            o[k] = static_cast<T>(static_cast<U>(o[k]) + static_cast<U>(u[k]));
          }
        }
      }
    });
  }
};
TW_REGISTER_KERNEL("ScatterNd", "CPU", ScatterNdOp);

// ---- Gradients ----

// Each slice of params went to the output once per tuple naming it: the gradient adds the
// output's gradient back at the same tuples.
Status GatherNdGradient(const Scope& scope, const ForwardOp& op,
                        const std::vector<Gradient>& grad_outputs,
                        std::vector<Gradient>* grad_inputs) {
  const Output indices = op.input(1);
  const Output shape = ops::Shape(scope, op.input(0), indices.type());
  (*grad_inputs)[0].dense = ops::ScatterNd(scope, indices, grad_outputs[0].dense, shape);
  return OkStatus();
}
TW_REGISTER_GRADIENT("GatherNd", GatherNdGradient);

Status ScatterNdGradient(const Scope& scope, const ForwardOp& op,
                         const std::vector<Gradient>& grad_outputs,
                         std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[1].dense = ops::GatherNd(scope, grad_outputs[0].dense, op.input(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("ScatterNd", ScatterNdGradient);

}  // namespace

namespace ops {

Output GatherNd(const Scope& scope, Input params, Input indices) {
  return scope.AddNodeOutput("GatherNd", {{params}, {indices}});
}

Output ScatterNd(const Scope& scope, Input indices, Input updates, Input shape) {
  return scope.AddNodeOutput("ScatterNd", {{indices}, {updates}, {shape}});
}

}  // namespace ops
}  // namespace tw
