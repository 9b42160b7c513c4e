// Array ops that give a tensor's elements another shape without moving them: Reshape,
// ExpandDims and Squeeze (views of the input's buffer). Transpose, Tile and BroadcastTo,
// which move them, are in transpose_ops.cc. Definitions, CPU kernels, gradients and
// graph-building functions (declared in tensorweave/ops/basic_ops.h and, for ExpandDims and
// Squeeze, tensorweave/ops/array_ops.h). The other array families: docs/adding_an_op.md,
// "Array ops".
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
#include "tensorweave/ops/array_ops.h"
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

// Sets output 0 to a view of `input` with dimensions `dims`.
void SetView(OpKernelContext* ctx, const Tensor& input, const std::vector<int64_t>& dims) {
  auto shape = TensorShape::Create(dims);
  TW_OP_REQUIRES_OK(ctx, shape.status());
  auto view = input.Reshaped(*shape);
  TW_OP_REQUIRES_OK(ctx, view.status());
  ctx->set_output(0, *std::move(view));
}

// ---- ExpandDims ----
TW_REGISTER_OP("ExpandDims")
    .Input("input: T")
    .Input("dim: Tdim")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tdim: {int32, int64} = int32")
    .Doc(
        "input with a dimension of 1 inserted at dim (in [-rank-1, rank]; negative counts from "
        "the end of the output's dimensions).");

class ExpandDimsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    TW_OP_REQUIRES(
        ctx, ctx->input(1).num_elements() == 1,
        errors::InvalidArgument("node ", name(), ": 'dim' must be a tensor with a single value"));
    int64_t dim = IndexValues(ctx->input(1))[0];
    const int rank = input.rank();
    TW_OP_REQUIRES(ctx, dim >= -1 - rank && dim <= rank,
                   errors::InvalidArgument("node ", name(), ": Tried to expand dim index ", dim,
                                           " for tensor with ", rank, " dimensions."));
    if (dim < 0) dim += rank + 1;
    std::vector<int64_t> dims = input.shape().dims();
    dims.insert(dims.begin() + dim, 1);
    SetView(ctx, input, dims);
  }
};
TW_REGISTER_KERNEL("ExpandDims", "CPU", ExpandDimsOp);

// ---- Squeeze ----
TW_REGISTER_OP("Squeeze")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("squeeze_dims: list(int) = []")
    .Doc(
        "input without the dimensions of size 1 listed in squeeze_dims (negative counts from "
        "the end), or without every dimension of size 1 when it is empty.");

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("squeeze_dims", &squeeze_dims_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int rank = input.rank();
    std::vector<bool> drop(static_cast<size_t>(rank), squeeze_dims_.empty());
    for (int64_t dim : squeeze_dims_) {
      TW_OP_REQUIRES(ctx, dim >= -rank && dim < rank,
                     errors::InvalidArgument("node ", name(), ": Tried to squeeze dim index ", dim,
                                             " for tensor with ", rank, " dimensions."));
      drop[dim < 0 ? dim + rank : dim] = true;
    }
    std::vector<int64_t> dims;
    for (int d = 0; d < rank; ++d) {
      const int64_t size = input.dim(d);
      if (!drop[d] || (squeeze_dims_.empty() && size != 1)) {
        dims.push_back(size);
        continue;
      }
      TW_OP_REQUIRES(ctx, size == 1,
                     errors::InvalidArgument("node ", name(), ": Can not squeeze dim[", d,
                                             "], expected a dimension of 1, got ", size));
    }
    SetView(ctx, input, dims);
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};
TW_REGISTER_KERNEL("Squeeze", "CPU", SqueezeOp);

// ---- Gradients ----

Status ReshapeGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense =
      ops::Reshape(scope, grad_outputs[0].dense, ops::Shape(scope, op.input(0)));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Reshape", ReshapeGradient);

// ExpandDims and Squeeze also keep the elements in order.
TW_REGISTER_GRADIENT("ExpandDims", ReshapeGradient);
TW_REGISTER_GRADIENT("Squeeze", ReshapeGradient);

}  // namespace

namespace ops {

Output Reshape(const Scope& scope, Input tensor, Input shape) {
  return scope.AddNodeOutput("Reshape", {{tensor}, {shape}});
}

Output ExpandDims(const Scope& scope, Input input, Input axis) {
  return scope.AddNodeOutput("ExpandDims", {{input}, {axis}});
}

Output Squeeze(const Scope& scope, Input input, const std::vector<int64_t>& axis) {
  return scope.AddNodeOutput("Squeeze", {{input}}, {{"squeeze_dims", MakeAttr(axis)}});
}

}  // namespace ops
}  // namespace tw
