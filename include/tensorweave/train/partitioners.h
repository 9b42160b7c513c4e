// TensorFlow 1.x's variable partitioners: into how many parts along an axis a variable is
// split (ModelVariables::AddPartitioned then makes the parts). Each returns TF's partition
// list, one entry per dimension, 1 everywhere but the split axis. Python's
// tf.fixed_size_partitioner, min_max_variable_partitioner and
// variable_axis_size_partitioner wrap these.
//
// Parts are made along axis 0 only: another axis is Unimplemented. A shape that is not
// fully defined, or an axis outside it, is InvalidArgument naming the shape. A string
// element counts as `bytes_per_string_element` bytes, as in TF.
#ifndef TENSORWEAVE_TRAIN_PARTITIONERS_H_
#define TENSORWEAVE_TRAIN_PARTITIONERS_H_

#include <cstdint>
#include <vector>

#include "tensorweave/status.h"
#include "tensorweave/tensor_shape.h"
#include "tensorweave/types.h"

namespace tw::train {

// `num_shards` parts (at most the axis' size). InvalidArgument when num_shards < 1.
StatusOr<std::vector<int64_t>> FixedSizePartitions(const TensorShape& shape, int64_t num_shards,
                                                   int axis = 0);

// As many parts as keep each at least `min_slice_size` bytes, at most `max_partitions` and
// at most the axis' size, and at least one. InvalidArgument when min_slice_size < 1.
StatusOr<std::vector<int64_t>> MinMaxVariablePartitions(const TensorShape& shape, DataType dtype,
                                                        int64_t max_partitions,
                                                        int64_t min_slice_size, int axis = 0,
                                                        int64_t bytes_per_string_element = 16);

// As few parts as keep each at most `max_shard_bytes` (a slice along the axis is never
// split), at most `max_shards` when it is not 0. InvalidArgument (TF's message) when
// max_shard_bytes or bytes_per_string_element is < 1, or max_shards < 0.
StatusOr<std::vector<int64_t>> VariableAxisSizePartitions(const TensorShape& shape, DataType dtype,
                                                          int64_t max_shard_bytes, int axis = 0,
                                                          int64_t bytes_per_string_element = 16,
                                                          int64_t max_shards = 0);

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_PARTITIONERS_H_
