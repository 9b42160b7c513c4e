// Array ops that join tensors along an axis and take them apart again: Concat (with
// ConcatOffset, where each piece starts, for its gradient), Pack and Unpack. Split, Concat's
// inverse, is in split_ops.cc. Definitions, CPU kernels, gradients and graph-building functions
// (declared in tensorweave/ops/basic_ops.h).
//
// The kernels are written once as templates over the C++ element type and dispatched on the
// dtype at run time; most take every type, strings and resource handles included.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_util.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

using internal::IndexValues;
using internal::VectorString;

// Interleaves rows: `pieces[i]` is viewed as `outer` rows of `row[i]` elements, and output
// row o is the concatenation of row o of every piece. Both Concat and Pack reduce to this.
template <typename T>
void InterleaveRows(const std::vector<const Tensor*>& pieces, const std::vector<int64_t>& row,
                    int64_t outer, Tensor* out) {
  std::vector<absl::Span<const T>> src;
  for (const Tensor* p : pieces) src.push_back(p->flat<T>());
  auto it = out->flat<T>().begin();
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < src.size(); ++i) {
      it = std::copy_n(src[i].begin() + o * row[i], row[i], it);
    }
  }
}

// ---- Concat ----
// TensorFlow's ConcatV2 (values first, axis last). N may be 1, unlike in TensorFlow, so that
// code concatenating a list need not special-case a list of one.
TW_REGISTER_OP("Concat")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = int32")
    .Doc(
        "Joins values along dimension axis (negative counts from the end). All values have the "
        "same rank and the same dimensions except along axis.");

class ConcatOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int n = num_inputs() - 1;
    const Tensor& axis_t = ctx->input(n);
    TW_OP_REQUIRES(ctx, axis_t.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": Concat axis must be a scalar, ",
                                           "got shape ", axis_t.shape().DebugString()));
    const Tensor& first = ctx->input(0);
    const int rank = first.rank();
    TW_OP_REQUIRES(ctx, rank > 0,
                   errors::InvalidArgument("node ", name(), ": Concat of scalars (values[0] ",
                                           "has shape []); use Pack to join scalars"));
    const int64_t axis_value = IndexValues(axis_t)[0];
    TW_OP_REQUIRES(
        ctx, axis_value >= -rank && axis_value < rank,
        errors::InvalidArgument("node ", name(), ": Concat axis ", axis_value, " is not in [",
                                -rank, ", ", rank, ") for inputs of rank ", rank));
    const int axis = static_cast<int>(axis_value < 0 ? axis_value + rank : axis_value);

    std::vector<int64_t> out_dims = first.shape().dims();
    out_dims[axis] = 0;
    std::vector<const Tensor*> pieces;
    std::vector<int64_t> row;  // elements of each piece per outer index
    for (int i = 0; i < n; ++i) {
      const Tensor& in = ctx->input(i);
      bool match = in.rank() == rank;
      for (int d = 0; match && d < rank; ++d) match = d == axis || in.dim(d) == first.dim(d);
      TW_OP_REQUIRES(ctx, match,
                     errors::InvalidArgument(
                         "node ", name(), ": Concat along axis ", axis, ": values[", i,
                         "] has shape ", in.shape().DebugString(), ", incompatible with values[0] ",
                         "of shape ", first.shape().DebugString()));
      out_dims[axis] += in.dim(axis);  // bounded: the inputs exist
      pieces.push_back(&in);
    }
    if (n == 1) {
      ctx->set_output(0, first);
      return;
    }
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= first.dim(d);
    for (const Tensor* p : pieces) row.push_back(outer == 0 ? 0 : p->num_elements() / outer);
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    DispatchType(first.dtype(), [&]<typename T>() { InterleaveRows<T>(pieces, row, outer, out); });
  }
};
TW_REGISTER_KERNEL("Concat", "CPU", ConcatOp);

// ---- ConcatOffset ----
TW_REGISTER_OP("ConcatOffset")
    .Input("concat_dim: Tidx")
    .Input("shape: N * T")
    .Output("offset: N * T")
    .Attr("N: int >= 1")
    .Attr("T: {int32, int64} = int32")
    .Attr("Tidx: {int32, int64} = int32")
    .Doc(
        "Where each of N tensors of the given shapes starts in their Concat along concat_dim: "
        "offset[i] is 0 except along concat_dim, the sum of the earlier sizes there.");

class ConcatOffsetOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int n = num_inputs() - 1;
    const Tensor& axis_t = ctx->input(0);
    TW_OP_REQUIRES(ctx, axis_t.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": concat_dim must be a scalar"));
    const std::vector<int64_t> first = IndexValues(ctx->input(1));
    const int rank = static_cast<int>(first.size());
    const int64_t axis_value = IndexValues(axis_t)[0];
    TW_OP_REQUIRES(
        ctx, ctx->input(1).rank() == 1 && axis_value >= -rank && axis_value < rank,
        errors::InvalidArgument("node ", name(), ": concat_dim ", axis_value, " is not in [", -rank,
                                ", ", rank, ") for shapes of rank ", rank));
    const int64_t axis = axis_value < 0 ? axis_value + rank : axis_value;
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& s = ctx->input(1 + i);
      const std::vector<int64_t> dims = IndexValues(s);
      bool match = s.rank() == 1 && static_cast<int>(dims.size()) == rank;
      for (int d = 0; match && d < rank; ++d) match = d == axis || dims[d] == first[d];
      TW_OP_REQUIRES(ctx, match,
                     errors::InvalidArgument(
                         "node ", name(), ": shape[", i, "] = ", VectorString(dims),
                         " does not match shape[0] = ", VectorString(first), " except at ", axis));
      Tensor* out = nullptr;
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({rank}), &out));
      Dispatch(TypeList<int32_t, int64_t>{}, output_type(i), [&](auto tag) {
        using I = typename decltype(tag)::type;
        auto o = out->flat<I>();
        std::fill(o.begin(), o.end(), I(0));
        o[axis] = static_cast<I>(offset);
      });
      offset += dims[axis];
    }
  }
};
TW_REGISTER_KERNEL("ConcatOffset", "CPU", ConcatOffsetOp);

// ---- Pack ----
TW_REGISTER_OP("Pack")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .Doc(
        "Stacks N tensors of one shape into a tensor of one more dimension, of size N at axis "
        "(negative counts from the end of the output's dimensions).");

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int n = num_inputs();
    const Tensor& first = ctx->input(0);
    const int out_rank = first.rank() + 1;
    TW_OP_REQUIRES(ctx, axis_ >= -out_rank && axis_ < out_rank,
                   errors::InvalidArgument("node ", name(), ": Pack axis ", axis_, " is not in [",
                                           -out_rank, ", ", out_rank, ") for inputs of shape ",
                                           first.shape().DebugString()));
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + out_rank : axis_);
    std::vector<const Tensor*> pieces;
    for (int i = 0; i < n; ++i) {
      const Tensor& in = ctx->input(i);
      TW_OP_REQUIRES(ctx, in.shape() == first.shape(),
                     errors::InvalidArgument("node ", name(), ": Pack: values[", i, "] has shape ",
                                             in.shape().DebugString(), ", values[0] has shape ",
                                             first.shape().DebugString()));
      pieces.push_back(&in);
    }
    std::vector<int64_t> out_dims = first.shape().dims();
    out_dims.insert(out_dims.begin() + axis, n);
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= first.dim(d);
    const std::vector<int64_t> row(n, outer == 0 ? 0 : first.num_elements() / outer);
    DispatchType(first.dtype(), [&]<typename T>() { InterleaveRows<T>(pieces, row, outer, out); });
  }

 private:
  int64_t axis_ = 0;
};
TW_REGISTER_KERNEL("Pack", "CPU", PackOp);

// ---- Unpack ----
TW_REGISTER_OP("Unpack")
    .Input("value: T")
    .Output("output: num * T")
    .Attr("num: int >= 1")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .Doc(
        "The num tensors of value along dimension axis (negative counts from the end), each "
        "without that dimension: the inverse of Pack.");

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const int rank = value.rank();
    const int n = num_outputs();
    TW_OP_REQUIRES(
        ctx, axis_ >= -rank && axis_ < rank,
        errors::InvalidArgument("node ", name(), ": Unpack axis ", axis_, " is not in [", -rank,
                                ", ", rank, ") for value of shape ", value.shape().DebugString()));
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + rank : axis_);
    TW_OP_REQUIRES(
        ctx, value.dim(axis) == n,
        errors::InvalidArgument("node ", name(), ": Unpack of ", n, " tensors along ", "axis ",
                                axis, " of shape ", value.shape().DebugString()));
    std::vector<int64_t> dims = value.shape().dims();
    dims.erase(dims.begin() + axis);
    auto shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    if (axis == 0) {  // each piece is contiguous: views, no copies
      for (int i = 0; i < n; ++i) {
        auto piece = value.Slice(i, i + 1);
        TW_OP_REQUIRES_OK(ctx, piece.status());
        auto view = piece->Reshaped(*shape);
        TW_OP_REQUIRES_OK(ctx, view.status());
        ctx->set_output(i, *std::move(view));
      }
      return;
    }
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= value.dim(d);
    const int64_t inner = shape->num_elements() / std::max<int64_t>(outer, 1);
    for (int i = 0; i < n; ++i) {
      Tensor* out = nullptr;
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(i, *shape, &out));
      if (out->num_elements() == 0) continue;
      DispatchType(value.dtype(), [&]<typename T>() {
        auto src = value.flat<T>();
        auto it = out->flat<T>().begin();
        for (int64_t o = 0; o < outer; ++o) {
          it = std::copy_n(src.begin() + (o * n + i) * inner, inner, it);
        }
      });
    }
  }

 private:
  int64_t axis_ = 0;
};
TW_REGISTER_KERNEL("Unpack", "CPU", UnpackOp);

