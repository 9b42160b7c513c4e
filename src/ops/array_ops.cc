// Array ops of the basic family, those that move elements between tensors without looking at
// their values: Reshape, Fill, Concat, Slice, Pack, Gather. Definitions, CPU kernels and
// graph-building functions (declared in tensorweave/ops/basic_ops.h).
//
// The kernels work for every element type, strings and resource handles included: they are
// written once as templates over the C++ element type and dispatched on the dtype at run time.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "src/framework/op_kernel.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

// The values of an int32 or int64 tensor (an index input such as a shape or an axis).
std::vector<int64_t> IndexValues(const Tensor& t) {
  if (t.dtype() == DT_INT32) {
    auto f = t.flat<int32_t>();
    return std::vector<int64_t>(f.begin(), f.end());
  }
  auto f = t.flat<int64_t>();
  return std::vector<int64_t>(f.begin(), f.end());
}

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

// "[2,3]" for error messages about shape or index vectors.
std::string VectorString(const std::vector<int64_t>& v) {
  return "[" + absl::StrJoin(v, ",") + "]";
}

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

// ---- Slice ----
TW_REGISTER_OP("Slice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("size: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Doc(
        "The part of input starting at begin with extent size in each dimension; a size of -1 "
        "takes the rest of that dimension.");

// Copies the box of `in` starting at `begin` with the dimensions of `out` into `out`.
template <typename T>
void SliceCopy(const Tensor& in, const std::vector<int64_t>& begin, Tensor* out) {
  auto src = in.flat<T>();
  auto dst = out->flat<T>();
  if (dst.empty()) return;
  const int rank = in.rank();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  // Trailing dimensions taken whole join the innermost sliced one into a contiguous run.
  int inner = rank - 1;
  int64_t run = out->dim(inner);
  while (inner > 0 && out->dim(inner) == in.dim(inner)) {
    --inner;
    run *= out->dim(inner);
  }
  std::vector<int64_t> stride(rank, 1);  // of the input
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * in.dim(d + 1);
  std::vector<int64_t> idx(inner, 0);  // position in the output's dimensions before `inner`
  auto it = dst.begin();
  while (true) {
    int64_t from = begin[inner] * stride[inner];
    for (int d = 0; d < inner; ++d) from += (begin[d] + idx[d]) * stride[d];
    it = std::copy_n(src.begin() + from, run, it);
    int d = inner - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < out->dim(d)) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

class SliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& begin_t = ctx->input(1);
    const Tensor& size_in = ctx->input(2);
    const int rank = input.rank();
    TW_OP_REQUIRES(ctx,
                   begin_t.rank() == 1 && size_in.rank() == 1 && begin_t.dim(0) == rank &&
                       size_in.dim(0) == rank,
                   errors::InvalidArgument(
                       "node ", name(), ": Slice of input shape ", input.shape().DebugString(),
                       " needs begin and size vectors of ", rank, " elements, got shapes ",
                       begin_t.shape().DebugString(), " and ", size_in.shape().DebugString()));
    const std::vector<int64_t> begin = IndexValues(begin_t);
    std::vector<int64_t> size = IndexValues(size_in);
    bool rows_only = true;  // the slice is a range of whole rows along dimension 0
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = input.dim(d);
      TW_OP_REQUIRES(ctx, begin[d] >= 0 && begin[d] <= dim,
                     errors::InvalidArgument("node ", name(), ": Slice begin[", d, "] = ", begin[d],
                                             " is not in [0, ", dim, "] for input shape ",
                                             input.shape().DebugString()));
      if (size[d] == -1) size[d] = dim - begin[d];
      TW_OP_REQUIRES(ctx, size[d] >= 0 && size[d] <= dim - begin[d],
                     errors::InvalidArgument("node ", name(), ": Slice size[", d, "] = ", size[d],
                                             " is not -1 or in [0, ", dim - begin[d],
                                             "] for begin[", d, "] = ", begin[d],
                                             " and input shape ", input.shape().DebugString()));
      if (d > 0 && size[d] != dim) rows_only = false;
    }
    if (rank > 0 && rows_only) {
      // Whole rows are contiguous: view them in place, as Tensor::Slice shares the buffer.
      auto view = input.Slice(begin[0], begin[0] + size[0]);
      TW_OP_REQUIRES_OK(ctx, view.status());
      ctx->set_output(0, *std::move(view));
      return;
    }
    auto shape = TensorShape::Create(size);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    DispatchType(input.dtype(), [&]<typename T>() { SliceCopy<T>(input, begin, out); });
  }
};
TW_REGISTER_KERNEL("Slice", "CPU", SliceOp);

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

// ---- Gather ----
TW_REGISTER_OP("Gather")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int32, int64}")
    .Doc(
        "Rows of params (along dimension 0) picked by indices: output shape is indices.shape + "
        "params.shape[1:]. Every index must be in [0, params.shape[0]).");

// "[1,0]": the position of flat element `i` in a tensor of `shape`.
// Empty for a scalar.
std::string PositionString(const TensorShape& shape, int64_t i) {
  if (shape.rank() == 0) return "";
  std::vector<int64_t> pos(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    pos[d] = i % shape.dim(d);
    i /= shape.dim(d);
  }
  return VectorString(pos);
}

class GatherOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices_t = ctx->input(1);
    TW_OP_REQUIRES(ctx, params.rank() >= 1,
                   errors::InvalidArgument("node ", name(), ": Gather params must be at least ",
                                           "1-D, got shape ", params.shape().DebugString()));
    const int64_t limit = params.dim(0);
    const std::vector<int64_t> indices = IndexValues(indices_t);
    for (size_t i = 0; i < indices.size(); ++i) {
      TW_OP_REQUIRES(
          ctx, indices[i] >= 0 && indices[i] < limit,
          errors::InvalidArgument("node ", name(), ": Gather indices",
                                  PositionString(indices_t.shape(), static_cast<int64_t>(i)), " = ",
                                  indices[i], " is not in [0, ", limit, ") (params shape ",
                                  params.shape().DebugString(), ")"));
    }
    std::vector<int64_t> out_dims = indices_t.shape().dims();
    out_dims.insert(out_dims.end(), params.shape().dims().begin() + 1, params.shape().dims().end());
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": Gather: "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t row = limit == 0 ? 0 : params.num_elements() / limit;
    if (row == 0) return;
    DispatchType(params.dtype(), [&]<typename T>() {
      auto src = params.flat<T>();
      auto it = out->flat<T>().begin();
      for (int64_t index : indices) it = std::copy_n(src.begin() + index * row, row, it);
    });
  }
};
TW_REGISTER_KERNEL("Gather", "CPU", GatherOp);

}  // namespace

namespace ops {

Output Reshape(const Scope& scope, Input tensor, Input shape) {
  return scope.AddNodeOutput("Reshape", {{tensor}, {shape}});
}

Output Fill(const Scope& scope, Input dims, Input value) {
  return scope.AddNodeOutput("Fill", {{dims}, {value}});
}

Output Concat(const Scope& scope, const InputList& values, Input axis) {
  return scope.AddNodeOutput("Concat", {values, {axis}});
}

Output Slice(const Scope& scope, Input input, Input begin, Input size) {
  return scope.AddNodeOutput("Slice", {{input}, {begin}, {size}});
}

Output Pack(const Scope& scope, const InputList& values, int axis) {
  return scope.AddNodeOutput("Pack", {values}, {{"axis", MakeAttr(axis)}});
}

Output Gather(const Scope& scope, Input params, Input indices) {
  return scope.AddNodeOutput("Gather", {{params}, {indices}});
}

}  // namespace ops
}  // namespace tw
