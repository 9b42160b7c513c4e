// Graph-building functions for the array ops that move a tensor's elements into another
// shape: transposes, tiles and broadcasts, added and removed dimensions of 1, splits,
// reversals, sequences (Range, OneHot) and running sums. Each returns the node's output (or
// outputs); errors are recorded in the scope (see scope.h). Type attributes are inferred
// from the inputs; literal inputs such as {1, 0} become int32 Const nodes. Index inputs
// (permutations, multiples, axes, shapes) may be int32 or int64. The kernels' errors, as
// TensorFlow 1.x's, are InvalidArgument naming the node.
#ifndef TENSORWEAVE_OPS_ARRAY_OPS_H_
#define TENSORWEAVE_OPS_ARRAY_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensorweave/scope.h"

namespace tw::ops {

// `x` with its dimensions permuted: output dimension k is input dimension perm[k] (`perm`
// a vector holding each of 0 .. rank-1 once).
Output Transpose(const Scope& scope, Input x, Input perm);
// The permutation that undoes the permutation `x` (a vector): y[x[i]] = i.
Output InvertPermutation(const Scope& scope, Input x);
// `input` repeated multiples[d] times along each dimension d (`multiples` a vector of one
// non-negative entry per dimension).
Output Tile(const Scope& scope, Input input, Input multiples);
// `input` broadcast (NumPy rules) to `shape` (a vector), which must be at least its rank.
Output BroadcastTo(const Scope& scope, Input input, Input shape);
// `input` with a dimension of 1 inserted at `axis` (a scalar in [-rank-1, rank]; negative
// counts from the end of the output's dimensions).
Output ExpandDims(const Scope& scope, Input input, Input axis);
// `input` without the dimensions of size 1 listed in `axis` (negative counts from the end),
// or without every dimension of size 1 when `axis` is empty.
Output Squeeze(const Scope& scope, Input input, const std::vector<int64_t>& axis = {});

// start, start + delta, ... up to but not including limit (scalars of one type: int32,
// int64, float or double); delta must not be 0 and must point from start towards limit.
Output Range(const Scope& scope, Input start, Input limit, Input delta);

// `value` cut along dimension `axis` (an int32 scalar; negative counts from the end) into
// `num_split` pieces of equal size. Empty when the node failed to build.
std::vector<Output> Split(const Scope& scope, Input axis, Input value, int num_split);
// `value` cut along `axis` into pieces of the sizes `size_splits` (a vector of num_split
// entries, one of which may be -1 for the rest). Empty when the node failed to build.
std::vector<Output> SplitV(const Scope& scope, Input value, Input size_splits, Input axis,
                           int num_split);

// A new dimension of size `depth` (an int32 scalar) at `axis` (-1: last) holding `on_value`
// where it equals `indices` (uint8, int32 or int64) and `off_value` (a scalar of on_value's
// type) elsewhere; indices outside [0, depth) give only off_value.
Output OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value,
              int axis = -1);
// `tensor` with the dimensions listed in `axis` (a vector; negative counts from the end)
// walked backwards.
Output ReverseV2(const Scope& scope, Input tensor, Input axis);
struct CumsumOptions {
  bool exclusive = false;  // each sum leaves out its own element (the first sum is 0)
  bool reverse = false;    // sum from the end of the dimension
};
// Running sums of `x` (float, double, int32, int64) along `axis` (a scalar).
Output Cumsum(const Scope& scope, Input x, Input axis, const CumsumOptions& options = {});

// `input` surrounded by mirror images of its edges: `paddings` [rank, 2] holds the elements
// added before and after each dimension; `mode` "REFLECT" (the edge element is not repeated:
// at most dim-1 on a side) or "SYMMETRIC" (it is: at most dim).
Output MirrorPad(const Scope& scope, Input input, Input paddings, const std::string& mode);
// MirrorPad's gradient: `input` shaped like MirrorPad's output folded back onto its input's
// shape, each mirrored element added to the one it copied.
Output MirrorPadGrad(const Scope& scope, Input input, Input paddings, const std::string& mode);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_ARRAY_OPS_H_
