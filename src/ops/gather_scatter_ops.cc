// Array ops that move rows by an index tensor: Gather picks them, UnsortedSegmentSum adds them
// up by segment (Gather's gradient, densified, and the other way round). Coming here:
// GatherNd and ScatterNd. Definitions, CPU kernels, gradients (GatherGradientSlices,
// src/ops/array_grad.h, is shared with the variables' sparse reads) and graph-building
// functions (declared in tensorweave/ops/basic_ops.h).
//
// The kernels are written once as templates over the C++ element type and dispatched on the
// dtype at run time; most take every type, strings and resource handles included.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_grad.h"
#include "src/ops/array_util.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

using internal::IndexValues;
using internal::VectorString;

// ---- Gather ----
TW_REGISTER_OP("Gather")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int32, int64}")
    .Doc(
        "Rows of params (along dimension 0) picked by indices: output shape is indices.shape + "
        "params.shape[1:]. Every index must be in [0, params.shape[0]).");

// "[1,0]": the position of flat element `i` in a tensor of `shape`.
// Empty for a scalar.
std::string PositionString(const TensorShape& shape, int64_t i) {
  if (shape.rank() == 0) return "";
  std::vector<int64_t> pos(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    pos[d] = i % shape.dim(d);
    i /= shape.dim(d);
  }
  return VectorString(pos);
}

class GatherOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices_t = ctx->input(1);
    TW_OP_REQUIRES(ctx, params.rank() >= 1,
                   errors::InvalidArgument("node ", name(), ": Gather params must be at least ",
                                           "1-D, got shape ", params.shape().DebugString()));
    const int64_t limit = params.dim(0);
    const std::vector<int64_t> indices = IndexValues(indices_t);
    for (size_t i = 0; i < indices.size(); ++i) {
      TW_OP_REQUIRES(
          ctx, indices[i] >= 0 && indices[i] < limit,
          errors::InvalidArgument("node ", name(), ": Gather indices",
                                  PositionString(indices_t.shape(), static_cast<int64_t>(i)), " = ",
                                  indices[i], " is not in [0, ", limit, ") (params shape ",
                                  params.shape().DebugString(), ")"));
    }
    std::vector<int64_t> out_dims = indices_t.shape().dims();
    out_dims.insert(out_dims.end(), params.shape().dims().begin() + 1, params.shape().dims().end());
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": Gather: "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t row = limit == 0 ? 0 : params.num_elements() / limit;
    if (row == 0) return;
    DispatchType(params.dtype(), [&]<typename T>() {
      auto src = params.flat<T>();
      auto it = out->flat<T>().begin();
      for (int64_t index : indices) it = std::copy_n(src.begin() + index * row, row, it);
    });
  }
};
TW_REGISTER_KERNEL("Gather", "CPU", GatherOp);

// ---- UnsortedSegmentSum ----
TW_REGISTER_OP("UnsortedSegmentSum")
    .Input("data: T")
    .Input("segment_ids: Tindices")
    .Input("num_segments: Tnumsegments")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("Tindices: {int32, int64}")
    .Attr("Tnumsegments: {int32, int64} = int32")
    .Doc(
        "output[k] = the sum of the rows data[i] with segment_ids[i] == k (0 for none); "
        "data.shape starts with segment_ids.shape and output has shape "
        "[num_segments] + data.shape[segment_ids.rank:]. Negative ids drop their rows.");

class UnsortedSegmentSumOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids_t = ctx->input(1);
    const Tensor& num_t = ctx->input(2);
    TW_OP_REQUIRES(ctx, num_t.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": num_segments must be a scalar, ",
                                           "got shape ", num_t.shape().DebugString()));
    const int64_t num = IndexValues(num_t)[0];
    TW_OP_REQUIRES(ctx, num >= 0,
                   errors::InvalidArgument("node ", name(), ": num_segments = ", num, " < 0"));
    const std::vector<int64_t>& data_dims = data.shape().dims();
    const std::vector<int64_t>& id_dims = ids_t.shape().dims();
    TW_OP_REQUIRES(ctx,
                   id_dims.size() <= data_dims.size() &&
                       std::equal(id_dims.begin(), id_dims.end(), data_dims.begin()),
                   errors::InvalidArgument("node ", name(), ": data shape ",
                                           data.shape().DebugString(), " does not start with ",
                                           "segment_ids shape ", ids_t.shape().DebugString()));
    const std::vector<int64_t> ids = IndexValues(ids_t);
    for (size_t i = 0; i < ids.size(); ++i) {
      TW_OP_REQUIRES(ctx, ids[i] < num,
                     errors::InvalidArgument("node ", name(), ": segment_ids",
                                             PositionString(ids_t.shape(), static_cast<int64_t>(i)),
                                             " = ", ids[i], " is not in [0, ", num, ")"));
    }
    std::vector<int64_t> out_dims{num};
    out_dims.insert(out_dims.end(), data_dims.begin() + static_cast<int64_t>(id_dims.size()),
                    data_dims.end());
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t row = num == 0 ? 0 : out->num_elements() / num;
    Dispatch(TypeList<float, double, int32_t, int64_t>{}, data.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto dst = out->flat<T>();
      std::fill(dst.begin(), dst.end(), T(0));
      auto src = data.flat<T>();
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0) continue;
        T* o = dst.data() + ids[i] * row;
        const T* in = src.data() + static_cast<int64_t>(i) * row;
        if constexpr (std::is_floating_point_v<T>) {
          for (int64_t k = 0; k < row; ++k) o[k] += in[k];
        } else {  // integers wrap, as Add does
          for (int64_t k = 0; k < row; ++k) {
            o[k] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(o[k]) +
                                  static_cast<std::make_unsigned_t<T>>(in[k]));
          }
        }
      }
    });
  }
};
TW_REGISTER_KERNEL("UnsortedSegmentSum", "CPU", UnsortedSegmentSumOp);

// ---- Gradients ----

// Rows of params picked by indices: the gradient touches those rows only, so it stays
// sparse. Indices of any shape are flattened, with the gradient's rows to match.
Status GatherGradient(const Scope& scope, const ForwardOp& op,
                      const std::vector<Gradient>& grad_outputs,
                      std::vector<Gradient>* grad_inputs) {
  const Output dense_shape = ops::Shape(scope, op.input(0), DT_INT64);
  (*grad_inputs)[0].sparse =
      GatherGradientSlices(scope, grad_outputs[0].dense, op.input(1), dense_shape);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Gather", GatherGradient);

// Each row of data went to one segment; rows with negative ids were dropped and are not
// supported here (Gather rejects them).
Status UnsortedSegmentSumGradient(const Scope& scope, const ForwardOp& op,
                                  const std::vector<Gradient>& grad_outputs,
                                  std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Gather(scope, grad_outputs[0].dense, op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("UnsortedSegmentSum", UnsortedSegmentSumGradient);

}  // namespace

IndexedSlices GatherGradientSlices(const Scope& scope, const Output& grad, const Output& indices,
                                   const Output& dense_shape) {
  // Shape [-1] + dense_shape[1:]: one row of values per index.
  const Output row_shape = ops::Slice(scope, dense_shape, {1}, {-1});
  const Output values_shape = ops::Concat(scope, {Tensor::FromVector<int64_t>({-1}), row_shape}, 0);
  return IndexedSlices{ops::Reshape(scope, indices, {-1}), ops::Reshape(scope, grad, values_shape),
                       dense_shape};
}

namespace ops {

Output Gather(const Scope& scope, Input params, Input indices) {
  return scope.AddNodeOutput("Gather", {{params}, {indices}});
}

Output UnsortedSegmentSum(const Scope& scope, Input data, Input segment_ids, Input num_segments) {
  return scope.AddNodeOutput("UnsortedSegmentSum", {{data}, {segment_ids}, {num_segments}});
}

}  // namespace ops
}  // namespace tw
