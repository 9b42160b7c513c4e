#include "tensorweave/train/partitioners.h"

#include <algorithm>
#include <cmath>

namespace tw::train {
namespace {

// TF's partition list: `parts` at `axis` (0 only), 1 elsewhere.
StatusOr<std::vector<int64_t>> PartsAlong(const TensorShape& shape, int axis, int64_t parts) {
  std::vector<int64_t> partitions(static_cast<size_t>(shape.rank()), 1);
  partitions[static_cast<size_t>(axis)] = parts;
  return partitions;
}

Status CheckShapeAndAxis(const TensorShape& shape, int axis) {
  if (!shape.IsFullyDefined()) {
    return errors::InvalidArgument("Cannot partition a variable of shape ", shape.DebugString(),
                                   ": its shape must be fully defined");
  }
  if (axis < 0 || axis >= shape.rank()) {
    return errors::InvalidArgument("Can not partition variable along axis ", axis,
                                   " when shape is only ", shape.DebugString());
  }
  if (axis != 0) {
    return errors::Unimplemented("partitioners: only axis=0 is supported, got axis=", axis);
  }
  return OkStatus();
}

int64_t ElementBytes(DataType dtype, int64_t bytes_per_string_element) {
  return dtype == DT_STRING ? bytes_per_string_element : static_cast<int64_t>(DataTypeSize(dtype));
}

}  // namespace

StatusOr<std::vector<int64_t>> FixedSizePartitions(const TensorShape& shape, int64_t num_shards,
                                                   int axis) {
  if (num_shards < 1) {
    return errors::InvalidArgument("num_shards must be positive, got ", num_shards);
  }
  TW_RETURN_IF_ERROR(CheckShapeAndAxis(shape, axis));
  return PartsAlong(shape, axis, std::max<int64_t>(1, std::min(num_shards, shape.dim(axis))));
}

StatusOr<std::vector<int64_t>> MinMaxVariablePartitions(const TensorShape& shape, DataType dtype,
                                                        int64_t max_partitions,
                                                        int64_t min_slice_size, int axis,
                                                        int64_t bytes_per_string_element) {
  if (min_slice_size < 1) {
    return errors::InvalidArgument("min_slice_size must be positive, got ", min_slice_size);
  }
  TW_RETURN_IF_ERROR(CheckShapeAndAxis(shape, axis));
  const double total_bytes = static_cast<double>(shape.num_elements()) *
                             static_cast<double>(ElementBytes(dtype, bytes_per_string_element));
  const int64_t by_size =
      static_cast<int64_t>(std::min(std::ceil(total_bytes / static_cast<double>(min_slice_size)),
                                    static_cast<double>(shape.dim(axis))));
  return PartsAlong(shape, axis,
                    std::max<int64_t>(1, std::min({shape.dim(axis), max_partitions, by_size})));
}

StatusOr<std::vector<int64_t>> VariableAxisSizePartitions(const TensorShape& shape, DataType dtype,
                                                          int64_t max_shard_bytes, int axis,
                                                          int64_t bytes_per_string_element,
                                                          int64_t max_shards) {
  if (max_shard_bytes < 1 || bytes_per_string_element < 1) {
    return errors::InvalidArgument(
        "Both max_shard_bytes and bytes_per_string_element must be positive. Currently, "
        "max_shard_bytes is ",
        max_shard_bytes, " and bytes_per_string_element is ", bytes_per_string_element);
  }
  if (max_shards < 0) return errors::InvalidArgument("max_shards must be positive.");
  TW_RETURN_IF_ERROR(CheckShapeAndAxis(shape, axis));
  const int64_t rows = shape.dim(axis);
  if (rows == 0) return PartsAlong(shape, axis, 1);
  // As TF: a slice is everything at one index of the axis; a shard holds whole slices.
  const double slice_bytes = static_cast<double>(shape.num_elements()) / static_cast<double>(rows) *
                             static_cast<double>(ElementBytes(dtype, bytes_per_string_element));
  // Capped at `rows` before the conversion, so an empty slice or a huge max_shard_bytes
  // never converts an out-of-range double.
  const double fit = slice_bytes > 0
                         ? std::floor(static_cast<double>(max_shard_bytes) / slice_bytes)
                         : static_cast<double>(rows);
  const int64_t slices_per_shard =
      std::max<int64_t>(1, static_cast<int64_t>(std::min(fit, static_cast<double>(rows))));
  int64_t shards = (rows + slices_per_shard - 1) / slices_per_shard;
  if (max_shards > 0) shards = std::min(shards, max_shards);
  return PartsAlong(shape, axis, shards);
}

}  // namespace tw::train
