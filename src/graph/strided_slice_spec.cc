// StridedSlice's sparse-to-dense spec, after TF's strided_slice_op.cc.
#include "src/graph/strided_slice_spec.h"

#include <algorithm>

namespace tw {
namespace {

constexpr int kNewAxis = -1;
constexpr int kShrinkAxis = -2;

bool Bit(int64_t mask, int i) { return i < 63 && ((mask >> i) & 1) != 0; }

// One dense dimension: where to start, the step, and whether begin/end come from masks.
struct DenseDim {
  int64_t begin = 0, end = 0, stride = 1;
  bool begin_masked = false, end_masked = false, shrink = false;
};

}  // namespace

StatusOr<StridedSliceSpec> ComputeStridedSlice(const std::vector<int64_t>& input_shape,
                                               const std::vector<int64_t>& begin,
                                               const std::vector<int64_t>& end,
                                               const std::vector<int64_t>& strides,
                                               const StridedSliceMasks& masks) {
  const int n = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    return errors::InvalidArgument(
        "Expected begin, end, and strides to be 1D equal size tensors, but got shapes [", n, "], [",
        end.size(), "], and [", strides.size(), "] instead.");
  }
  if (n > 32) return errors::InvalidArgument("StridedSlice: more than 32 subscripts");
  int64_t ellipsis = masks.ellipsis;
  if ((ellipsis & (ellipsis - 1)) != 0) {
    return errors::InvalidArgument("Multiple ellipses in slice spec not allowed");
  }
  int sparse_dims = n;
  if (ellipsis == 0) {  // an implicit ellipsis after the last subscript
    ellipsis = int64_t{1} << n;
    sparse_dims = n + 1;
  }
  int ellipsis_at = 0;
  while (!Bit(ellipsis, ellipsis_at)) ++ellipsis_at;
  int new_axes_after_ellipsis = 0;
  for (int i = ellipsis_at + 1; i < n; ++i) new_axes_after_ellipsis += Bit(masks.new_axis, i);

  const int rank = static_cast<int>(input_shape.size());
  std::vector<DenseDim> dense(static_cast<size_t>(rank));
  std::vector<int> gather;  // per output dimension: a dense dimension, kNewAxis or kShrinkAxis
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if (Bit(ellipsis, i)) {
      const int next = std::min(rank - (sparse_dims - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) {
        dense[full].begin_masked = dense[full].end_masked = true;
        gather.push_back(full);
      }
    } else if (Bit(masks.new_axis, i)) {
      gather.push_back(kNewAxis);
    } else {
      if (full >= rank) {
        return errors::InvalidArgument("Index out of range using input dim ", full,
                                       "; input has only ", rank, " dims");
      }
      DenseDim& d = dense[full];
      d.begin = begin[i];
      d.end = end[i];
      d.stride = strides[i];
      d.begin_masked = Bit(masks.begin, i);
      d.end_masked = Bit(masks.end, i);
      d.shrink = Bit(masks.shrink_axis, i);
      gather.push_back(d.shrink ? kShrinkAxis : full);
      ++full;
    }
  }

  StridedSliceSpec spec;
  for (int j = 0; j < rank; ++j) {
    const DenseDim& d = dense[j];
    const int64_t size = input_shape[j];
    if (d.stride == 0) return errors::InvalidArgument("strides[", j, "] must be non-zero");
    if (d.shrink) {
      if (d.stride <= 0) {
        return errors::InvalidArgument("only stride 1 allowed on non-range indexing.");
      }
      int64_t x = d.begin;
      if (size >= 0) {
        x = x < 0 ? x + size : x;
        if (x < 0 || x >= size) {
          return errors::InvalidArgument("slice index ", d.begin, " of dimension ", j,
                                         " out of bounds.");
        }
      }
      spec.begin.push_back(x);
      spec.strides.push_back(1);
      spec.processing_shape.push_back(1);
      continue;
    }
    spec.strides.push_back(d.stride);
    if (size < 0) {
      spec.begin.push_back(0);
      spec.processing_shape.push_back(-1);
      continue;
    }
    const bool forward = d.stride > 0;
    const int64_t lo = forward ? 0 : -1, hi = forward ? size : size - 1;
    auto canonical = [&](int64_t x, bool masked, bool is_begin) {
      if (masked && is_begin) return forward ? int64_t{0} : size - 1;
      if (masked) return forward ? size : int64_t{-1};
      const int64_t shifted = x < 0 ? x + size : x;
      return std::clamp(shifted, lo, hi);
    };
    const int64_t b = canonical(d.begin, d.begin_masked, true);
    const int64_t e = canonical(d.end, d.end_masked, false);
    int64_t count = 0;
    if (forward && e > b) count = (e - b + d.stride - 1) / d.stride;
    if (!forward && b > e) count = (b - e - d.stride - 1) / -d.stride;
    spec.begin.push_back(b);
    spec.processing_shape.push_back(count);
  }
  for (int g : gather) {
    if (g == kNewAxis) spec.final_shape.push_back(1);
    if (g >= 0) spec.final_shape.push_back(spec.processing_shape[g]);
  }
  return spec;
}

}  // namespace tw
