// The shape functions of the window ops, convolution and pooling over NHWC images: the
// output sizes from src/graph/conv_geometry.h, so a shape function and a kernel accept and
// refuse the same nodes; TF's errors for inputs of the wrong rank or mismatched depths.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/graph/conv_geometry.h"
#include "src/graph/shape_inference.h"

namespace tw {
namespace {

constexpr int64_t kUnknown = TensorShape::kUnknownDim;

StaticShape Make(const std::vector<int64_t>& dims) {
  auto shape = TensorShape::Create(dims);
  if (!shape.ok()) return std::nullopt;
  return *shape;
}

// The dimensions of input i, which must have rank 4 when known (all unknown otherwise).
StatusOr<std::vector<int64_t>> Rank4(ShapeContext* ctx, int i) {
  const StaticShape& s = ctx->input(i);
  if (!s) return std::vector<int64_t>(4, kUnknown);
  if (s->rank() != 4) {
    return ctx->Error(absl::StrCat("Shape must be rank 4 but is rank ", s->rank()));
  }
  return s->dims();
}

// [batch, out_height, out_width, depth] of a window op over `input` with `attrs`.
StatusOr<StaticShape> WindowOutput(ShapeContext* ctx, const std::vector<int64_t>& input,
                                   const WindowAttrs& attrs, int64_t depth) {
  auto extents = WindowedOutputSizes(input, attrs);
  if (!extents.ok()) return ctx->Error(std::string(extents.status().message()));
  return Make({input[0], (*extents)[0].out, (*extents)[1].out, depth});
}

// As TF: a graph may hold NCHW window ops (TF's CPU kernels refuse them when the step
// runs, which is where ours refuse them too); their shapes are left unknown here.
bool IsNchw(const ShapeContext* ctx) {
  std::string format;
  return GetNodeAttr(ctx->node(), "data_format", &format).ok() && format == "NCHW";
}

Status Conv2DShape(ShapeContext* ctx) {
  if (IsNchw(ctx)) return OkStatus();
  TW_ASSIGN_OR_RETURN(WindowAttrs attrs, ReadWindowAttrs(ctx->node(), /*is_pool=*/false));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> input, Rank4(ctx, 0));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> filter, Rank4(ctx, 1));
  int64_t depth = kUnknown;
  if (!MergeDim(input[3], filter[2], &depth)) {
    return ctx->Error(absl::StrCat("Depth of input (", input[3],
                                   ") is not a multiple of input depth of filter (", filter[2],
                                   ")"));
  }
  if (filter[0] == kUnknown || filter[1] == kUnknown) {
    ctx->set_output(0, Make({input[0], kUnknown, kUnknown, filter[3]}));
    return OkStatus();
  }
  attrs.window = {filter[0], filter[1]};
  TW_ASSIGN_OR_RETURN(StaticShape out, WindowOutput(ctx, input, attrs, filter[3]));
  ctx->set_output(0, out);
  return OkStatus();
}

Status PoolShape(ShapeContext* ctx) {
  if (IsNchw(ctx)) return OkStatus();
  TW_ASSIGN_OR_RETURN(WindowAttrs attrs, ReadWindowAttrs(ctx->node(), /*is_pool=*/true));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> input, Rank4(ctx, 0));
  TW_ASSIGN_OR_RETURN(StaticShape out, WindowOutput(ctx, input, attrs, input[3]));
  ctx->set_output(0, out);
  return OkStatus();
}

// A gradient op whose output has the shape its input `i` gives as a shape.
ShapeFn ShapeGivenBy(int i) {
  return [i](ShapeContext* ctx) {
    ctx->set_output(0, ctx->input_as_shape(i));
    return OkStatus();
  };
}

TW_REGISTER_SHAPE_FN("Conv2D", Conv2DShape);
TW_REGISTER_SHAPE_FN("Conv2DBackpropInput", ShapeGivenBy(0));
TW_REGISTER_SHAPE_FN("Conv2DBackpropFilter", ShapeGivenBy(1));
TW_REGISTER_SHAPE_FN("MaxPool", PoolShape);
TW_REGISTER_SHAPE_FN("AvgPool", PoolShape);
TW_REGISTER_SHAPE_FN("MaxPoolGrad", [](ShapeContext* ctx) {
  ctx->set_output(0, ctx->input(0));
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("AvgPoolGrad", ShapeGivenBy(0));

}  // namespace
}  // namespace tw
