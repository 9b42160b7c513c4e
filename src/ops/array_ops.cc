// Array ops of the basic family, those that move elements between tensors: Reshape, Fill,
// Concat, Slice, Pack, Gather, Pad, UnsortedSegmentSum, Unpack, ConcatOffset, and Unique (the
// one that compares values). Definitions, CPU kernels, gradients and graph-building functions
// (declared in tensorweave/ops/basic_ops.h).
//
// The kernels work for every element type, strings and resource handles included: they are
// written once as templates over the C++ element type and dispatched on the dtype at run time.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_grad.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"

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

// ---- Pad ----
TW_REGISTER_OP("Pad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64, uint8, bool}")
    .Attr("Tpaddings: {int32, int64} = int32")
    .Doc(
        "input surrounded by zeros: paddings [rank, 2] gives the elements added before and "
        "after each dimension.");

class PadOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& paddings_t = ctx->input(1);
    const int rank = input.rank();
    TW_OP_REQUIRES(
        ctx, paddings_t.rank() == 2 && paddings_t.dim(0) == rank && paddings_t.dim(1) == 2,
        errors::InvalidArgument("node ", name(), ": Pad of input shape ",
                                input.shape().DebugString(), " needs paddings of shape [", rank,
                                ",2], got ", paddings_t.shape().DebugString()));
    const std::vector<int64_t> paddings = IndexValues(paddings_t);
    std::vector<int64_t> out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      const int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
      TW_OP_REQUIRES(ctx, before >= 0 && after >= 0,
                     errors::InvalidArgument("node ", name(), ": Pad paddings must be >= 0, got [",
                                             before, ",", after, "] for dimension ", d));
      out_dims[d] = input.dim(d) + before + after;
    }
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": Pad: "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    DispatchNumeric(input.dtype(), [&]<typename T>() {
      auto dst = out->flat<T>();
      std::fill(dst.begin(), dst.end(), T(0));
      auto src = input.flat<T>();
      if (src.empty()) return;
      if (rank == 0) {
        dst[0] = src[0];
        return;
      }
      // Copy the input row by row (its innermost dimension) into the box at `before`.
      std::vector<int64_t> stride(rank, 1);  // of the output
      for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * out_dims[d + 1];
      const int64_t row = input.dim(rank - 1);
      std::vector<int64_t> idx(rank - 1, 0);
      for (int64_t from = 0; from < static_cast<int64_t>(src.size()); from += row) {
        int64_t to = paddings[2 * (rank - 1)];
        for (int d = 0; d < rank - 1; ++d) to += (idx[d] + paddings[2 * d]) * stride[d];
        std::copy_n(src.begin() + from, row, dst.begin() + to);
        for (int d = rank - 2; d >= 0; --d) {
          if (++idx[d] < input.dim(d)) break;
          idx[d] = 0;
        }
      }
    });
  }
};
TW_REGISTER_KERNEL("Pad", "CPU", PadOp);

// ---- UnsortedSegmentSum ----
TW_REGISTER_OP("UnsortedSegmentSum")
    .Input("data: T")
    .Input("segment_ids: Tindices")
    .Input("num_segments: Tnumsegments")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("Tindices: {int32, int64}")
    .Attr("Tnumsegments: {int32, int64} = int32")
    .Doc(
        "output[k] = the sum of the rows data[i] with segment_ids[i] == k (0 for none); "
        "data.shape starts with segment_ids.shape and output has shape "
        "[num_segments] + data.shape[segment_ids.rank:]. Negative ids drop their rows.");

class UnsortedSegmentSumOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids_t = ctx->input(1);
    const Tensor& num_t = ctx->input(2);
    TW_OP_REQUIRES(ctx, num_t.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": num_segments must be a scalar, ",
                                           "got shape ", num_t.shape().DebugString()));
    const int64_t num = IndexValues(num_t)[0];
    TW_OP_REQUIRES(ctx, num >= 0,
                   errors::InvalidArgument("node ", name(), ": num_segments = ", num, " < 0"));
    const std::vector<int64_t>& data_dims = data.shape().dims();
    const std::vector<int64_t>& id_dims = ids_t.shape().dims();
    TW_OP_REQUIRES(ctx,
                   id_dims.size() <= data_dims.size() &&
                       std::equal(id_dims.begin(), id_dims.end(), data_dims.begin()),
                   errors::InvalidArgument("node ", name(), ": data shape ",
                                           data.shape().DebugString(), " does not start with ",
                                           "segment_ids shape ", ids_t.shape().DebugString()));
    const std::vector<int64_t> ids = IndexValues(ids_t);
    for (size_t i = 0; i < ids.size(); ++i) {
      TW_OP_REQUIRES(ctx, ids[i] < num,
                     errors::InvalidArgument("node ", name(), ": segment_ids",
                                             PositionString(ids_t.shape(), static_cast<int64_t>(i)),
                                             " = ", ids[i], " is not in [0, ", num, ")"));
    }
    std::vector<int64_t> out_dims{num};
    out_dims.insert(out_dims.end(), data_dims.begin() + static_cast<int64_t>(id_dims.size()),
                    data_dims.end());
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t row = num == 0 ? 0 : out->num_elements() / num;
    Dispatch(TypeList<float, double, int32_t, int64_t>{}, data.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto dst = out->flat<T>();
      std::fill(dst.begin(), dst.end(), T(0));
      auto src = data.flat<T>();
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0) continue;
        T* o = dst.data() + ids[i] * row;
        const T* in = src.data() + static_cast<int64_t>(i) * row;
        if constexpr (std::is_floating_point_v<T>) {
          for (int64_t k = 0; k < row; ++k) o[k] += in[k];
        } else {  // integers wrap, as Add does
          for (int64_t k = 0; k < row; ++k) {
            o[k] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(o[k]) +
                                  static_cast<std::make_unsigned_t<T>>(in[k]));
          }
        }
      }
    });
  }
};
TW_REGISTER_KERNEL("UnsortedSegmentSum", "CPU", UnsortedSegmentSumOp);

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

// ---- Unique ----
TW_REGISTER_OP("Unique")
    .Input("x: T")
    .Output("y: T")
    .Output("idx: out_idx")
    .Attr("T: {float, double, int32, int64, uint8, bool, string}")
    .Attr("out_idx: {int32, int64} = int32")
    .Doc(
        "The distinct elements of the vector x in order of first occurrence (y), and for each "
        "element of x its position in y (idx): x[i] == y[idx[i]]. NaNs are all distinct.");

// Fills idx and returns the position in x of each distinct value's first occurrence. The
// table holds positions, not values, so strings are never copied.
template <typename T, typename Index>
std::vector<int64_t> FirstOccurrences(absl::Span<const T> x, absl::Span<Index> idx) {
  auto hash = [x](int64_t i) { return std::hash<T>{}(x[i]); };
  auto equal = [x](int64_t a, int64_t b) { return x[a] == x[b]; };
  std::unordered_map<int64_t, Index, decltype(hash), decltype(equal)> seen(x.size(), hash, equal);
  std::vector<int64_t> firsts;
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    auto [it, inserted] = seen.try_emplace(i, static_cast<Index>(firsts.size()));
    if (inserted) firsts.push_back(i);
    idx[i] = it->second;
  }
  return firsts;
}

class UniqueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    // TensorFlow's messages.
    TW_OP_REQUIRES(ctx, x.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": unique expects a 1D vector."));
    TW_OP_REQUIRES(
        ctx, output_type(1) == DT_INT64 || x.num_elements() <= std::numeric_limits<int32_t>::max(),
        errors::InvalidArgument("node ", name(),
                                ": unique does not support input tensors larger than ",
                                std::numeric_limits<int32_t>::max(), " elements"));
    Tensor* idx = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, x.shape(), &idx));
    using Types = TypeList<float, double, int32_t, int64_t, uint8_t, bool, std::string>;
    const bool known = Dispatch(Types{}, x.dtype(), [&](auto value_tag) {
      using T = typename decltype(value_tag)::type;
      std::vector<int64_t> firsts;
      Dispatch(TypeList<int32_t, int64_t>{}, output_type(1), [&](auto tag) {
        using Index = typename decltype(tag)::type;
        firsts = FirstOccurrences<T, Index>(x.flat<T>(), idx->flat<Index>());
      });
      Tensor* y = nullptr;
      TW_OP_REQUIRES_OK(
          ctx, ctx->allocate_output(0, TensorShape({static_cast<int64_t>(firsts.size())}), &y));
      auto src = x.flat<T>();
      auto dst = y->flat<T>();
      for (size_t j = 0; j < firsts.size(); ++j) dst[j] = src[firsts[j]];
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, x.dtype()));
  }
};
TW_REGISTER_KERNEL("Unique", "CPU", UniqueOp);

// ---- Gradients ----

Status ReshapeGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense =
      ops::Reshape(scope, grad_outputs[0].dense, ops::Shape(scope, op.input(0)));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Reshape", ReshapeGradient);

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

