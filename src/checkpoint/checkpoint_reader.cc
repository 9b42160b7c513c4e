#include "src/checkpoint/checkpoint_reader.h"

#include <algorithm>
#include <cstring>

#include "src/base/crc32c.h"
#include "src/checkpoint/checkpoint_format.h"
#include "src/checkpoint/tf_bundle.h"

namespace tw::checkpoint {
namespace {

TensorShape RowsShape(const TensorShape& full, int64_t rows) {
  if (full.rank() == 0) return full;
  std::vector<int64_t> dims = full.dims();
  dims[0] = rows;
  return *TensorShape::Create(dims);  // no larger than `full`, which is valid
}

// Copies `rows` rows starting at src_row of `src` to dst_row of `dst` (same dtype and row
// size).
void CopyRows(const Tensor& src, int64_t src_row, Tensor* dst, int64_t dst_row, int64_t rows,
              int64_t row_elements) {
  if (src.dtype() == DT_STRING) {
    auto from = src.flat<std::string>();
    auto to = dst->flat<std::string>();
    for (int64_t i = 0; i < rows * row_elements; ++i) {
      to[dst_row * row_elements + i] = from[src_row * row_elements + i];
    }
    return;
  }
  const auto row_bytes = static_cast<size_t>(row_elements) * DataTypeSize(src.dtype());
  if (rows == 0 || row_bytes == 0) return;
  std::memcpy(static_cast<char*>(dst->raw_data()) + dst_row * row_bytes,
              static_cast<const char*>(src.raw_data()) + src_row * row_bytes, rows * row_bytes);
}

}  // namespace

CheckpointReader::CheckpointReader(std::string prefix, proto::CheckpointIndex index)
    : prefix_(std::move(prefix)), index_(std::move(index)) {
  for (const proto::CheckpointEntry& e : index_.entry()) by_name_[e.name()].push_back(&e);
  for (auto& [name, entries] : by_name_) {
    std::sort(entries.begin(), entries.end(),
              [](const auto* a, const auto* b) { return a->row_offset() < b->row_offset(); });
  }
}

StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Open(const std::string& prefix) {
  const std::string file = IndexFileName(prefix);
  auto bytes = ReadWholeFile(file, kMaxIndexBytes);
  if (IsNotFound(bytes.status())) {
    return errors::NotFound("checkpoint ", prefix, " not found: ", file,
                            " does not exist (no checkpoint was saved there, or its save did "
                            "not finish)");
  }
  TW_RETURN_IF_ERROR(bytes.status());
  if (IsTensorFlowIndex(*bytes)) {  // a checkpoint TensorFlow saved
    TW_ASSIGN_OR_RETURN(proto::CheckpointIndex index, ReadTensorFlowIndex(prefix, file, *bytes));
    return std::unique_ptr<CheckpointReader>(new CheckpointReader(prefix, std::move(index)));
  }
  TW_ASSIGN_OR_RETURN(proto::CheckpointIndex index, DecodeIndexFile(*bytes, file));
  if (index.shard() != -1) {
    return errors::DataLoss("checkpoint index ", file, " is a single shard's index");
  }
  return std::unique_ptr<CheckpointReader>(new CheckpointReader(prefix, std::move(index)));
}

StatusOr<CheckpointReader::TensorInfo> CheckpointReader::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return errors::NotFound("variable \"", name, "\" is not in checkpoint ", prefix_);
  }
  const proto::CheckpointEntry& e = *it->second.front();
  std::vector<int64_t> dims(e.full_shape().begin(), e.full_shape().end());
  return TensorInfo{static_cast<DataType>(e.dtype()), *TensorShape::Create(dims)};
}

std::vector<std::string> CheckpointReader::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, entries] : by_name_) names.push_back(name);
  return names;
}

StatusOr<RandomAccessFile*> CheckpointReader::DataFile(int shard) {
  auto& file = files_[shard];
  if (file == nullptr) {
    const std::string path = DataFileName(prefix_, shard, index_.num_shards());
    auto opened = RandomAccessFile::Open(path);
    if (IsNotFound(opened.status())) {
      return errors::DataLoss("checkpoint ", prefix_, " is missing its data file ", path);
    }
    TW_RETURN_IF_ERROR(opened.status());
    if ((*opened)->size() != index_.shard_size(shard)) {
      return errors::DataLoss("checkpoint data file ", path, " has ", (*opened)->size(),
                              " bytes; the index says ", index_.shard_size(shard),
                              " (truncated or replaced)");
    }
    file = *std::move(opened);
  }
  return file.get();
}

StatusOr<Tensor> CheckpointReader::ReadRows(const std::string& name, int64_t row_offset,
                                            int64_t row_count) {
  TW_ASSIGN_OR_RETURN(TensorInfo info, Find(name));
  const int64_t rows = NumRows(info.full_shape);
  if (row_offset < 0 || row_count < 0 || row_offset > rows || row_count > rows - row_offset ||
      (info.full_shape.rank() == 0 && row_count != 1)) {
    return errors::InvalidArgument("rows ", row_offset, "+", row_count, " of variable \"", name,
                                   "\" are outside its saved shape ", info.full_shape.DebugString(),
                                   " in checkpoint ", prefix_);
  }
  const int64_t row_elements = RowElements(info.full_shape);
  TW_ASSIGN_OR_RETURN(Tensor out,
                      Tensor::Allocate(info.dtype, RowsShape(info.full_shape, row_count)));
  const int64_t end = row_offset + row_count;
  for (const proto::CheckpointEntry* e : by_name_.at(name)) {
    const int64_t e_end = e->row_offset() + e->row_count();
    if (e_end <= row_offset || e->row_offset() >= end) continue;
    if (e->shard() < 0) {
      return errors::Unimplemented("variable \"", name, "\" of TensorFlow checkpoint ", prefix_,
                                   " was saved partitioned along a dimension other than 0; "
                                   "tensorweave partitions variables by rows and reads "
                                   "TensorFlow's row slices only");
    }
    TW_ASSIGN_OR_RETURN(RandomAccessFile * file, DataFile(e->shard()));
    const std::string what = absl::StrCat("tensor \"", name, "\" (rows ", e->row_offset(), "+",
                                          e->row_count(), ") in ", file->path());
    std::string bytes(e->length(), '\0');
    TW_RETURN_IF_ERROR(file->Read(e->offset(), e->length(), bytes.data()));
    const TensorShape shape = RowsShape(info.full_shape, e->row_count());
    StatusOr<Tensor> decoded =
        index_.tensorflow_bundle()
            ? DecodeTensorFlowBytes(info.dtype, shape, bytes, e->masked_crc32c(), what)
            : (crc32c::Value(bytes.data(), bytes.size()) != crc32c::Unmask(e->masked_crc32c())
                   ? StatusOr<Tensor>(
                         errors::DataLoss("checksum mismatch: ", what, " is corrupted"))
                   : DecodeTensorBytes(info.dtype, shape, bytes, what));
    TW_ASSIGN_OR_RETURN(Tensor slice, std::move(decoded));
    const int64_t first = std::max(row_offset, e->row_offset());
    const int64_t last = std::min(end, e_end);
    CopyRows(slice, first - e->row_offset(), &out, first - row_offset, last - first, row_elements);
  }
  return out;
}

}  // namespace tw::checkpoint
