// The shape functions of the registered ops (src/graph/shape_inference.h), after
// TensorFlow's: element-wise ops broadcast, MatMul checks inner dimensions, reductions,
// reshapes and fills read their constant inputs, variables and queues give the shapes they
// were declared with.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/framework/attr_value.h"
#include "src/graph/shape_inference.h"
#include "src/graph/strided_slice_spec.h"

namespace tw {
namespace {

constexpr int64_t kUnknown = TensorShape::kUnknownDim;

StaticShape Make(std::vector<int64_t> dims) {
  auto shape = TensorShape::Create(dims);
  if (!shape.ok()) return std::nullopt;
  return *shape;
}

StaticShape Scalar() { return TensorShape(); }

StaticShape FromPartial(const PartialShape& p) {
  if (p.unknown_rank) return std::nullopt;
  return Make(p.dims);
}

// Output 0 has input i's shape.
ShapeFn SameAs(int i) {
  return [i](ShapeContext* ctx) {
    ctx->set_output(0, ctx->input(i));
    return OkStatus();
  };
}

// numpy broadcasting of two static shapes.
Status BroadcastShapes(ShapeContext* ctx) {
  const StaticShape& a = ctx->input(0);
  const StaticShape& b = ctx->input(1);
  if (!a || !b) {
    ctx->set_output(0, std::nullopt);
    return OkStatus();
  }
  const int rank = std::max(a->rank(), b->rank());
  std::vector<int64_t> out(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) {
    const int ia = a->rank() - rank + i, ib = b->rank() - rank + i;
    const int64_t da = ia >= 0 ? a->dim(ia) : 1;
    const int64_t db = ib >= 0 ? b->dim(ib) : 1;
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da == kUnknown || db == kUnknown) {
      out[i] = da == kUnknown ? db : da;
    } else if (da == db) {
      out[i] = da;
    } else {
      return ctx->Error(absl::StrCat("Dimensions must be equal, but are ", da, " and ", db));
    }
  }
  ctx->set_output(0, Make(out));
  return OkStatus();
}

Status MatMulShape(ShapeContext* ctx) {
  const StaticShape& a = ctx->input(0);
  const StaticShape& b = ctx->input(1);
  for (const StaticShape* s : {&a, &b}) {
    if (*s && (*s)->rank() != 2) {
      return ctx->Error(absl::StrCat("Shape must be rank 2 but is rank ", (*s)->rank()));
    }
  }
  bool ta = false, tb = false;
  (void)GetNodeAttr(ctx->node(), "transpose_a", &ta);
  (void)GetNodeAttr(ctx->node(), "transpose_b", &tb);
  const int64_t rows = a ? a->dim(ta ? 1 : 0) : kUnknown;
  const int64_t inner_a = a ? a->dim(ta ? 0 : 1) : kUnknown;
  const int64_t inner_b = b ? b->dim(tb ? 1 : 0) : kUnknown;
  const int64_t cols = b ? b->dim(tb ? 0 : 1) : kUnknown;
  int64_t inner = kUnknown;
  if (!MergeDim(inner_a, inner_b, &inner)) {
    return ctx->Error(
        absl::StrCat("Dimensions must be equal, but are ", inner_a, " and ", inner_b));
  }
  ctx->set_output(0, Make({rows, cols}));
  return OkStatus();
}

// The bias runs along the last dimension, or dimension 1 for data_format NCHW (TF).
Status BiasAddShape(ShapeContext* ctx) {
  const StaticShape& value = ctx->input(0);
  const StaticShape& bias = ctx->input(1);
  if (value && value->rank() < 2) {
    return ctx->Error(absl::StrCat("Shape must be at least rank 2 but is rank ", value->rank()));
  }
  if (value && bias && bias->rank() == 1) {
    std::string format = "NHWC";
    (void)GetNodeAttr(ctx->node(), "data_format", &format);
    const int axis = format == "NCHW" ? 1 : value->rank() - 1;
    int64_t merged = kUnknown;
    const int64_t channels = value->dim(axis);
    if (!MergeDim(channels, bias->dim(0), &merged)) {
      return ctx->Error(
          absl::StrCat("Dimensions must be equal, but are ", channels, " and ", bias->dim(0)));
    }
    std::vector<int64_t> dims = value->dims();
    dims[axis] = merged;
    ctx->set_output(0, Make(dims));
    return OkStatus();
  }
  ctx->set_output(0, value);
  return OkStatus();
}

Status AttrShape(ShapeContext* ctx, const char* attr) {
  PartialShape shape;
  if (GetNodeAttr(ctx->node(), attr, &shape).ok()) ctx->set_output(0, FromPartial(shape));
  return OkStatus();
}

// PlaceholderWithDefault: the declared shape, which the default must fit.
Status PlaceholderWithDefaultShape(ShapeContext* ctx) {
  PartialShape declared;
  if (!GetNodeAttr(ctx->node(), "shape", &declared).ok()) return OkStatus();
  const StaticShape out = FromPartial(declared);
  const StaticShape& in = ctx->input(0);
  if (out && in) {
    bool fits = in->rank() == out->rank();
    for (int d = 0; fits && d < in->rank(); ++d) {
      int64_t merged = kUnknown;
      fits = MergeDim(in->dim(d), out->dim(d), &merged);
    }
    if (!fits) {
      return ctx->Error(absl::StrCat("The default's shape ", StaticShapeString(in),
                                     " is not compatible with the declared shape ",
                                     StaticShapeString(out)));
    }
  }
  ctx->set_output(0, out);
  return OkStatus();
}

Status ConstShape(ShapeContext* ctx) {
  Tensor value;
  if (GetNodeAttr(ctx->node(), "value", &value).ok()) ctx->set_output(0, value.shape());
  return OkStatus();
}

// ReadVariable: the shape the variable was declared with.
Status ReadVariableShape(ShapeContext* ctx) {
  const proto::NodeDef& producer = ctx->input_node(0);
  PartialShape shape;
  if (producer.op() == "Variable" && GetNodeAttr(producer, "shape", &shape).ok()) {
    ctx->set_output(0, FromPartial(shape));
  }
  return OkStatus();
}

// The queue's declared component shapes, or none.
std::vector<StaticShape> QueueShapes(const ShapeContext& ctx) {
  std::vector<StaticShape> shapes;
  const proto::NodeDef& queue = ctx.input_node(0);
  auto it = queue.attr().find("shapes");
  const bool priority = queue.op() == "PriorityQueue";
  if ((queue.op() != "FIFOQueue" && queue.op() != "PaddingFIFOQueue" &&
       queue.op() != "RandomShuffleQueue" && !priority) ||
      it == queue.attr().end()) {
    return shapes;
  }
  if (priority) shapes.push_back(Make({}));  // the int64 priority, component 0
  for (const auto& s : it->second.list().shape()) {
    if (s.unknown_rank()) {
      shapes.push_back(std::nullopt);
    } else {
      shapes.push_back(Make(std::vector<int64_t>(s.dim().begin(), s.dim().end())));
    }
  }
  return shapes;
}

// Dequeues: each component's shape, with a first dimension of `first` (none when
// `batched` is false).
ShapeFn DequeueShape(bool batched, bool known_count) {
  return [batched, known_count](ShapeContext* ctx) {
    const std::vector<StaticShape> shapes = QueueShapes(*ctx);
    if (static_cast<int>(shapes.size()) != ctx->num_outputs()) return OkStatus();
    int64_t first = kUnknown;
    if (known_count) {
      auto n = ctx->constant_ints(1);
      if (n && n->size() == 1) first = (*n)[0];
    }
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      if (!shapes[i] || !batched) {
        ctx->set_output(i, shapes[i]);
        continue;
      }
      std::vector<int64_t> dims{first};
      dims.insert(dims.end(), shapes[i]->dims().begin(), shapes[i]->dims().end());
      ctx->set_output(i, Make(dims));
    }
    return OkStatus();
  };
}

