// Graph-building functions for the indexing, selection and checking ops: GatherNd and
// ScatterNd (src/ops/gather_nd_ops.cc), TopKV2 (src/ops/topk_ops.cc), SegmentSum
// (src/ops/segment_ops.cc), CheckNumerics, Assert and Print (src/ops/check_ops.cc). Each
// follows TensorFlow 1.x's op of the same name; errors are recorded in the scope (scope.h).
#ifndef TENSORWEAVE_OPS_INDEX_OPS_H_
#define TENSORWEAVE_OPS_INDEX_OPS_H_

#include <string>
#include <vector>

#include "tensorweave/scope.h"

namespace tw::ops {

// Slices of `params` picked by the index tuples in the last dimension of `indices` (int32 or
// int64): shape indices.shape[:-1] + params.shape[indices.shape[-1]:].
Output GatherNd(const Scope& scope, Input params, Input indices);
// Zeros of `shape` with the slices of `updates` added at the index tuples of `indices`
// (duplicates add up): the inverse of GatherNd. `shape` has the type of `indices`.
Output ScatterNd(const Scope& scope, Input indices, Input updates, Input shape);

// The `k` largest entries of each row (last dimension) of `input` and their int32 positions,
// largest first; equal values keep their order (the lower index first).
struct TopKOptions {
  bool sorted = true;  // kept for TF graphs; the output is always sorted
};
struct TopKOutputs {
  Output values;
  Output indices;
};
TopKOutputs TopK(const Scope& scope, Input input, Input k, const TopKOptions& options = {});

// output[j] = the sum of the rows data[i] with segment_ids[i] == j; `segment_ids` is a
// sorted vector with one id per row of data; output has max(id) + 1 rows.
Output SegmentSum(const Scope& scope, Input data, Input segment_ids);

// `tensor` (float or double) unchanged, or InvalidArgument "<message> : Tensor had NaN
// values" ("Inf", "Inf and NaN") when it holds any.
Output CheckNumerics(const Scope& scope, Input tensor, const std::string& message);
// Nothing when `condition` (a bool scalar) is true; else InvalidArgument "assertion failed:
// [d0] [d1] ..." with at most `summarize` elements of each tensor of `data`.
Operation Assert(const Scope& scope, Input condition, const InputList& data, int summarize = 3);
// `input`, passed through, after logging `message` and `data` (as Assert formats them) to
// stderr; only the first `first_n` times when first_n >= 0.
struct PrintOptions {
  std::string message;
  int first_n = -1;
  int summarize = 3;
};
Output Print(const Scope& scope, Input input, const InputList& data,
             const PrintOptions& options = {});

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_INDEX_OPS_H_
