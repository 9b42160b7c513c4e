#include "src/graph/conv_geometry.h"

#include <algorithm>

namespace tw {
namespace {

// Reads an optional list(int) attribute: `fallback` when the node does not have it.
Status OptionalInts(const proto::NodeDef& node, const char* name, std::vector<int64_t> fallback,
                    std::vector<int64_t>* out) {
  if (node.attr().find(name) == node.attr().end()) {
    *out = std::move(fallback);
    return OkStatus();
  }
  return GetNodeAttr(node, name, out);
}

Status FourEntriesOverHeightAndWidth(const std::vector<int64_t>& v, const char* field,
                                     const char* what) {
  if (v.size() != 4) {
    return errors::InvalidArgument("Sliding window ", field, " field must specify 4 dimensions");
  }
  if (v[0] != 1 || v[3] != 1) {
    return errors::InvalidArgument("Current implementation does not yet support ", what,
                                   " in the batch and depth dimensions");
  }
  return OkStatus();
}

}  // namespace

StatusOr<WindowAttrs> ReadWindowAttrs(const proto::NodeDef& node, bool is_pool) {
  WindowAttrs attrs;
  std::string data_format = "NHWC";
  if (node.attr().find("data_format") != node.attr().end()) {
    TW_RETURN_IF_ERROR(GetNodeAttr(node, "data_format", &data_format));
  }
  if (data_format != "NHWC") {
    if (data_format != "NCHW") {
      return errors::InvalidArgument("Invalid data format: ", data_format);
    }
    return errors::InvalidArgument(
        is_pool ? "Default pooling only supports NHWC on device type CPU"
                : "Generic conv implementation only supports NHWC tensor format for now.");
  }
  std::vector<int64_t> strides;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, "strides", &strides));
  TW_RETURN_IF_ERROR(FourEntriesOverHeightAndWidth(strides, "strides", "strides"));
  // An empty list (the ops' default: their spec language has no non-empty list defaults)
  // is TF's default, no dilation.
  std::vector<int64_t> dilations;
  TW_RETURN_IF_ERROR(OptionalInts(node, "dilations", {}, &dilations));
  if (dilations.empty()) dilations = {1, 1, 1, 1};
  TW_RETURN_IF_ERROR(FourEntriesOverHeightAndWidth(dilations, "dilations", "dilations"));
  if (is_pool) {
    std::vector<int64_t> ksize;
    TW_RETURN_IF_ERROR(GetNodeAttr(node, "ksize", &ksize));
    if (ksize.size() != 4) {
      return errors::InvalidArgument("Sliding window ksize field must specify 4 dimensions");
    }
    if (ksize[0] != 1 || ksize[3] != 1) {
      return errors::Unimplemented("Pooling is not yet supported on the batch or depth ",
                                   "dimension");
    }
    attrs.window = {ksize[1], ksize[2]};
  }
  for (int i = 0; i < 2; ++i) {
    attrs.stride[i] = strides[i + 1];
    attrs.dilation[i] = dilations[i + 1];
    if (attrs.stride[i] < 1) {
      return errors::InvalidArgument("Stride must be > 0, but got ", attrs.stride[i]);
    }
    if (attrs.dilation[i] < 1) {
      return errors::InvalidArgument("Dilated rates should be larger than 0");
    }
    if (attrs.window[i] < 1) {
      return errors::InvalidArgument("Sliding window ksize must be positive, got ",
                                     attrs.window[i]);
    }
  }
  std::string padding;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, "padding", &padding));
  if (padding == "SAME") {
    attrs.padding = Padding::kSame;
  } else if (padding == "VALID") {
    attrs.padding = Padding::kValid;
  } else if (padding == "EXPLICIT" && !is_pool) {
    attrs.padding = Padding::kExplicit;
    std::vector<int64_t> explicit_paddings;
    TW_RETURN_IF_ERROR(OptionalInts(node, "explicit_paddings", {}, &explicit_paddings));
    if (explicit_paddings.size() != 8) {
      return errors::InvalidArgument("explicit_paddings attribute must contain 8 values, but ",
                                     "got: ", explicit_paddings.size());
    }
    if (explicit_paddings[0] != 0 || explicit_paddings[1] != 0 || explicit_paddings[6] != 0 ||
        explicit_paddings[7] != 0) {
      return errors::InvalidArgument(
          "Nonzero explicit padding in the batch or depth dimensions is not supported");
    }
    for (int i = 0; i < 2; ++i) {
      attrs.pad_before[i] = explicit_paddings[2 + 2 * i];
      attrs.pad_after[i] = explicit_paddings[3 + 2 * i];
      if (attrs.pad_before[i] < 0 || attrs.pad_after[i] < 0) {
        return errors::InvalidArgument("All elements of explicit_paddings must be nonnegative");
      }
    }
  } else {
    return errors::InvalidArgument("padding must be SAME or VALID", is_pool ? "" : " or EXPLICIT",
                                   ", got \"", padding, "\"");
  }
  return attrs;
}

StatusOr<SpatialExtent> WindowedOutputSize(int64_t in, int64_t window, int64_t stride,
                                           int64_t dilation, Padding padding, int64_t pad_before,
                                           int64_t pad_after) {
  const int64_t effective = (window - 1) * dilation + 1;
  SpatialExtent extent;
  if (in < 0) return extent;
  // TF's integer arithmetic exactly (division truncating toward zero), so that a window a
  // little larger than the input gives an empty output, as in TF, and only a larger one an
  // error.
  switch (padding) {
    case Padding::kValid:
      extent.out = (in - effective + stride) / stride;
      break;
    case Padding::kSame: {
      extent.out = (in + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (extent.out - 1) * stride + effective - in);
      extent.pad_before = needed / 2;
      break;
    }
    case Padding::kExplicit:
      extent.out = (in + pad_before + pad_after - effective + stride) / stride;
      extent.pad_before = pad_before;
      break;
  }
  if (extent.out < 0) {
    return errors::InvalidArgument("Computed output size would be negative: ", extent.out,
                                   " [input_size: ", in, ", effective_filter_size: ", effective,
                                   ", stride: ", stride, "]");
  }
  return extent;
}

StatusOr<std::array<SpatialExtent, 2>> WindowedOutputSizes(const std::vector<int64_t>& input_shape,
                                                           const WindowAttrs& attrs) {
  if (input_shape.size() != 4) {
    return errors::InvalidArgument("input must be 4-dimensional [batch, height, width, ",
                                   "channels], got ", input_shape.size(), " dimensions");
  }
  std::array<SpatialExtent, 2> extents;
  for (int i = 0; i < 2; ++i) {
    TW_ASSIGN_OR_RETURN(
        extents[i],
        WindowedOutputSize(input_shape[1 + i], attrs.window[i], attrs.stride[i], attrs.dilation[i],
                           attrs.padding, attrs.pad_before[i], attrs.pad_after[i]));
  }
  return extents;
}

}  // namespace tw