// Reshape: the constant shape, with one -1 resolved when the input is fully defined.
Status ReshapeShape(ShapeContext* ctx) {
  auto target = ctx->constant_ints(1);
  if (!target) {
    // The shape of another tensor (Shape(x)): its known dimensions, exactly (-1 there is
    // an unknown dimension, not "infer this one").
    if (ctx->input_node(1).op() == "Shape") ctx->set_output(0, ctx->input_as_shape(1));
    return OkStatus();
  }
  std::vector<int64_t> dims = *target;
  const StaticShape& in = ctx->input(0);
  auto unknown = std::find(dims.begin(), dims.end(), -1);
  if (in && in->IsFullyDefined()) {
    int64_t known = 1;
    for (int64_t d : dims) known *= d == -1 ? 1 : d;
    if (unknown != dims.end()) {
      if (known == 0 || in->num_elements() % known != 0) {
        return ctx->Error(absl::StrCat("Cannot reshape a tensor with ", in->num_elements(),
                                       " elements to shape ", StaticShapeString(Make(dims))));
      }
      *unknown = in->num_elements() / known;
    } else if (known != in->num_elements()) {
      return ctx->Error(absl::StrCat("Cannot reshape a tensor with ", in->num_elements(),
                                     " elements to shape ", StaticShapeString(Make(dims)), " (",
                                     known, " elements)"));
    }
  }
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// StridedSlice: the spec's output shape when begin, end and strides are constants and the
// input's rank is known (unknown input dimensions stay unknown unless shrunk); a subscript
// the input cannot take fails the node, as in TF.
Status StridedSliceShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  auto begin = ctx->constant_ints(1);
  auto end = ctx->constant_ints(2);
  auto strides = ctx->constant_ints(3);
  if (!in || !begin || !end || !strides) return OkStatus();
  StridedSliceMasks masks;
  for (auto [attr, field] : {std::pair{"begin_mask", &masks.begin},
                             {"end_mask", &masks.end},
                             {"ellipsis_mask", &masks.ellipsis},
                             {"new_axis_mask", &masks.new_axis},
                             {"shrink_axis_mask", &masks.shrink_axis}}) {
    TW_RETURN_IF_ERROR(GetNodeAttr(ctx->node(), attr, field));
  }
  auto spec = ComputeStridedSlice(in->dims(), *begin, *end, *strides, masks);
  if (!spec.ok()) return ctx->Error(std::string(spec.status().message()));
  ctx->set_output(0, Make(spec->final_shape));
  return OkStatus();
}

