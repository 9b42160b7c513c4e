// Reading checkpoints: the index once, then any row range of any saved tensor, assembled
// from whichever saved slices cover it (so a variable partitioned over 2 tasks when saved
// can be restored onto 3), every slice's checksum verified before use.
#ifndef TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_READER_H_
#define TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_READER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/checkpoint/checkpoint_file.h"
#include "tensorweave/protobuf/checkpoint.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::checkpoint {

// Not thread-safe (it caches open data files); one per restoring kernel invocation.
class CheckpointReader {
 public:
  // NotFound naming the prefix when it has no index (the checkpoint does not exist or its
  // save never finished); DataLoss from a corrupt index.
  static StatusOr<std::unique_ptr<CheckpointReader>> Open(const std::string& prefix);

  struct TensorInfo {
    DataType dtype = DT_INVALID;
    TensorShape full_shape;
  };
  // NotFound naming `name` and the checkpoint when nothing of that name was saved.
  StatusOr<TensorInfo> Find(const std::string& name) const;
  // Every saved name, sorted.
  std::vector<std::string> Names() const;

  // Rows [row_offset, row_offset + row_count) of `name` (all of a scalar: 0, 1), with the
  // saved dtype. NotFound as Find; InvalidArgument for rows outside the saved shape;
  // DataLoss naming the tensor and the data file for a checksum mismatch, a truncated or
  // missing-bytes data file, or undecodable bytes.
  StatusOr<Tensor> ReadRows(const std::string& name, int64_t row_offset, int64_t row_count);

  const std::string& prefix() const { return prefix_; }

 private:
  CheckpointReader(std::string prefix, proto::CheckpointIndex index);
  StatusOr<RandomAccessFile*> DataFile(int shard);

  const std::string prefix_;
  const proto::CheckpointIndex index_;
  // Entries of each name, sorted by row_offset (validated: they tile the rows).
  std::map<std::string, std::vector<const proto::CheckpointEntry*>> by_name_;
  std::map<int, std::unique_ptr<RandomAccessFile>> files_;
};

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_READER_H_
