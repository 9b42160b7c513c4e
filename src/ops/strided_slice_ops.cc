// StridedSlice (TF's Python subscripts: t[1], t[:, 2], t[::-1], t[..., None], on tensors of
// any rank, known or not when the graph is built) and StridedSliceGrad, its gradient.
// Definitions, CPU kernels, the gradient and graph-building functions; the index arithmetic
// is src/graph/strided_slice_spec.h, shared with the shape function.
#include <string>
#include <vector>

#include "src/framework/attr_value.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/graph/strided_slice_spec.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

constexpr const char* kMaskAttrs[] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                      "shrink_axis_mask"};

std::vector<int64_t> IndexVector(const Tensor& t) {
  std::vector<int64_t> out;
  Dispatch(TypeList<int32_t, int64_t>{}, t.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    for (I v : t.flat<I>()) out.push_back(static_cast<int64_t>(v));
  });
  return out;
}

// The kernels' common part: masks from the attributes, the spec from the index inputs.
class StridedSliceBase : public OpKernel {
 public:
  explicit StridedSliceBase(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("begin_mask", &masks_.begin);
    if (s.ok()) s = c->GetAttr("end_mask", &masks_.end);
    if (s.ok()) s = c->GetAttr("ellipsis_mask", &masks_.ellipsis);
    if (s.ok()) s = c->GetAttr("new_axis_mask", &masks_.new_axis);
    if (s.ok()) s = c->GetAttr("shrink_axis_mask", &masks_.shrink_axis);
    c->SetStatus(s);
  }

 protected:
  // The spec for an input of `shape` from inputs `first`, first + 1, first + 2.
  StatusOr<StridedSliceSpec> Spec(OpKernelContext* ctx, const TensorShape& shape, int first) const {
    for (int i = first; i < first + 3; ++i) {
      if (ctx->input(i).rank() != 1) {
        return errors::InvalidArgument("node ", name(), ": begin, end and strides must be ",
                                       "vectors, got shape ", ctx->input(i).shape().DebugString());
      }
    }
    auto spec = ComputeStridedSlice(shape.dims(), IndexVector(ctx->input(first)),
                                    IndexVector(ctx->input(first + 1)),
                                    IndexVector(ctx->input(first + 2)), masks_);
    if (!spec.ok()) return errors::Annotate(spec.status(), "node " + name() + ": ");
    return spec;
  }

  // Calls visit(input_offset, processing_index) for every element of the slice, in the
  // output's order.
  template <typename Visit>
  static void ForEachElement(const TensorShape& input, const StridedSliceSpec& spec,
                             Visit&& visit) {
    const int rank = input.rank();
    int64_t total = 1;
    for (int64_t d : spec.processing_shape) total *= d;
    if (total == 0) return;
    std::vector<int64_t> stride(static_cast<size_t>(rank), 1);
    for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * input.dim(d + 1);
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    for (int64_t k = 0; k < total; ++k) {
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d)
        offset += (spec.begin[d] + idx[d] * spec.strides[d]) * stride[d];
      visit(offset, k);
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < spec.processing_shape[d]) break;
        idx[d] = 0;
      }
    }
  }

  StridedSliceMasks masks_;
};

// ---- StridedSlice ----
TW_REGISTER_OP("StridedSlice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .Doc(
        "input[begin:end:strides] per dimension, with TF's masks: a begin or end bit takes "
        "the whole range, an ellipsis bit the dimensions it stands for, a new-axis bit "
        "inserts a dimension of 1, a shrink bit takes one index and drops the dimension.");

class StridedSliceOp : public StridedSliceBase {
 public:
  using StridedSliceBase::StridedSliceBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    auto spec = Spec(ctx, input.shape(), 1);
    TW_OP_REQUIRES_OK(ctx, spec.status());
    auto shape = TensorShape::Create(spec->final_shape);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const bool known = Dispatch(AllTypes{}, input.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto src = input.flat<T>();
      auto dst = out->flat<T>();
      ForEachElement(input.shape(), *spec, [&](int64_t from, int64_t to) { dst[to] = src[from]; });
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input.dtype()));
  }
};
TW_REGISTER_KERNEL("StridedSlice", "CPU", StridedSliceOp);