// ---- Gradients ----

// Each value's gradient is its box of the output gradient: ConcatOffset finds the corners.
Status ConcatGradient(const Scope& scope, const ForwardOp& op,
                      const std::vector<Gradient>& grad_outputs,
                      std::vector<Gradient>* grad_inputs) {
  const int n = op.num_inputs() - 1;
  const Output& g = grad_outputs[0].dense;
  if (n == 1) {
    (*grad_inputs)[0].dense = g;
    return OkStatus();
  }
  std::vector<Output> shapes;
  for (int i = 0; i < n; ++i) shapes.push_back(ops::Shape(scope, op.input(i)));
  const std::vector<Output> offsets =
      ops::ConcatOffset(scope, op.input(n), InputList(shapes.begin(), shapes.end()));
  if (static_cast<int>(offsets.size()) != n) return scope.status();
  for (int i = 0; i < n; ++i) {
    if (!op.needs_gradient(i)) continue;
    (*grad_inputs)[i].dense = ops::Slice(scope, g, offsets[i], shapes[i]);
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("Concat", ConcatGradient);

TW_NO_GRADIENT("ConcatOffset");

Status PackGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  int64_t axis = 0;
  TW_RETURN_IF_ERROR(op.GetAttr("axis", &axis));
  const std::vector<Output> pieces =
      ops::Unpack(scope, grad_outputs[0].dense, op.num_inputs(), static_cast<int>(axis));
  if (static_cast<int>(pieces.size()) != op.num_inputs()) return scope.status();
  for (int i = 0; i < op.num_inputs(); ++i) (*grad_inputs)[i].dense = pieces[i];
  return OkStatus();
}
TW_REGISTER_GRADIENT("Pack", PackGradient);

Status UnpackGradient(const Scope& scope, const ForwardOp& op,
                      const std::vector<Gradient>& grad_outputs,
                      std::vector<Gradient>* grad_inputs) {
  int64_t axis = 0;
  TW_RETURN_IF_ERROR(op.GetAttr("axis", &axis));
  InputList pieces;
  for (int k = 0; k < op.num_outputs(); ++k) {
    pieces.push_back(grad_outputs[k].exists() ? grad_outputs[k].dense
                                              : ops::ZerosLike(scope, op.output(k)));
  }
  (*grad_inputs)[0].dense = ops::Pack(scope, pieces, static_cast<int>(axis));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Unpack", UnpackGradient);

}  // namespace

namespace ops {

namespace {
std::vector<Output> AllOutputs(const Operation& op) {
  std::vector<Output> outputs;
  for (int i = 0; i < op.num_outputs(); ++i) outputs.emplace_back(op, i);
  return outputs;
}
}  // namespace

Output Concat(const Scope& scope, const InputList& values, Input axis) {
  return scope.AddNodeOutput("Concat", {values, {axis}});
}

std::vector<Output> ConcatOffset(const Scope& scope, Input concat_dim, const InputList& shapes) {
  return AllOutputs(scope.AddNode("ConcatOffset", {{concat_dim}, shapes}));
}

Output Pack(const Scope& scope, const InputList& values, int axis) {
  return scope.AddNodeOutput("Pack", {values}, {{"axis", MakeAttr(axis)}});
}

std::vector<Output> Unpack(const Scope& scope, Input value, int num, int axis) {
  return AllOutputs(
      scope.AddNode("Unpack", {{value}}, {{"num", MakeAttr(num)}, {"axis", MakeAttr(axis)}}));
}

}  // namespace ops
}  // namespace tw
