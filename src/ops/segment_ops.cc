// SegmentSum: sums of runs of rows named by sorted segment ids (UnsortedSegmentSum, for ids
// in any order, is in gather_scatter_ops.cc). Definition, CPU kernel, gradient and
// graph-building function (declared in tensorweave/ops/index_ops.h); the shape function is in
// src/graph/index_shape_fns.cc.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/index_ops.h"

namespace tw {
namespace {

using internal::IndexValues;

TW_REGISTER_OP("SegmentSum")
    .Input("data: T")
    .Input("segment_ids: Tindices")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("Tindices: {int32, int64}")
    .Doc(
        "output[j] = the sum of the rows data[i] with segment_ids[i] == j (0 for none): "
        "segment_ids is a sorted vector of non-negative ids, one per row of data; output has "
        "max(segment_ids) + 1 rows.");

class SegmentSumOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids_t = ctx->input(1);
    // TensorFlow's checks and messages (segment_reduction_ops.cc).
    TW_OP_REQUIRES(ctx, data.rank() >= 1,
                   errors::InvalidArgument("node ", name(), ": input must be at least rank 1, ",
                                           "got shape ", data.shape().DebugString()));
    TW_OP_REQUIRES(ctx, ids_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": segment_ids should be a vector."));
    const int64_t n = ids_t.dim(0);
    TW_OP_REQUIRES(ctx, n == data.dim(0),
                   errors::InvalidArgument("node ", name(), ": segment_ids should be the same ",
                                           "size as dimension 0 of input."));
    const std::vector<int64_t> ids = IndexValues(ids_t);
    const int64_t rows = n == 0 ? 0 : ids.back() + 1;
    TW_OP_REQUIRES(ctx, rows >= 0,
                   errors::InvalidArgument("node ", name(), ": segment ids must be >= 0"));
    // As TF: each id is checked against the next (order) before its range.
    for (int64_t i = 0; i < n; ++i) {
      TW_OP_REQUIRES(ctx, i + 1 == n || ids[i] <= ids[i + 1],
                     errors::InvalidArgument("node ", name(), ": segment ids are not increasing"));
      TW_OP_REQUIRES(ctx, ids[i] >= 0 && ids[i] < rows,
                     errors::InvalidArgument("node ", name(), ": Segment id ", ids[i],
                                             " out of range [0, ", rows,
                                             "), possibly because 'segment_ids' input is not "
                                             "sorted."));
    }
    std::vector<int64_t> dims = data.shape().dims();
    dims[0] = rows;
    auto shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t row = n == 0 ? 0 : data.num_elements() / n;
    Dispatch(NumericTypes{}, data.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = out->flat<T>().data();
      std::fill(dst, dst + out->num_elements(), T(0));
      const T* src = data.flat<T>().data();
      for (int64_t i = 0; i < n; ++i) {
        T* o = dst + ids[i] * row;
        const T* in = src + i * row;
        if constexpr (std::is_floating_point_v<T>) {
          for (int64_t k = 0; k < row; ++k) o[k] += in[k];
        } else {  // integers wrap, as Add does
          using U = std::make_unsigned_t<T>;
          for (int64_t k = 0; k < row; ++k) {
            o[k] = static_cast<T>(static_cast<U>(o[k]) + static_cast<U>(in[k]));
          }
        }
      }
    });
  }
};
TW_REGISTER_KERNEL("SegmentSum", "CPU", SegmentSumOp);

// Each row of data went to exactly one segment: its gradient is that segment's row.
Status SegmentSumGradient(const Scope& scope, const ForwardOp& op,
                          const std::vector<Gradient>& grad_outputs,
                          std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Gather(scope, grad_outputs[0].dense, op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("SegmentSum", SegmentSumGradient);

}  // namespace

namespace ops {

Output SegmentSum(const Scope& scope, Input data, Input segment_ids) {
  return scope.AddNodeOutput("SegmentSum", {{data}, {segment_ids}});
}

}  // namespace ops
}  // namespace tw
