// Graph-building functions for the basic ops: constants, placeholders, identity, shapes,
// types, and the array ops that rearrange elements. Each returns the node's output (or
// Operation for ops without outputs); errors are recorded in the scope (see scope.h).
// Type attributes are inferred from the inputs; literal inputs such as {2, 3} become int32
// Const nodes. Index inputs (shapes, axes, begin/size, indices) may be int32 or int64.
#ifndef TENSORWEAVE_OPS_BASIC_OPS_H_
#define TENSORWEAVE_OPS_BASIC_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

// A constant tensor.
Output Const(const Scope& scope, const Tensor& value);
// A value fed at run time; `shape` (if given) is checked against the fed tensor.
// -1 dimensions are unknown; leave `shape` empty for a scalar-or-anything placeholder.
struct PlaceholderOptions {
  std::optional<std::vector<int64_t>> shape;  // nullopt: any shape
};
Output Placeholder(const Scope& scope, DataType dtype, const PlaceholderOptions& options = {});
// `default_value`, unless a value is fed; a fed value must have `shape` (-1 dimensions
// unknown), which is also the output's static shape (TF's tf.placeholder_with_default).
Output PlaceholderWithDefault(const Scope& scope, Input default_value,
                              const std::vector<int64_t>& shape);
Output Identity(const Scope& scope, Input input);
// `input`, through which gradients do not flow: a path to it ends there.
Output StopGradient(const Scope& scope, Input input);
// Does nothing; a target to hang control dependencies on.
Operation NoOp(const Scope& scope);

// `tensor` with the dimensions in `shape` (a vector); one dimension may be -1, inferred
// from the element count.
Output Reshape(const Scope& scope, Input tensor, Input shape);
// The dimensions of `input` as a vector of `out_type` (DT_INT32 or DT_INT64).
Output Shape(const Scope& scope, Input input, DataType out_type = DT_INT32);
// A tensor of shape `dims` (a vector) whose every element is the scalar `value`.
Output Fill(const Scope& scope, Input dims, Input value);
// A tensor shaped and typed like `x` (numeric or bool) filled with 0 / false.
Output ZerosLike(const Scope& scope, Input x);
// A tensor shaped and typed like `x` (numeric or bool) filled with 1 / true.
Output OnesLike(const Scope& scope, Input x);
// `x` converted to `dst`; numeric and bool types (see the Cast op for the rules).
Output Cast(const Scope& scope, Input x, DataType dst);
// `values` joined along `axis` (a scalar; negative counts from the end).
Output Concat(const Scope& scope, const InputList& values, Input axis);
// The part of `input` from `begin` with extents `size` (vectors, one entry per dimension);
// a size of -1 takes the rest of the dimension.
Output Slice(const Scope& scope, Input input, Input begin, Input size);
// TF's subscript masks for StridedSlice, one bit per entry of begin/end/strides: a begin
// or end bit takes the whole range that way, an ellipsis bit stands for every dimension not
// named, a new-axis bit inserts a dimension of 1, a shrink bit takes the one index `begin`
// and drops the dimension.
struct StridedSliceOptions {
  int64_t begin_mask = 0;
  int64_t end_mask = 0;
  int64_t ellipsis_mask = 0;
  int64_t new_axis_mask = 0;
  int64_t shrink_axis_mask = 0;
};
// input[begin:end:strides] (vectors, int32 or int64) as a Python subscript takes it, on a
// tensor of any rank; negative indices count from the end, negative strides go backwards.
Output StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides,
                    const StridedSliceOptions& options = {});
// Zeros of `shape` holding `dy` where StridedSlice with the same arguments took its
// elements: StridedSlice's gradient.
Output StridedSliceGrad(const Scope& scope, Input shape, Input begin, Input end, Input strides,
                        Input dy, const StridedSliceOptions& options = {});
// `values` (all of one shape) stacked along a new dimension `axis` (negative counts from
// the end of the output's dimensions).
Output Pack(const Scope& scope, const InputList& values, int axis = 0);
// Rows of `params` picked by `indices`: shape indices.shape + params.shape[1:].
Output Gather(const Scope& scope, Input params, Input indices);
// `input` surrounded by zeros: `paddings` [rank, 2] holds the elements added before and
// after each dimension (numeric and bool types).
Output Pad(const Scope& scope, Input input, Input paddings);
// output[k] = the sum of the rows data[i] with segment_ids[i] == k, zero for none; output
// shape [num_segments] + data.shape[segment_ids.rank:]. Negative ids drop their rows.
Output UnsortedSegmentSum(const Scope& scope, Input data, Input segment_ids, Input num_segments);
// The `num` tensors of `value` along dimension `axis`, each without that dimension (the
// inverse of Pack). Empty when the node failed to build.
std::vector<Output> Unpack(const Scope& scope, Input value, int num, int axis = 0);
// The distinct elements of the vector `x` (numeric, bool or string) in order of first
// occurrence (y), and for each element of x its position in y (idx, shaped like x):
// x[i] == y[idx[i]], as TensorFlow's tf.unique. A non-vector x fails the step with
// InvalidArgument "unique expects a 1D vector." (at construction when its shape is known
// not to be a vector). Both outputs are invalid when the node failed to build.
struct UniqueOptions {
  DataType out_idx = DT_INT32;  // the type of idx: DT_INT32 or DT_INT64
};
struct UniqueOutputs {
  Output y;
  Output idx;
};
UniqueOutputs Unique(const Scope& scope, Input x, const UniqueOptions& options = {});
// For tensors of the given `shapes` (vectors) joined by Concat along `concat_dim`, where
// each one starts: a vector per shape, 0 but along concat_dim. Empty when the node failed.
std::vector<Output> ConcatOffset(const Scope& scope, Input concat_dim, const InputList& shapes);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_BASIC_OPS_H_
