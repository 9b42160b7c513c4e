// Writing checkpoints: one ShardWriter per shard (each on the task that holds the shard's
// variables, in parallel), then MergeShardIndexes on one task makes the checkpoint valid.
#ifndef TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_WRITER_H_
#define TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_WRITER_H_

#include <memory>
#include <string>

#include "src/checkpoint/checkpoint_file.h"
#include "tensorweave/protobuf/checkpoint.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::checkpoint {

// Writes shard `shard` of `num_shards` of the checkpoint `prefix`: the data file and the
// shard's index, each under a temporary name until Finish() renames them into place. A
// writer destroyed before Finish() removes its temporary files. With `tensorflow_format`
// the data file holds TensorFlow's bytes (tf_bundle.h) and the shard's index says so, so
// that MergeShardIndexes writes TensorFlow's index.
// Not thread-safe; owned by the kernel that saves.
class ShardWriter {
 public:
  // InvalidArgument for a bad shard number; file errors naming the file.
  static StatusOr<std::unique_ptr<ShardWriter>> Create(const std::string& prefix, int shard,
                                                       int num_shards,
                                                       bool tensorflow_format = false);
  ~ShardWriter();

  // Appends the slice of tensor `name` (of shape `full_shape`) made of rows
  // [row_offset, row_offset + value's rows) -- all of it when value's shape is full_shape.
  // InvalidArgument naming `name` when the dtype cannot be saved, the shapes disagree or
  // the rows fall outside full_shape.
  Status Add(const std::string& name, const TensorShape& full_shape, int64_t row_offset,
             const Tensor& value);

  // Syncs and renames the data file, then writes the shard index the same way.
  Status Finish();

 private:
  ShardWriter(std::string prefix, int shard, int num_shards, bool tensorflow_format,
              std::unique_ptr<WritableFile> data)
      : prefix_(std::move(prefix)),
        shard_(shard),
        num_shards_(num_shards),
        tensorflow_format_(tensorflow_format),
        data_(std::move(data)) {}

  const std::string prefix_;
  const int shard_;
  const int num_shards_;
  const bool tensorflow_format_;
  std::unique_ptr<WritableFile> data_;  // the temporary data file
  proto::CheckpointIndex index_;
  bool finished_ = false;
};

// Reads the `num_shards` shard indexes of `prefix`, checks them (and each data file's
// size), writes `prefix`.index atomically (TensorFlow's index when the shards were written
// in TensorFlow's format, which all must agree on) and removes the shard indexes. NotFound naming a
// missing shard index; DataLoss for a corrupt one or a data file of the wrong size;
// InvalidArgument when the slices of a name overlap, leave gaps or disagree on dtype or
// shape (the savers were configured inconsistently).
Status MergeShardIndexes(const std::string& prefix, int num_shards);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_WRITER_H_
