// The shape functions of the array ops that move elements into another shape
// (src/ops/transpose_ops.cc, reshape_ops.cc's ExpandDims and Squeeze, split_ops.cc,
// sequence_ops.cc, mirror_pad_ops.cc), after
// TensorFlow's: constant permutations, multiples, axes and shapes give static shapes, and
// inputs the kernel would refuse fail the node at construction with TF's message.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
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

StaticShape UnknownDims(int64_t rank) {
  return Make(std::vector<int64_t>(static_cast<size_t>(rank), kUnknown));
}

// The length of vector input i when its shape is known, else kUnknown.
int64_t VectorLength(const ShapeContext& ctx, int i) {
  const StaticShape& s = ctx.input(i);
  return s && s->rank() == 1 ? s->dim(0) : kUnknown;
}

Status TransposeShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  auto perm = ctx->constant_ints(1);
  int64_t rank = in ? in->rank() : kUnknown;
  const int64_t perm_size = perm ? static_cast<int64_t>(perm->size()) : VectorLength(*ctx, 1);
  if (rank != kUnknown && perm_size != kUnknown && rank != perm_size) {
    return ctx->Error(absl::StrCat("Dimension must be ", rank, " but is ", perm_size));
  }
  if (rank == kUnknown) rank = perm_size;
  if (rank == kUnknown) return OkStatus();
  if (!perm || !in) {
    ctx->set_output(0, UnknownDims(rank));
    return OkStatus();
  }
  std::vector<int64_t> dims;
  for (int64_t p : *perm) {
    if (p < 0 || p >= rank) {
      return ctx->Error(absl::StrCat("perm dim ", p, " is out of range of input rank ", rank));
    }
    dims.push_back(in->dim(static_cast<int>(p)));
  }
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

Status TileShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  auto multiples = ctx->constant_ints(1);
  const int64_t length =
      multiples ? static_cast<int64_t>(multiples->size()) : VectorLength(*ctx, 1);
  if (in && length != kUnknown && in->rank() != length) {
    return ctx->Error(absl::StrCat("Shape must be rank ", in->rank(), " but is rank ", length));
  }
  const int64_t rank = in ? in->rank() : length;
  if (rank == kUnknown) return OkStatus();
  std::vector<int64_t> dims(static_cast<size_t>(rank), kUnknown);
  for (int d = 0; d < rank && multiples; ++d) {
    const int64_t m = (*multiples)[d];
    if (m == 0) {
      dims[d] = 0;
    } else if (in && in->dim(d) != kUnknown) {
      dims[d] = in->dim(d) * m;
    }
  }
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// BroadcastTo: the shape input, which the input's known dimensions must broadcast to.
Status BroadcastToShape(ShapeContext* ctx) {
  const StaticShape out = ctx->input_as_shape(1);
  const StaticShape& in = ctx->input(0);
  if (!out) {
    const int64_t length = VectorLength(*ctx, 1);
    if (length != kUnknown) ctx->set_output(0, UnknownDims(length));
    return OkStatus();
  }
  if (in) {
    if (in->rank() > out->rank()) {
      return ctx->Error(absl::StrCat("Rank of input (", in->rank(),
                                     ") must be no greater than rank of output shape (",
                                     out->rank(), ")."));
    }
    for (int i = 0; i < in->rank(); ++i) {
      const int64_t a = in->dim(i), b = out->dim(out->rank() - in->rank() + i);
      if (a != kUnknown && b != kUnknown && a != 1 && a != b) {
        return ctx->Error(absl::StrCat("Incompatible shapes: ", StaticShapeString(in), " vs. ",
                                       StaticShapeString(out)));
      }
    }
  }
  ctx->set_output(0, out);
  return OkStatus();
}

Status ExpandDimsShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  auto dim = ctx->constant_ints(1);
  if (!in) return OkStatus();
  const int rank = in->rank();
  if (!dim || dim->size() != 1) {
    ctx->set_output(0, UnknownDims(rank + 1));
    return OkStatus();
  }
  int64_t d = (*dim)[0];
  if (d < -1 - rank || d > rank) {
    return ctx->Error(
        absl::StrCat("dim ", d, " not in the interval [", -1 - rank, ", ", rank, "]."));
  }
  if (d < 0) d += rank + 1;
  std::vector<int64_t> dims = in->dims();
  dims.insert(dims.begin() + d, 1);
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