// Sum, Mean, Max, ...: the constant axes removed (or kept as 1).
Status ReductionShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  auto axes = ctx->constant_ints(1);
  if (!in || !axes) return OkStatus();
  bool keep = false;
  (void)GetNodeAttr(ctx->node(), "keep_dims", &keep);
  const int rank = in->rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    if (a < -rank || a >= rank) {
      return ctx->Error(
          absl::StrCat("Invalid reduction dimension ", a, " for input with ", rank, " dimensions"));
    }
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      dims.push_back(in->dim(i));
    } else if (keep) {
      dims.push_back(1);
    }
  }
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

Status ArgMaxShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  auto axis = ctx->constant_ints(1);
  if (!in || !axis || axis->size() != 1) return OkStatus();
  const int rank = in->rank();
  int64_t a = (*axis)[0];
  if (a < -rank || a >= rank) {
    return ctx->Error(
        absl::StrCat("Expected dimension in the range [", -rank, ", ", rank, "), but got ", a));
  }
  if (a < 0) a += rank;
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    if (i != a) dims.push_back(in->dim(i));
  }
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// Fill and the random ops: the constant shape input (index `i`).
ShapeFn ShapeFromInput(int i) {
  return [i](ShapeContext* ctx) {
    if (auto dims = ctx->constant_ints(i)) ctx->set_output(0, Make(*dims));
    return OkStatus();
  };
}

