// StridedSlice's index arithmetic (TF's ValidateStridedSliceOp): from the sparse spec a
// Python subscript makes (begin, end and strides per subscript, and the begin, end,
// ellipsis, new-axis and shrink-axis masks) to a dense range per input dimension and the
// output's shape. Shared by the op's shape function (dimensions may be unknown) and its
// kernels (every dimension known), so both accept and refuse the same subscripts.
#ifndef TENSORWEAVE_SRC_GRAPH_STRIDED_SLICE_SPEC_H_
#define TENSORWEAVE_SRC_GRAPH_STRIDED_SLICE_SPEC_H_

#include <cstdint>
#include <vector>

#include "tensorweave/status.h"

namespace tw {

struct StridedSliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;
};

// Per input dimension: the first index, the step and how many elements are taken
// (processing_shape); the output's shape, which adds new axes and drops shrunk ones. With
// an unknown input dimension (-1) the range is unknown and so is its output dimension,
// unless it is shrunk (one element).
struct StridedSliceSpec {
  std::vector<int64_t> begin, strides, processing_shape;
  std::vector<int64_t> final_shape;
};

// InvalidArgument with TF's messages: vectors of different lengths, several ellipses, a
// zero stride, a shrunk index out of range or with a stride other than 1, more subscripts
// than dimensions.
StatusOr<StridedSliceSpec> ComputeStridedSlice(const std::vector<int64_t>& input_shape,
                                               const std::vector<int64_t>& begin,
                                               const std::vector<int64_t>& end,
                                               const std::vector<int64_t>& strides,
                                               const StridedSliceMasks& masks);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_GRAPH_STRIDED_SLICE_SPEC_H_