Status SqueezeShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  if (!in) return OkStatus();
  std::vector<int64_t> squeeze;
  (void)GetNodeAttr(ctx->node(), "squeeze_dims", &squeeze);
  const int rank = in->rank();
  std::vector<bool> drop(static_cast<size_t>(rank), false);
  for (int64_t d : squeeze) {
    if (d < -rank || d >= rank) {
      return ctx->Error(absl::StrCat("Tried to squeeze dim index ", d, " for tensor with ", rank,
                                     " dimensions."));
    }
    drop[d < 0 ? d + rank : d] = true;
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = in->dim(d);
    if (squeeze.empty()) {
      // Whether an unknown dimension is 1 decides the rank: unknown.
      if (size == kUnknown) return OkStatus();
      if (size != 1) dims.push_back(size);
      continue;
    }
    if (!drop[d]) {
      dims.push_back(size);
    } else if (size != 1 && size != kUnknown) {
      return ctx->Error(
          absl::StrCat("Can not squeeze dim[", d, "], expected a dimension of 1, got ", size));
    }
  }
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// Range: the element count when start, limit and delta are constants.
Status RangeShape(ShapeContext* ctx) {
  std::optional<Tensor> t[3];
  for (int i = 0; i < 3; ++i) {
    const StaticShape& s = ctx->input(i);
    if (s && s->rank() != 0) {
      return ctx->Error(absl::StrCat("Shape must be rank 0 but is rank ", s->rank()));
    }
    t[i] = ctx->constant_input(i);
  }
  int64_t size = kUnknown;
  if (t[0] && t[1] && t[2]) {
    const bool integral = t[0]->dtype() == DT_INT32 || t[0]->dtype() == DT_INT64;
    auto value = [&](int i) -> double {
      const Tensor& v = *t[i];
      switch (v.dtype()) {
        case DT_FLOAT:
          return v.flat<float>()[0];
        case DT_DOUBLE:
          return v.flat<double>()[0];
        case DT_INT32:
          return v.flat<int32_t>()[0];
        default:
          return static_cast<double>(v.flat<int64_t>()[0]);
      }
    };
    const double start = value(0), limit = value(1), delta = value(2);
    if (delta == 0) return ctx->Error("Requires delta != 0");
    if (delta > 0 && start > limit) return ctx->Error("Requires start <= limit when delta > 0");
    if (delta < 0 && start < limit) return ctx->Error("Requires start >= limit when delta < 0");
    if (integral) {
      // Exactly as the kernel counts, in integers.
      auto as_int = [&](int i) {
        return t[i]->dtype() == DT_INT32 ? int64_t{t[i]->flat<int32_t>()[0]}
                                         : t[i]->flat<int64_t>()[0];
      };
      const int64_t span = std::abs(as_int(1) - as_int(0)), step = std::abs(as_int(2));
      size = (span + step - 1) / step;
    } else {
      size = static_cast<int64_t>(std::ceil(std::abs((limit - start) / delta)));
    }
  }
  ctx->set_output(0, Make({size}));
  return OkStatus();
}

// The split axis (input `axis_input`, a constant) of a value of known `rank`, or -1.
StatusOr<int> SplitAxis(ShapeContext* ctx, int axis_input, int rank) {
  auto axis = ctx->constant_ints(axis_input);
  if (!axis || axis->size() != 1) return -1;
  const int64_t a = (*axis)[0];
  if (a < -rank || a >= rank) {
    return ctx->Error(absl::StrCat("-input rank(-", rank, ") <= split_dim < input rank (", rank,
                                   "), but got ", a));
  }
  return static_cast<int>(a < 0 ? a + rank : a);
}

Status SplitShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(1);
  if (!in) return OkStatus();
  TW_ASSIGN_OR_RETURN(const int axis, SplitAxis(ctx, 0, in->rank()));
  std::vector<int64_t> dims(static_cast<size_t>(in->rank()), kUnknown);
  if (axis >= 0) {
    dims = in->dims();
    const int64_t n = ctx->num_outputs(), size = dims[axis];
    if (size != kUnknown && size % n != 0) {
      return ctx->Error(
          absl::StrCat("Dimension size must be evenly divisible by ", n, " but is ", size));
    }
    if (size != kUnknown) dims[axis] = size / n;
  }
  for (int i = 0; i < ctx->num_outputs(); ++i) ctx->set_output(i, Make(dims));
  return OkStatus();
}

