// Graph-building functions for checkpoint I/O. The ops take variable handles, so the
// placer runs each one on its variables' device: values go from the variable to the file
// (and back) without crossing the network. tw::Saver (tensorweave/train/saver.h) builds
// these for you; use them directly only for custom checkpointing.
//
// Every op takes the checkpoint prefix as a string input (e.g. "/ckpt/model.ckpt-100") and
// a `directory` attribute: a prefix with "." or ".." segments, or outside the directory
// (also through a symbolic link), fails with InvalidArgument.
#ifndef TENSORWEAVE_OPS_IO_OPS_H_
#define TENSORWEAVE_OPS_IO_OPS_H_

#include <string>
#include <vector>

#include "tensorweave/ops/state_ops.h"
#include "tensorweave/scope.h"

namespace tw::ops {

// What a variable is in a checkpoint: a whole tensor called `name`, or (partitioned) the
// rows [row_offset, row_offset + the variable's dim 0) of a tensor called `name` whose
// shape is `full_shape`.
struct CheckpointSlice {
  std::string name;
  bool partitioned = false;
  std::vector<int64_t> full_shape;  // only when partitioned
  int64_t row_offset = 0;           // only when partitioned
};

// Writes shard `shard` of `num_shards` of the checkpoint: the data file
// "<prefix>.data-<shard>-of-<num_shards>" and that shard's index, each under a temporary
// name until complete; with `tensorflow_format` the bytes TensorFlow's checkpoints hold, so
// that MergeCheckpoint writes TensorFlow's index. Errors name the variable:
// FailedPrecondition when uninitialized, InvalidArgument when its value does not fit its
// slice.
Operation SaveVariables(const Scope& scope, Input prefix, const std::vector<Variable>& vars,
                        const std::vector<CheckpointSlice>& slices, int shard, int num_shards,
                        const std::string& directory, bool tensorflow_format = false);

// Combines the shard indexes into "<prefix>.index", which makes the checkpoint valid. Run
// it after every SaveVariables of the checkpoint (a control dependency).
Operation MergeCheckpoint(const Scope& scope, Input prefix, int num_shards,
                          const std::string& directory);

// Assigns each variable its slice of the checkpoint, read from whichever saved slices
// cover it; all or none of this op's variables change. Errors: NotFound naming a variable
// missing from the checkpoint (or the checkpoint); InvalidArgument naming the variable and
// both dtypes or shapes when they differ; DataLoss naming the tensor and file for
// corrupted data.
Operation RestoreVariables(const Scope& scope, Input prefix, const std::vector<Variable>& vars,
                           const std::vector<CheckpointSlice>& slices,
                           const std::string& directory);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_IO_OPS_H_
