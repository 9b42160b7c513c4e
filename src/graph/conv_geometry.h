// The window arithmetic of 2-D convolution and pooling over NHWC images, as TensorFlow
// computes it (GetWindowedOutputSizeVerbose): from the node's attributes (strides,
// dilations, padding "SAME", "VALID" or "EXPLICIT", explicit_paddings, ksize, data_format)
// to each spatial dimension's output size and padding. Shared by the ops' shape functions
// (dimensions may be unknown) and their kernels, so both accept and refuse the same nodes.
//
// Data formats: TF's CPU kernels for Conv2D and the pools take NHWC only; NCHW is refused
// with TF's message ("Generic conv implementation only supports NHWC tensor format for now.").
#ifndef TENSORWEAVE_SRC_GRAPH_CONV_GEOMETRY_H_
#define TENSORWEAVE_SRC_GRAPH_CONV_GEOMETRY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "src/framework/attr_value.h"
#include "tensorweave/status.h"

namespace tw {

enum class Padding { kSame, kValid, kExplicit };

// A window op's attributes, checked. Index 0 is the height, 1 the width.
struct WindowAttrs {
  std::array<int64_t, 2> window = {1, 1};  // pools: ksize; convolutions: from the filter
  std::array<int64_t, 2> stride = {1, 1};
  std::array<int64_t, 2> dilation = {1, 1};
  Padding padding = Padding::kValid;
  std::array<int64_t, 2> pad_before = {0, 0};  // EXPLICIT only
  std::array<int64_t, 2> pad_after = {0, 0};
};

// Reads strides, dilations (when present), padding, explicit_paddings (when present),
// data_format (when present) and, for pools, ksize. InvalidArgument with TF's messages:
// strides or ksize not of length 4, a stride or window across the batch or depth, a
// non-positive stride, dilation or window, an unknown padding, explicit_paddings not of
// length 8 or padding the batch or depth; NHWC only.
StatusOr<WindowAttrs> ReadWindowAttrs(const proto::NodeDef& node, bool is_pool);

// One spatial dimension: the output size and the padding before it (the rest of the
// padding is after). `in` may be -1 (unknown): then `out` is -1 too.
struct SpatialExtent {
  int64_t out = -1;
  int64_t pad_before = 0;
};
// InvalidArgument "Computed output size would be negative: ..." (TF's words) when the
// (dilated) window does not fit the padded input.
StatusOr<SpatialExtent> WindowedOutputSize(int64_t in, int64_t window, int64_t stride,
                                           int64_t dilation, Padding padding, int64_t pad_before,
                                           int64_t pad_after);

// The output sizes and paddings of both spatial dimensions of an NHWC `input_shape`
// (entries may be -1) under `attrs`.
StatusOr<std::array<SpatialExtent, 2>> WindowedOutputSizes(const std::vector<int64_t>& input_shape,
                                                           const WindowAttrs& attrs);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_GRAPH_CONV_GEOMETRY_H_
