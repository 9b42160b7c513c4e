// Array ops that give a tensor's elements another shape: Reshape. Coming here: Squeeze and
// ExpandDims (the same elements in the same order), Transpose, BroadcastTo and Tile (the
// elements permuted or repeated to fill the new shape). Definitions, CPU kernels, gradients
// and graph-building functions (declared in tensorweave/ops/basic_ops.h). The other array
// families: docs/adding_an_op.md, "Array ops".
//
// The kernels are written once as templates over the C++ element type and dispatched on the
// dtype at run time; most take every type, strings and resource handles included.
#include <cstdint>
#include <string>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

using internal::IndexValues;
using internal::VectorString;

// ---- Reshape ----
TW_REGISTER_OP("Reshape")
    .Input("tensor: T")
    .Input("shape: Tshape")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tshape: {int32, int64} = int32")
    .Doc(
        "The elements of tensor in a new shape. One dimension of shape may be -1: it is "
        "inferred from the element count.");

class ReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& shape_t = ctx->input(1);
    TW_OP_REQUIRES(ctx, shape_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": Reshape shape must be 1-D, got ",
                                           "shape ", shape_t.shape().DebugString()));
    std::vector<int64_t> dims = IndexValues(shape_t);
    int unknown = -1;
    int64_t product = 1;  // of the known dimensions
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == -1) {
        TW_OP_REQUIRES(
            ctx, unknown == -1,
            errors::InvalidArgument("node ", name(), ": Reshape shape ", VectorString(dims),
                                    " has more than one -1 (", unknown, " and ", i, ")"));
        unknown = static_cast<int>(i);
        continue;
      }
      TW_OP_REQUIRES(
          ctx, dims[i] >= 0,
          errors::InvalidArgument("node ", name(), ": Reshape shape ", VectorString(dims),
                                  " has negative dimension ", dims[i], " at ", i));
      // An overflowing product can never match the input's element count.
      TW_OP_REQUIRES(ctx, !__builtin_mul_overflow(product, dims[i], &product),
                     errors::InvalidArgument("node ", name(), ": Reshape shape ",
                                             VectorString(dims), " has too many elements"));
    }
    const int64_t count = input.num_elements();
    if (unknown != -1) {
      // With a zero among the known dimensions any size would do; TensorFlow refuses too.
      TW_OP_REQUIRES(
          ctx, product > 0,
          errors::InvalidArgument("node ", name(), ": Reshape cannot infer the -1 in ",
                                  VectorString(dims), " when another dimension is 0 (input shape ",
                                  input.shape().DebugString(), ")"));
      TW_OP_REQUIRES(ctx, count % product == 0,
                     errors::InvalidArgument("node ", name(), ": Reshape of input shape ",
                                             input.shape().DebugString(), " (", count,
                                             " elements) to ", VectorString(dims),
                                             ": the count is not a multiple of ", product));
      dims[unknown] = count / product;
      product = count;
    }
    TW_OP_REQUIRES(
        ctx, product == count,
        errors::InvalidArgument("node ", name(), ": Reshape of input shape ",
                                input.shape().DebugString(), " (", count, " elements) to ",
                                VectorString(dims), " (", product, " elements)"));
    auto shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    // A view of the input's buffer: reshaping never copies.
    auto view = input.Reshaped(*shape);
    TW_OP_REQUIRES_OK(ctx, view.status());
    ctx->set_output(0, *std::move(view));
  }
};
TW_REGISTER_KERNEL("Reshape", "CPU", ReshapeOp);

// ---- Gradients ----

Status ReshapeGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense =
      ops::Reshape(scope, grad_outputs[0].dense, ops::Shape(scope, op.input(0)));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Reshape", ReshapeGradient);

}  // namespace

namespace ops {

Output Reshape(const Scope& scope, Input tensor, Input shape) {
  return scope.AddNodeOutput("Reshape", {{tensor}, {shape}});
}

}  // namespace ops
}  // namespace tw
