// The shape functions of the indexing, selection and checking ops (src/ops/gather_nd_ops.cc,
// topk_ops.cc, segment_ops.cc, check_ops.cc), after TensorFlow's: what the static shapes
// and constant inputs determine, unknown otherwise; TF's errors for shapes that cannot work.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/framework/attr_value.h"
#include "src/graph/shape_inference.h"

namespace tw {
namespace {

constexpr int64_t kUnknown = TensorShape::kUnknownDim;

StaticShape Make(const std::vector<int64_t>& dims) {
  auto shape = TensorShape::Create(dims);
  if (!shape.ok()) return std::nullopt;
  return *shape;
}

// indices.shape[:-1] + params.shape[indices.shape[-1]:].
Status GatherNdShape(ShapeContext* ctx) {
  const StaticShape& params = ctx->input(0);
  const StaticShape& indices = ctx->input(1);
  if (!params || !indices) return OkStatus();
  if (indices->rank() < 1) {
    return ctx->Error("Shape must be at least rank 1 but is rank 0");
  }
  const int64_t depth = indices->dim(indices->rank() - 1);
  if (depth == kUnknown) return OkStatus();
  if (depth > params->rank()) {
    return ctx->Error(absl::StrCat("indices.shape[-1] must be <= params.rank, but saw indices ",
                                   "shape: ", indices->DebugString(),
                                   " and params shape: ", params->DebugString()));
  }
  std::vector<int64_t> dims(indices->dims().begin(), indices->dims().end() - 1);
  dims.insert(dims.end(), params->dims().begin() + depth, params->dims().end());
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// Both outputs: input's shape with the last dimension k.
Status TopKShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  if (!in) return OkStatus();
  if (in->rank() < 1) return ctx->Error("Shape must be at least rank 1 but is rank 0");
  auto k = ctx->constant_ints(1);
  std::vector<int64_t> dims = in->dims();
  const int64_t last = dims.back();
  dims.back() = k && k->size() == 1 ? (*k)[0] : kUnknown;
  if (k && k->size() == 1 && last != kUnknown && last < (*k)[0]) {
    return ctx->Error(
        absl::StrCat("input must have last dimension >= k = ", (*k)[0], " but is ", last));
  }
  ctx->set_output(0, Make(dims));
  ctx->set_output(1, Make(dims));
  return OkStatus();
}

// [unknown] + data.shape[1:]: the row count is the last id + 1, known only at run time.
Status SegmentSumShape(ShapeContext* ctx) {
  const StaticShape& data = ctx->input(0);
  if (!data || data->rank() < 1) return OkStatus();
  std::vector<int64_t> dims = data->dims();
  dims[0] = kUnknown;
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// [num_segments] + data.shape[segment_ids.rank:].
Status UnsortedSegmentSumShape(ShapeContext* ctx) {
  const StaticShape& data = ctx->input(0);
  const StaticShape& ids = ctx->input(1);
  if (!data || !ids || ids->rank() > data->rank()) return OkStatus();
  auto num = ctx->constant_ints(2);
  std::vector<int64_t> dims{num && num->size() == 1 ? (*num)[0] : kUnknown};
  dims.insert(dims.end(), data->dims().begin() + ids->rank(), data->dims().end());
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

Status SameAsInput0(ShapeContext* ctx) {
  ctx->set_output(0, ctx->input(0));
  return OkStatus();
}

// The variable updates return the variable's new value: the shape it was declared with.
Status VariableValueShape(ShapeContext* ctx) {
  const proto::NodeDef& producer = ctx->input_node(0);
  PartialShape shape;
  if (producer.op() == "Variable" && GetNodeAttr(producer, "shape", &shape).ok() &&
      !shape.unknown_rank) {
    ctx->set_output(0, Make(shape.dims));
  }
  return OkStatus();
}

// ResourceGather: the indices' shape, then a row of the variable's declared shape.
Status ResourceGatherShape(ShapeContext* ctx) {
  const proto::NodeDef& producer = ctx->input_node(0);
  const StaticShape& indices = ctx->input(1);
  PartialShape var;
  if (producer.op() != "Variable" || !GetNodeAttr(producer, "shape", &var).ok() ||
      var.unknown_rank || var.dims.empty() || !indices) {
    return OkStatus();
  }
  std::vector<int64_t> dims = indices->dims();
  dims.insert(dims.end(), var.dims.begin() + 1, var.dims.end());
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

TW_REGISTER_SHAPE_FN("GatherNd", GatherNdShape);
TW_REGISTER_SHAPE_FN("ResourceGather", ResourceGatherShape);
[[maybe_unused]] const bool kVariableUpdateShapes = [] {
  for (const char* op : {"ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
                         "ScatterMax", "ScatterMin"}) {
    internal::ShapeFnRegistrar registrar(op, VariableValueShape);
  }
  return true;
}();
TW_REGISTER_SHAPE_FN("ScatterNd", [](ShapeContext* ctx) {
  ctx->set_output(0, ctx->input_as_shape(2));
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("TopKV2", TopKShape);
TW_REGISTER_SHAPE_FN("SegmentSum", SegmentSumShape);
TW_REGISTER_SHAPE_FN("UnsortedSegmentSum", UnsortedSegmentSumShape);
TW_REGISTER_SHAPE_FN("CheckNumerics", SameAsInput0);
TW_REGISTER_SHAPE_FN("Print", SameAsInput0);

}  // namespace
}  // namespace tw