Status ShapeOpShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  ctx->set_output(0, in ? Make({in->rank()}) : Make({kUnknown}));
  return OkStatus();
}

Status ConcatShape(ShapeContext* ctx) {
  const int n = ctx->num_inputs() - 1;  // the values, then the axis
  auto axis = ctx->constant_ints(n);
  std::vector<int64_t> dims;
  bool have_rank = false;
  for (int i = 0; i < n; ++i) {
    const StaticShape& s = ctx->input(i);
    if (!s) continue;
    if (!have_rank) {
      dims = s->dims();
      have_rank = true;
      continue;
    }
    if (s->rank() != static_cast<int>(dims.size())) {
      return ctx->Error(
          absl::StrCat("Shape must be rank ", dims.size(), " but is rank ", s->rank()));
    }
  }
  if (!have_rank || !axis || axis->size() != 1) return OkStatus();
  const int rank = static_cast<int>(dims.size());
  int64_t a = (*axis)[0];
  if (a < -rank || a >= rank) {
    return ctx->Error(
        absl::StrCat("ConcatOp : Expected concatenating dimensions in the range "
                     "[",
                     -rank, ", ", rank, "), but got ", a));
  }
  if (a < 0) a += rank;
  std::vector<int64_t> out(static_cast<size_t>(rank), kUnknown);
  int64_t total = 0;
  bool total_known = true;
  for (int i = 0; i < n; ++i) {
    const StaticShape& s = ctx->input(i);
    if (!s) {
      total_known = false;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      if (d == a) continue;
      if (!MergeDim(out[d], s->dim(d), &out[d])) {
        return ctx->Error(absl::StrCat("Dimension ", d, " in both shapes must be equal, but are ",
                                       out[d], " and ", s->dim(d)));
      }
    }
    if (s->dim(static_cast<int>(a)) == kUnknown) total_known = false;
    total += s->dim(static_cast<int>(a));
  }
  out[a] = total_known ? total : kUnknown;
  ctx->set_output(0, Make(out));
  return OkStatus();
}

// The shape every input must have, merged from their static shapes (unknown when none is
// known): the same rank, and dimensions that agree. The error names the dimension as
// Pack's does ("Dimension 1 in both shapes must be equal") when `per_dimension_message`,
// else as AddN's ("Dimensions must be equal").
Status MergeInputShapes(ShapeContext* ctx, bool per_dimension_message, StaticShape* merged) {
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    const StaticShape& s = ctx->input(i);
    if (!s) continue;
    if (!*merged) {
      *merged = s;
      continue;
    }
    if (s->rank() != (*merged)->rank()) {
      return ctx->Error(absl::StrCat("Shapes must be equal rank, but are ", (*merged)->rank(),
                                     " and ", s->rank()));
    }
    std::vector<int64_t> dims = (*merged)->dims();
    for (int d = 0; d < s->rank(); ++d) {
      if (!MergeDim(dims[d], s->dim(d), &dims[d])) {
        return ctx->Error(absl::StrCat(
            per_dimension_message ? absl::StrCat("Dimension ", d, " in both shapes must be equal")
                                  : std::string("Dimensions must be equal"),
            ", but are ", (*merged)->dim(d), " and ", s->dim(d)));
      }
    }
    *merged = Make(dims);
  }
  return OkStatus();
}

// Select: t and e must agree; what either knows is the output's (a scalar condition picks
// one whole, a vector or same-shaped one picks elements, the shape is theirs either way).
Status SelectShape(ShapeContext* ctx) {
  StaticShape merged = ctx->input(1);
  const StaticShape& e = ctx->input(2);
  if (merged && e) {
    if (merged->rank() != e->rank()) {
      return ctx->Error(
          absl::StrCat("Shapes must be equal rank, but are ", merged->rank(), " and ", e->rank()));
    }
    std::vector<int64_t> dims = merged->dims();
    for (int d = 0; d < e->rank(); ++d) {
      if (!MergeDim(dims[d], e->dim(d), &dims[d])) {
        return ctx->Error(absl::StrCat("Dimension ", d, " in both shapes must be equal, but are ",
                                       merged->dim(d), " and ", e->dim(d)));
      }
    }
    merged = Make(dims);
  } else if (!merged) {
    merged = e;
  }
  ctx->set_output(0, merged);
  return OkStatus();
}

