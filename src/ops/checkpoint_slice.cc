// ReadVariableSlice: the checks a restore makes before any variable changes.
#include "src/ops/checkpoint_slice.h"

#include "src/checkpoint/checkpoint_format.h"

namespace tw::checkpoint {

StatusOr<Tensor> ReadVariableSlice(CheckpointReader& reader, const VariableSlice& s, DataType dtype,
                                   const PartialShape& shape, const std::string& part_name) {
  TW_ASSIGN_OR_RETURN(const CheckpointReader::TensorInfo info, reader.Find(s.name));
  if (info.dtype != dtype) {
    return errors::InvalidArgument("variable \"", s.name, "\" has dtype ", DataTypeName(dtype),
                                   " but checkpoint ", reader.prefix(), " has dtype ",
                                   DataTypeName(info.dtype));
  }
  auto shape_mismatch = [&](const std::string& ours) {
    return errors::InvalidArgument("variable \"", s.name, "\" has shape ", ours, " but checkpoint ",
                                   reader.prefix(), " has shape ", info.full_shape.DebugString());
  };
  if (!s.partitioned) {
    if (!shape.IsCompatibleWith(info.full_shape)) return shape_mismatch(shape.DebugString());
    return reader.ReadRows(s.name, 0, NumRows(info.full_shape));
  }
  if (!(s.full_shape == info.full_shape)) {
    return shape_mismatch(s.full_shape.DebugString() + " (partitioned)");
  }
  if (shape.unknown_rank || shape.dims.empty() || shape.dims[0] < 0) {
    return errors::InvalidArgument("variable \"", s.name, "\" is partitioned, so its part ",
                                   part_name, " needs a known number of rows, not shape ",
                                   shape.DebugString());
  }
  if (shape.dims[0] > info.full_shape.dim(0) - s.row_offset) {
    return errors::InvalidArgument(
        "variable \"", s.name, "\": rows ", s.row_offset, "+", shape.dims[0], " of part ",
        part_name, " are outside the checkpoint's shape ", info.full_shape.DebugString());
  }
  TW_ASSIGN_OR_RETURN(Tensor value, reader.ReadRows(s.name, s.row_offset, shape.dims[0]));
  if (!shape.IsCompatibleWith(value.shape())) {
    return shape_mismatch(shape.DebugString() + " at row " + std::to_string(s.row_offset));
  }
  return value;
}

}  // namespace tw::checkpoint
