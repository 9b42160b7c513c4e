// Array ops that make or walk sequences: Range (an arithmetic sequence). Coming here:
// OneHot, ReverseV2, Cumsum. Definitions, CPU kernels and gradients; graph-building
// functions declared in tensorweave/ops/array_ops.h, shape functions in
// src/graph/array_shape_fns.cc.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
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

}  // namespace

namespace ops {

Output Range(const Scope& scope, Input start, Input limit, Input delta) {
  return scope.AddNodeOutput("Range", {{start}, {limit}, {delta}});
}

}  // namespace ops
}  // namespace tw