Status PackShape(ShapeContext* ctx) {
  StaticShape merged;
  TW_RETURN_IF_ERROR(MergeInputShapes(ctx, /*per_dimension_message=*/true, &merged));
  if (!merged) return OkStatus();
  int64_t axis = 0;
  (void)GetNodeAttr(ctx->node(), "axis", &axis);
  const int rank = merged->rank() + 1;
  if (axis < -rank || axis >= rank) return OkStatus();
  if (axis < 0) axis += rank;
  std::vector<int64_t> dims = merged->dims();
  dims.insert(dims.begin() + axis, ctx->num_inputs());
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

Status GatherShape(ShapeContext* ctx) {
  const StaticShape& params = ctx->input(0);
  const StaticShape& indices = ctx->input(1);
  if (!params || !indices || params->rank() < 1) return OkStatus();
  std::vector<int64_t> dims = indices->dims();
  dims.insert(dims.end(), params->dims().begin() + 1, params->dims().end());
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// Slice: the constant sizes, -1 taking the rest of a known dimension.
Status SliceShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  auto begin = ctx->constant_ints(1);
  auto size = ctx->constant_ints(2);
  if (!size) {
    // Sizes that are another tensor's shape (a gradient's Slice(grad, offset, Shape(x))):
    // that tensor's static shape.
    if (ctx->input_node(2).op() == "Shape") {
      ctx->set_output(0, ctx->input_as_shape(2));
    } else if (in) {
      ctx->set_output(0, Make(std::vector<int64_t>(in->rank(), kUnknown)));
    }
    return OkStatus();
  }
  if (in && static_cast<int>(size->size()) != in->rank()) {
    return ctx->Error(
        absl::StrCat("Expected size to have ", in->rank(), " elements, got ", size->size()));
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < size->size(); ++i) {
    const int64_t n = (*size)[i];
    if (n >= 0) {
      dims.push_back(n);
    } else if (in && begin && in->dim(static_cast<int>(i)) != kUnknown) {
      dims.push_back(in->dim(static_cast<int>(i)) - (*begin)[i]);
    } else {
      dims.push_back(kUnknown);
    }
  }
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

Status SparseSoftmaxCrossEntropyShape(ShapeContext* ctx) {
  const StaticShape& features = ctx->input(0);
  if (features && features->rank() != 2) {
    return ctx->Error(absl::StrCat("Shape must be rank 2 but is rank ", features->rank()));
  }
  int64_t batch = features ? features->dim(0) : kUnknown;
  const StaticShape& labels = ctx->input(1);
  if (labels && labels->rank() == 1 && !MergeDim(batch, labels->dim(0), &batch)) {
    return ctx->Error(absl::StrCat("Dimensions must be equal, but are ", features->dim(0), " and ",
                                   labels->dim(0)));
  }
  ctx->set_output(0, Make({batch}));
  ctx->set_output(1, features);
  return OkStatus();
}

Status AddNShape(ShapeContext* ctx) {
  StaticShape merged;
  TW_RETURN_IF_ERROR(MergeInputShapes(ctx, /*per_dimension_message=*/false, &merged));
  ctx->set_output(0, merged);
  return OkStatus();
}

// Unique: y is a vector of unknown length, idx has x's shape; x must be a vector.
Status UniqueShape(ShapeContext* ctx) {
  const StaticShape& x = ctx->input(0);
  if (x && x->rank() != 1) {
    return ctx->Error(absl::StrCat("Shape must be rank 1 but is rank ", x->rank()));
  }
  ctx->set_output(0, Make({kUnknown}));
  ctx->set_output(1, x ? x : Make({kUnknown}));
  return OkStatus();
}

// The candidate samplers: [num_sampled] candidates and expected counts, and the true
// classes' expected counts in true_classes' shape ([batch, num_true]).
Status CandidateSamplerShape(ShapeContext* ctx) {
  int64_t num_sampled = kUnknown;
  (void)GetNodeAttr(ctx->node(), "num_sampled", &num_sampled);
  const StaticShape& true_classes = ctx->input(0);
  if (true_classes && true_classes->rank() != 2) {
    return ctx->Error(absl::StrCat("Shape must be rank 2 but is rank ", true_classes->rank()));
  }
  ctx->set_output(0, Make({num_sampled}));
  ctx->set_output(1, true_classes);
  ctx->set_output(2, Make({num_sampled}));
  return OkStatus();
}

Status ScalarShape(ShapeContext* ctx) {
  ctx->set_output(0, Scalar());
  return OkStatus();
}

}  // namespace

TW_REGISTER_SHAPE_FN("Const", ConstShape);
TW_REGISTER_SHAPE_FN("Placeholder", [](ShapeContext* ctx) { return AttrShape(ctx, "shape"); });
TW_REGISTER_SHAPE_FN("PlaceholderWithDefault", PlaceholderWithDefaultShape);
TW_REGISTER_SHAPE_FN("Variable", ScalarShape);  // the handle
TW_REGISTER_SHAPE_FN("ReadVariable", ReadVariableShape);
TW_REGISTER_SHAPE_FN("IsVariableInitialized", ScalarShape);
TW_REGISTER_SHAPE_FN("CountUpTo", ScalarShape);
// Summary ops: one serialized Summary each (src/ops/summary_ops.cc).
TW_REGISTER_SHAPE_FN("ScalarSummary", ScalarShape);
TW_REGISTER_SHAPE_FN("HistogramSummary", ScalarShape);
TW_REGISTER_SHAPE_FN("MergeSummary", ScalarShape);
TW_REGISTER_SHAPE_FN("FIFOQueue", ScalarShape);
TW_REGISTER_SHAPE_FN("PaddingFIFOQueue", ScalarShape);
TW_REGISTER_SHAPE_FN("RandomShuffleQueue", ScalarShape);
TW_REGISTER_SHAPE_FN("PriorityQueue", ScalarShape);
TW_REGISTER_SHAPE_FN("QueueSize", ScalarShape);
TW_REGISTER_SHAPE_FN("QueueIsClosed", ScalarShape);
TW_REGISTER_SHAPE_FN("QueueDequeue", DequeueShape(false, false));
TW_REGISTER_SHAPE_FN("QueueDequeueMany", DequeueShape(true, true));
TW_REGISTER_SHAPE_FN("QueueDequeueUpTo", DequeueShape(true, false));

// Element-wise: the shape of their (first) tensor input.
TW_REGISTER_SHAPE_FN("Identity", SameAs(0));
TW_REGISTER_SHAPE_FN("StopGradient", SameAs(0));
TW_REGISTER_SHAPE_FN("Cast", SameAs(0));
TW_REGISTER_SHAPE_FN("ZerosLike", SameAs(0));
TW_REGISTER_SHAPE_FN("OnesLike", SameAs(0));
TW_REGISTER_SHAPE_FN("Select", SelectShape);
TW_REGISTER_SHAPE_FN("Assign", SameAs(1));  // its value
TW_REGISTER_SHAPE_FN("AssignAdd", SameAs(1));
TW_REGISTER_SHAPE_FN("AssignSub", SameAs(1));
TW_REGISTER_SHAPE_FN("ReluGrad", SameAs(1));
TW_REGISTER_SHAPE_FN("SigmoidGrad", SameAs(0));
TW_REGISTER_SHAPE_FN("TanhGrad", SameAs(0));
TW_REGISTER_SHAPE_FN("AddN", AddNShape);
TW_REGISTER_SHAPE_FN("InTopKV2", SameAs(1));  // one bool per target

// One shape function for several ops.
#define TW_SHAPE_FNS(fn, ...)                                                              \
  [[maybe_unused]] static const bool TW_SHAPE_FN_CONCAT(tw_shape_fns_, __COUNTER__) = [] { \
    for (const char* op : {__VA_ARGS__}) internal::ShapeFnRegistrar registrar(op, fn);     \
    return true;                                                                           \
  }()

TW_SHAPE_FNS(SameAs(0), "Neg", "Square", "Sqrt", "Exp", "Log", "Abs", "LogicalNot", "Relu",
             "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "MaxGrad", "ProdGrad");
TW_SHAPE_FNS(BroadcastShapes, "Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Equal", "NotEqual",
             "Less", "LessEqual", "Greater", "GreaterEqual", "FloorDiv", "FloorMod", "Pow",
             "LogicalAnd", "LogicalOr");
// More element-wise math and activations (cwise_math_ops.cc, activation_ops.cc).
TW_SHAPE_FNS(SameAs(0), "Floor", "Ceil", "Round", "Sign", "Reciprocal", "Rsqrt", "Cos", "Sin",
             "Erf", "RsqrtGrad", "ClipByValue", "Elu", "Selu", "LeakyRelu", "Relu6", "Softplus",
             "Softsign", "EluGrad", "SeluGrad", "LeakyReluGrad", "Relu6Grad", "SoftplusGrad",
             "SoftsignGrad");
TW_REGISTER_SHAPE_FN("L2Loss", ScalarShape);
TW_SHAPE_FNS(ReductionShape, "Sum", "Mean", "Max", "Min", "Prod", "All", "Any");
TW_SHAPE_FNS(ShapeFromInput(0), "RandomUniform", "RandomStandardNormal", "TruncatedNormal", "Fill");
TW_SHAPE_FNS(SameAs(0), "RandomShuffle");

TW_REGISTER_SHAPE_FN("MatMul", MatMulShape);
TW_REGISTER_SHAPE_FN("BiasAdd", BiasAddShape);
TW_REGISTER_SHAPE_FN("BiasAddGrad", [](ShapeContext* ctx) {
  const StaticShape& g = ctx->input(0);
  if (!g) return OkStatus();
  if (g->rank() < 2) {
    return ctx->Error(absl::StrCat("Shape must be at least rank 2 but is rank ", g->rank()));
  }
  std::string format = "NHWC";
  (void)GetNodeAttr(ctx->node(), "data_format", &format);
  ctx->set_output(0, Make({g->dim(format == "NCHW" ? 1 : g->rank() - 1)}));
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("Reshape", ReshapeShape);
TW_REGISTER_SHAPE_FN("ArgMax", ArgMaxShape);
TW_REGISTER_SHAPE_FN("ArgMin", ArgMaxShape);  // ArgMin: like ArgMax
TW_REGISTER_SHAPE_FN("StridedSlice", StridedSliceShape);
TW_REGISTER_SHAPE_FN("StridedSliceGrad", [](ShapeContext* ctx) {
  ctx->set_output(0, ctx->input_as_shape(0));
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("Shape", ShapeOpShape);
TW_REGISTER_SHAPE_FN("Concat", ConcatShape);
TW_REGISTER_SHAPE_FN("Pack", PackShape);
TW_REGISTER_SHAPE_FN("Gather", GatherShape);
TW_REGISTER_SHAPE_FN("Slice", SliceShape);
TW_REGISTER_SHAPE_FN("Unique", UniqueShape);
TW_SHAPE_FNS(CandidateSamplerShape, "LogUniformCandidateSampler", "UniformCandidateSampler");
TW_REGISTER_SHAPE_FN("ComputeAccidentalHits", [](ShapeContext* ctx) {
  for (int i = 0; i < 3; ++i) ctx->set_output(i, Make({kUnknown}));
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxCrossEntropyShape);

}  // namespace tw
