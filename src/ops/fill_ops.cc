// Array ops that make a tensor from a few scalars: Fill. Range and OneHot are in sequence_ops.cc.
// Definitions, CPU kernels, gradients and graph-building functions (declared in
// tensorweave/ops/basic_ops.h).
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
using internal::VectorString;

// ---- Fill ----
TW_REGISTER_OP("Fill")
    .Input("dims: index_type")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64, uint8, bool, string}")
    .Attr("index_type: {int32, int64} = int32")
    .Doc("A tensor of shape dims with every element equal to the scalar value.");

class FillOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dims_t = ctx->input(0);
    const Tensor& value = ctx->input(1);
    TW_OP_REQUIRES(ctx, dims_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": Fill dims must be 1-D, got shape ",
                                           dims_t.shape().DebugString()));
    TW_OP_REQUIRES(ctx, value.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": Fill value must be a scalar, ",
                                           "got shape ", value.shape().DebugString()));
    const std::vector<int64_t> dims = IndexValues(dims_t);
    for (size_t i = 0; i < dims.size(); ++i) {
      // TensorShape accepts -1 (unknown), which is no size for a tensor to be made.
      TW_OP_REQUIRES(ctx, dims[i] >= 0,
                     errors::InvalidArgument("node ", name(), ": Fill dims ", VectorString(dims),
                                             " has negative dimension ", dims[i], " at ", i));
    }
    auto shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": Fill: "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    DispatchType(value.dtype(), [&]<typename T>() {
      auto f = out->flat<T>();
      std::fill(f.begin(), f.end(), value.scalar<T>());
    });
  }
};
TW_REGISTER_KERNEL("Fill", "CPU", FillOp);

// ---- Gradients ----

Status FillGradient(const Scope& scope, const ForwardOp&, const std::vector<Gradient>& grad_outputs,
                    std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[1].dense = ops::Sum(scope, ops::Reshape(scope, grad_outputs[0].dense, {-1}), 0);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Fill", FillGradient);

}  // namespace

namespace ops {

Output Fill(const Scope& scope, Input dims, Input value) {
  return scope.AddNodeOutput("Fill", {{dims}, {value}});
}

}  // namespace ops
}  // namespace tw