// The output gradient padded back to the input's shape with zeros.
Status SliceGradient(const Scope& scope, const ForwardOp& op,
                     const std::vector<Gradient>& grad_outputs,
                     std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  const Output& begin = op.input(1);
  const Output after = ops::Sub(scope,
                                ops::Sub(scope, ops::Shape(scope, op.input(0), begin.type()),
                                         ops::Shape(scope, g, begin.type())),
                                begin);
  (*grad_inputs)[0].dense = ops::Pad(scope, g, ops::Pack(scope, {begin, after}, 1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Slice", SliceGradient);

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

// Rows of params picked by indices: the gradient touches those rows only, so it stays
// sparse. Indices of any shape are flattened, with the gradient's rows to match.
Status GatherGradient(const Scope& scope, const ForwardOp& op,
                      const std::vector<Gradient>& grad_outputs,
                      std::vector<Gradient>* grad_inputs) {
  const Output dense_shape = ops::Shape(scope, op.input(0), DT_INT64);
  (*grad_inputs)[0].sparse =
      GatherGradientSlices(scope, grad_outputs[0].dense, op.input(1), dense_shape);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Gather", GatherGradient);

Status FillGradient(const Scope& scope, const ForwardOp&, const std::vector<Gradient>& grad_outputs,
                    std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[1].dense = ops::Sum(scope, ops::Reshape(scope, grad_outputs[0].dense, {-1}), 0);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Fill", FillGradient);

// The input's box of the output gradient, at the `before` paddings.
Status PadGradient(const Scope& scope, const ForwardOp& op,
                   const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  const Output& paddings = op.input(1);
  const Output begin = ops::Reshape(scope, ops::Slice(scope, paddings, {0, 0}, {-1, 1}), {-1});
  (*grad_inputs)[0].dense = ops::Slice(scope, grad_outputs[0].dense, begin,
                                       ops::Shape(scope, op.input(0), paddings.type()));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Pad", PadGradient);

// Each row of data went to one segment; rows with negative ids were dropped and are not
// supported here (Gather rejects them).
Status UnsortedSegmentSumGradient(const Scope& scope, const ForwardOp& op,
                                  const std::vector<Gradient>& grad_outputs,
                                  std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Gather(scope, grad_outputs[0].dense, op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("UnsortedSegmentSum", UnsortedSegmentSumGradient);

TW_NO_GRADIENT("ConcatOffset");
// As in TensorFlow, which registers no gradient for it: idx is integer, and y is usually
// taken of integer ids (an optimizer's deduplication of sparse rows).
TW_NO_GRADIENT("Unique");

}  // namespace

IndexedSlices GatherGradientSlices(const Scope& scope, const Output& grad, const Output& indices,
                                   const Output& dense_shape) {
  // Shape [-1] + dense_shape[1:]: one row of values per index.
  const Output row_shape = ops::Slice(scope, dense_shape, {1}, {-1});
  const Output values_shape = ops::Concat(scope, {Tensor::FromVector<int64_t>({-1}), row_shape}, 0);
  return IndexedSlices{ops::Reshape(scope, indices, {-1}), ops::Reshape(scope, grad, values_shape),
                       dense_shape};
}

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

Output Pad(const Scope& scope, Input input, Input paddings) {
  return scope.AddNodeOutput("Pad", {{input}, {paddings}});
}

Output UnsortedSegmentSum(const Scope& scope, Input data, Input segment_ids, Input num_segments) {
  return scope.AddNodeOutput("UnsortedSegmentSum", {{data}, {segment_ids}, {num_segments}});
}

namespace {
std::vector<Output> AllOutputs(const Operation& op) {
  std::vector<Output> outputs;
  for (int i = 0; i < op.num_outputs(); ++i) outputs.emplace_back(op, i);
  return outputs;
}
}  // namespace

std::vector<Output> ConcatOffset(const Scope& scope, Input concat_dim, const InputList& shapes) {
  return AllOutputs(scope.AddNode("ConcatOffset", {{concat_dim}, shapes}));
}

UniqueOutputs Unique(const Scope& scope, Input x, const UniqueOptions& options) {
  const Operation op = scope.AddNode("Unique", {{x}}, {{"out_idx", MakeAttr(options.out_idx)}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

std::vector<Output> Unpack(const Scope& scope, Input value, int num, int axis) {
  return AllOutputs(
      scope.AddNode("Unpack", {{value}}, {{"num", MakeAttr(num)}, {"axis", MakeAttr(axis)}}));
}

}  // namespace ops
}  // namespace tw
