// TopKV2: the k largest entries of each row (the last dimension) and their positions.
// Definition, CPU kernel, gradient and graph-building function (declared in
// tensorweave/ops/index_ops.h); the shape function is in src/graph/index_shape_fns.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/index_ops.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

TW_REGISTER_OP("TopKV2")
    .Input("input: T")
    .Input("k: int32")
    .Output("values: T")
    .Output("indices: int32")
    .Attr("sorted: bool = true")
    .Attr("T: {float, double, int32, int64}")
    .Doc(
        "The k largest entries of each row (last dimension) of input, largest first, and "
        "their positions in the row; equal values come lower index first. NaN is larger "
        "than every number.");

// a ranks before b: larger, or equal and at a lower index. NaNs rank first (as the
// largest), so the order is strict and weak even with them.
template <typename T>
struct RanksBefore {
  const T* row;
  bool operator()(int32_t a, int32_t b) const {
    const T x = row[a], y = row[b];
    if constexpr (std::is_floating_point_v<T>) {
      const bool nx = std::isnan(x), ny = std::isnan(y);
      if (nx || ny) return nx && (!ny || a < b);
    }
    return x > y || (x == y && a < b);
  }
};

// The top k of `rows` rows of n, per row without a full sort: a heap of the k best for a
// small k (O(n log k)), else nth_element and a sort of the k selected (O(n + k log k)).
template <typename T>
void TopKRows(const T* in, int64_t rows, int64_t n, int64_t k, T* values, int32_t* indices) {
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = in + r * n;
    T* v = values + r * k;
    int32_t* idx = indices + r * k;
    const RanksBefore<T> before{row};
    if (k == 1) {  // one pass
      int32_t best = 0;
      for (int32_t j = 1; j < n; ++j) {
        if (before(j, best)) best = j;
      }
      idx[0] = best;
      v[0] = row[best];
      continue;
    }
    std::iota(order.begin(), order.end(), 0);
    if (k * 16 <= n) {
      // Small k: a heap of the k best, most elements rejected by one comparison.
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    } else {
      if (k < n) std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), before);
      std::sort(order.begin(), order.begin() + k, before);
    }
    for (int64_t j = 0; j < k; ++j) {
      idx[j] = order[j];
      v[j] = row[order[j]];
    }
  }
}

class TopKOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& k_t = ctx->input(1);
    // TensorFlow's messages.
    TW_OP_REQUIRES(ctx, k_t.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": k must be a scalar, got shape ",
                                           k_t.shape().DebugString()));
    const int64_t k = k_t.flat<int32_t>()[0];
    TW_OP_REQUIRES(ctx, k >= 0, errors::InvalidArgument("node ", name(), ": Need k >= 0, got ", k));
    TW_OP_REQUIRES(ctx, input.rank() >= 1,
                   errors::InvalidArgument("node ", name(), ": input must be >= 1-D, got shape ",
                                           input.shape().DebugString()));
    const int64_t n = input.dim(input.rank() - 1);
    TW_OP_REQUIRES(ctx, n >= k,
                   errors::InvalidArgument("node ", name(), ": input must have at least k ",
                                           "columns. Had ", n, ", needed ", k));
    TW_OP_REQUIRES(ctx, n <= std::numeric_limits<int32_t>::max(),
                   errors::InvalidArgument("node ", name(), ": rows of ", n,
                                           " elements do not fit int32 indices"));
    std::vector<int64_t> dims = input.shape().dims();
    dims.back() = k;
    auto shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor *values = nullptr, *indices = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &values));
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, *shape, &indices));
    if (k == 0 || values->num_elements() == 0) return;
    const int64_t rows = input.num_elements() / n;
    Dispatch(NumericTypes{}, input.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      TopKRows<T>(input.flat<T>().data(), rows, n, k, values->flat<T>().data(),
                  indices->flat<int32_t>().data());
    });
  }
  bool IsExpensive() const override { return true; }
};
TW_REGISTER_KERNEL("TopKV2", "CPU", TopKOp);

// The values' gradient goes back to the positions they came from: every element of
// `indices` is completed into a full coordinate (its own leading coordinates, from Where
// over a tensor of ones shaped like it, then the index) and ScatterNd puts the gradient
// there. The indices output has no gradient.
Status TopKGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  if (!grad_outputs[0].exists()) return OkStatus();
  const Output indices = op.output(1);
  const Output coords = ops::Where(scope, ops::OnesLike(scope, indices));
  ops::StridedSliceOptions all_but_last;
  all_but_last.begin_mask = 3;
  all_but_last.end_mask = 1;
  const Output leading = ops::StridedSlice(scope, coords, {0, 0}, {0, -1}, {1, 1}, all_but_last);
  const Output last = ops::Reshape(scope, ops::Cast(scope, indices, DT_INT64), {-1, 1});
  const Output full = ops::Concat(scope, {leading, last}, 1);
  const Output updates = ops::Reshape(scope, grad_outputs[0].dense, {-1});
  (*grad_inputs)[0].dense =
      ops::ScatterNd(scope, full, updates, ops::Shape(scope, op.input(0), DT_INT64));
  return OkStatus();
}
TW_REGISTER_GRADIENT("TopKV2", TopKGradient);

}  // namespace

namespace ops {

TopKOutputs TopK(const Scope& scope, Input input, Input k, const TopKOptions& options) {
  Operation op = scope.AddNode("TopKV2", {{input}, {k}}, {{"sorted", MakeAttr(options.sorted)}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

}  // namespace ops
}  // namespace tw