// ---- StridedSliceGrad ----
TW_REGISTER_OP("StridedSliceGrad")
    .Input("shape: Index")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Input("dy: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .Doc("Zeros of `shape` with dy where StridedSlice with these arguments took its values.");

class StridedSliceGradOp : public StridedSliceBase {
 public:
  using StridedSliceBase::StridedSliceBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    const Tensor& dy = ctx->input(4);
    TW_OP_REQUIRES(ctx, shape_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": shape must be a vector, got ",
                                           shape_t.shape().DebugString()));
    auto shape = TensorShape::Create(IndexVector(shape_t));
    TW_OP_REQUIRES_OK(ctx, shape.status());
    TW_OP_REQUIRES(ctx, shape->IsFullyDefined(),
                   errors::InvalidArgument("node ", name(), ": shape ", shape->DebugString(),
                                           " has a negative dimension"));
    auto spec = Spec(ctx, *shape, 1);
    TW_OP_REQUIRES_OK(ctx, spec.status());
    int64_t count = 1;
    for (int64_t d : spec->final_shape) count *= d;
    TW_OP_REQUIRES(
        ctx, count == dy.num_elements(),
        errors::InvalidArgument("node ", name(), ": dy of shape ", dy.shape().DebugString(),
                                " does not match the slice's shape"));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const bool known = Dispatch(NumericTypes{}, dy.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto dst = out->flat<T>();
      std::fill(dst.begin(), dst.end(), T(0));
      auto src = dy.flat<T>();
      ForEachElement(*shape, *spec, [&](int64_t to, int64_t from) { dst[to] = src[from]; });
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, dy.dtype()));
  }
};
TW_REGISTER_KERNEL("StridedSliceGrad", "CPU", StridedSliceGradOp);

// The slice's gradient goes back where the slice came from; zeros elsewhere.
Status StridedSliceGradient(const Scope& scope, const ForwardOp& op,
                            const std::vector<Gradient>& grad_outputs,
                            std::vector<Gradient>* grad_inputs) {
  ops::StridedSliceOptions masks;
  int64_t* fields[] = {&masks.begin_mask, &masks.end_mask, &masks.ellipsis_mask,
                       &masks.new_axis_mask, &masks.shrink_axis_mask};
  for (int i = 0; i < 5; ++i) TW_RETURN_IF_ERROR(GetNodeAttr(op.def(), kMaskAttrs[i], fields[i]));
  (*grad_inputs)[0].dense =
      ops::StridedSliceGrad(scope, ops::Shape(scope, op.input(0), op.input(1).type()), op.input(1),
                            op.input(2), op.input(3), grad_outputs[0].dense, masks);
  return OkStatus();
}
TW_REGISTER_GRADIENT("StridedSlice", StridedSliceGradient);
TW_NO_GRADIENT("StridedSliceGrad");

AttrMap MaskAttrs(const ops::StridedSliceOptions& o) {
  return {{"begin_mask", MakeAttr(o.begin_mask)},
          {"end_mask", MakeAttr(o.end_mask)},
          {"ellipsis_mask", MakeAttr(o.ellipsis_mask)},
          {"new_axis_mask", MakeAttr(o.new_axis_mask)},
          {"shrink_axis_mask", MakeAttr(o.shrink_axis_mask)}};
}

}  // namespace

namespace ops {

Output StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides,
                    const StridedSliceOptions& options) {
  return scope.AddNodeOutput("StridedSlice", {{input}, {begin}, {end}, {strides}},
                             MaskAttrs(options));
}

Output StridedSliceGrad(const Scope& scope, Input shape, Input begin, Input end, Input strides,
                        Input dy, const StridedSliceOptions& options) {
  return scope.AddNodeOutput("StridedSliceGrad", {{shape}, {begin}, {end}, {strides}, {dy}},
                             MaskAttrs(options));
}

}  // namespace ops
}  // namespace tw
