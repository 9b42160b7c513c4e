// A variable's place in a checkpoint, and the one rule for reading it back: shared by the
// RestoreVariables kernel (reading on the variable's task) and the Saver (reading in the
// process that restores), so both accept and refuse exactly the same checkpoints with the
// same messages.
#ifndef TENSORWEAVE_SRC_OPS_CHECKPOINT_SLICE_H_
#define TENSORWEAVE_SRC_OPS_CHECKPOINT_SLICE_H_

#include <string>

#include "src/checkpoint/checkpoint_reader.h"
#include "src/framework/attr_value.h"
#include "tensorweave/tensor.h"

namespace tw::checkpoint {

// A whole tensor called `name`, or (partitioned) the rows [row_offset, row_offset + the
// part's rows) of a tensor called `name` whose shape is `full_shape`.
struct VariableSlice {
  std::string name;
  bool partitioned = false;
  TensorShape full_shape;  // only when partitioned
  int64_t row_offset = 0;  // only when partitioned
};

// The value that a variable (or part) `part_name` of `dtype` and `shape` takes from the
// checkpoint. NotFound naming the variable when the checkpoint lacks it; InvalidArgument
// naming the variable and both dtypes or shapes when they differ, or when a part's rows are
// unknown or fall outside the saved shape; DataLoss from the reader.
StatusOr<Tensor> ReadVariableSlice(CheckpointReader& reader, const VariableSlice& slice,
                                   DataType dtype, const PartialShape& shape,
                                   const std::string& part_name);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_OPS_CHECKPOINT_SLICE_H_