Status SplitVShape(ShapeContext* ctx) {
  const StaticShape& in = ctx->input(0);
  if (!in) return OkStatus();
  TW_ASSIGN_OR_RETURN(const int axis, SplitAxis(ctx, 2, in->rank()));
  auto sizes = ctx->constant_ints(1);
  if (axis < 0 || !sizes || static_cast<int>(sizes->size()) != ctx->num_outputs()) {
    for (int i = 0; i < ctx->num_outputs(); ++i) ctx->set_output(i, UnknownDims(in->rank()));
    return OkStatus();
  }
  const int64_t total = in->dim(axis);
  int64_t determined = 0;
  int unknown = -1;
  for (size_t i = 0; i < sizes->size(); ++i) {
    if ((*sizes)[i] == -1) {
      if (unknown != -1) return ctx->Error("Only one dimensions can have a value of -1");
      unknown = static_cast<int>(i);
    } else {
      determined += (*sizes)[i];
    }
  }
  if (total != kUnknown && ((unknown == -1 && determined != total) || determined > total)) {
    return ctx->Error(absl::StrCat(
        "Determined shape must either match input shape along split_dim exactly if fully "
        "specified, or be less than the size of the input along split_dim if not fully "
        "specified.  Got: ",
        determined));
  }
  for (size_t i = 0; i < sizes->size(); ++i) {
    std::vector<int64_t> dims = in->dims();
    dims[axis] = static_cast<int>(i) == unknown
                     ? (total == kUnknown ? kUnknown : total - determined)
                     : (*sizes)[i];
    ctx->set_output(static_cast<int>(i), Make(dims));
  }
  return OkStatus();
}

Status OneHotShape(ShapeContext* ctx) {
  const StaticShape& indices = ctx->input(0);
  if (!indices) return OkStatus();
  int64_t axis = -1;
  (void)GetNodeAttr(ctx->node(), "axis", &axis);
  const int rank = indices->rank() + 1;
  if (axis != -1 && (axis < 0 || axis >= rank)) {
    return ctx->Error(
        absl::StrCat("Expected axis to be -1 or between [0, ", rank, ").  But received: ", axis));
  }
  auto depth = ctx->constant_ints(1);
  std::vector<int64_t> dims = indices->dims();
  dims.insert(dims.begin() + (axis == -1 ? rank - 1 : axis),
              depth && depth->size() == 1 ? (*depth)[0] : kUnknown);
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// MirrorPad (sign +1) and MirrorPadGrad (sign -1): each dimension grown or shrunk by its
// constant paddings.
ShapeFn MirrorPadShape(int64_t sign) {
  return [sign](ShapeContext* ctx) {
    const StaticShape& in = ctx->input(0);
    auto paddings = ctx->constant_ints(1);
    const StaticShape& p = ctx->input(1);
    if (p && (p->rank() != 2 || (p->dim(1) != kUnknown && p->dim(1) != 2))) {
      return ctx->Error(
          absl::StrCat("paddings must be a matrix with 2 columns: ", StaticShapeString(p)));
    }
    if (in && p && p->dim(0) != kUnknown && p->dim(0) != in->rank()) {
      return ctx->Error(absl::StrCat("Dimension must be ", in->rank(), " but is ", p->dim(0)));
    }
    if (!in) return OkStatus();
    std::vector<int64_t> dims = in->dims();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!paddings || paddings->size() != 2 * dims.size()) {
        dims[d] = kUnknown;
      } else if (dims[d] != kUnknown) {
        dims[d] += sign * ((*paddings)[2 * d] + (*paddings)[2 * d + 1]);
      }
    }
    ctx->set_output(0, Make(dims));
    return OkStatus();
  };
}

}  // namespace

TW_REGISTER_SHAPE_FN("MirrorPad", MirrorPadShape(1));
TW_REGISTER_SHAPE_FN("MirrorPadGrad", MirrorPadShape(-1));
TW_REGISTER_SHAPE_FN("Split", SplitShape);
TW_REGISTER_SHAPE_FN("SplitV", SplitVShape);
TW_REGISTER_SHAPE_FN("OneHot", OneHotShape);
TW_REGISTER_SHAPE_FN("ReverseV2", [](ShapeContext* ctx) {
  ctx->set_output(0, ctx->input(0));
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("Cumsum", [](ShapeContext* ctx) {
  ctx->set_output(0, ctx->input(0));
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("Transpose", TransposeShape);
TW_REGISTER_SHAPE_FN("InvertPermutation", [](ShapeContext* ctx) {
  ctx->set_output(0, ctx->input(0));
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("Tile", TileShape);
TW_REGISTER_SHAPE_FN("BroadcastTo", BroadcastToShape);
TW_REGISTER_SHAPE_FN("ExpandDims", ExpandDimsShape);
TW_REGISTER_SHAPE_FN("Squeeze", SqueezeShape);
TW_REGISTER_SHAPE_FN("Range", RangeShape);

}  // namespace tw
