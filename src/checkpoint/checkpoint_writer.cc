#include "src/checkpoint/checkpoint_writer.h"

#include <unistd.h>

#include "src/base/crc32c.h"
#include "src/checkpoint/checkpoint_format.h"
#include "src/checkpoint/tf_bundle.h"

namespace tw::checkpoint {
namespace {

// The directory of a checkpoint prefix ("/d/model.ckpt-1" -> "/d").
std::string PrefixDirectory(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : prefix.substr(0, slash);
}

}  // namespace

StatusOr<std::unique_ptr<ShardWriter>> ShardWriter::Create(const std::string& prefix, int shard,
                                                           int num_shards, bool tensorflow_format) {
  if (num_shards < 1 || num_shards > kMaxShards || shard < 0 || shard >= num_shards) {
    return errors::InvalidArgument("bad checkpoint shard ", shard, " of ", num_shards, " for ",
                                   prefix);
  }
  // A save of this shard killed midway (of this or any earlier checkpoint) left temporary
  // files that nothing else would remove. Only this shard's writer makes files with its
  // shard suffix, so they cannot be a concurrent save's.
  const std::string data_suffix = DataFileName(prefix, shard, num_shards).substr(prefix.size());
  const std::string index_suffix =
      ShardIndexFileName(prefix, shard, num_shards).substr(prefix.size());
  RemoveStaleTempFiles(PrefixDirectory(prefix), [&](std::string_view final_name) {
    return final_name.ends_with(data_suffix) || final_name.ends_with(index_suffix);
  });
  TW_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> data,
                      WritableFile::Create(TempFileName(DataFileName(prefix, shard, num_shards))));
  return std::unique_ptr<ShardWriter>(
      new ShardWriter(prefix, shard, num_shards, tensorflow_format, std::move(data)));
}

ShardWriter::~ShardWriter() {
  if (!finished_ && data_ != nullptr) ::unlink(data_->path().c_str());
}

Status ShardWriter::Add(const std::string& name, const TensorShape& full_shape, int64_t row_offset,
                        const Tensor& value) {
  if (finished_) return errors::FailedPrecondition("shard writer for ", prefix_, " is finished");
  if (name.empty()) return errors::InvalidArgument("a saved tensor needs a name");
  if (!IsSavableDataType(value.dtype()) || !value.IsInitialized()) {
    return errors::InvalidArgument("tensor \"", name, "\" of dtype ", DataTypeName(value.dtype()),
                                   " cannot be saved");
  }
  if (!full_shape.IsFullyDefined()) {
    return errors::InvalidArgument("tensor \"", name, "\": full shape ", full_shape.DebugString(),
                                   " is not fully defined");
  }
  bool fits = value.rank() == full_shape.rank();
  for (int i = 1; fits && i < value.rank(); ++i) fits = value.dim(i) == full_shape.dim(i);
  const int64_t rows = value.rank() == 0 ? 1 : value.dim(0);
  if (!fits || row_offset < 0 || row_offset > NumRows(full_shape) ||
      rows > NumRows(full_shape) - row_offset) {
    return errors::InvalidArgument("tensor \"", name, "\": a value of shape ",
                                   value.shape().DebugString(), " at row ", row_offset,
                                   " is not a slice of shape ", full_shape.DebugString());
  }
  std::string bytes;
  uint32_t masked_crc32c = 0;
  if (tensorflow_format_) {
    TensorFlowBytes encoded = EncodeTensorFlowBytes(value);
    bytes = std::move(encoded.bytes);
    masked_crc32c = encoded.masked_crc32c;
  } else {
    bytes = EncodeTensorBytes(value);
    masked_crc32c = crc32c::Mask(crc32c::Value(bytes.data(), bytes.size()));
  }
  proto::CheckpointEntry* e = index_.add_entry();
  e->set_name(name);
  e->set_dtype(static_cast<proto::DataType>(value.dtype()));
  for (int64_t d : full_shape.dims()) e->add_full_shape(d);
  e->set_row_offset(row_offset);
  e->set_row_count(rows);
  e->set_shard(shard_);
  e->set_offset(data_->size());
  e->set_length(bytes.size());
  e->set_masked_crc32c(masked_crc32c);
  return data_->Append(bytes);
}

Status ShardWriter::Finish() {
  if (finished_) return errors::FailedPrecondition("shard writer for ", prefix_, " is finished");
  index_.set_num_shards(num_shards_);
  index_.set_shard(shard_);
  index_.add_shard_size(data_->size());
  index_.set_tensorflow_bundle(tensorflow_format_);
  Status s = data_->SyncAndClose();
  if (s.ok()) s = RenameFile(data_->path(), DataFileName(prefix_, shard_, num_shards_));
  if (!s.ok()) return s;
  finished_ = true;  // the temporary name is gone
  return WriteFileAtomically(ShardIndexFileName(prefix_, shard_, num_shards_),
                             EncodeIndexFile(index_));
}

Status MergeShardIndexes(const std::string& prefix, int num_shards) {
  if (num_shards < 1 || num_shards > kMaxShards) {
    return errors::InvalidArgument("bad checkpoint shard count ", num_shards, " for ", prefix);
  }
  proto::CheckpointIndex merged;
  merged.set_num_shards(num_shards);
  merged.set_shard(-1);
  for (int i = 0; i < num_shards; ++i) {
    const std::string file = ShardIndexFileName(prefix, i, num_shards);
    TW_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(file, kMaxIndexBytes));
    TW_ASSIGN_OR_RETURN(proto::CheckpointIndex shard, DecodeIndexFile(bytes, file));
    if (shard.shard() != i || shard.num_shards() != num_shards) {
      return errors::DataLoss("checkpoint shard index ", file, " describes shard ", shard.shard(),
                              " of ", shard.num_shards());
    }
    const std::string data = DataFileName(prefix, i, num_shards);
    TW_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> f, RandomAccessFile::Open(data));
    if (f->size() != shard.shard_size(0)) {
      return errors::DataLoss("checkpoint data file ", data, " has ", f->size(),
                              " bytes; its index says ", shard.shard_size(0));
    }
    if (i > 0 && shard.tensorflow_bundle() != merged.tensorflow_bundle()) {
      return errors::InvalidArgument("cannot merge the shards of checkpoint ", prefix, ": shard ",
                                     i, " was written in ",
                                     shard.tensorflow_bundle() ? "TensorFlow's" : "tensorweave's",
                                     " format, shard 0 in the other");
    }
    merged.set_tensorflow_bundle(shard.tensorflow_bundle());
    merged.add_shard_size(shard.shard_size(0));
    for (auto& e : *shard.mutable_entry()) *merged.add_entry() = std::move(e);
  }
  const std::string index_file = IndexFileName(prefix);
  // The merged index of a checkpoint is written by one task (the merge), so a temporary
  // index left by another process is a killed merge's.
  RemoveStaleTempFiles(PrefixDirectory(prefix),
                       [](std::string_view final_name) { return final_name.ends_with(".index"); });
  if (Status s = ValidateIndex(merged, index_file, /*merged=*/true); !s.ok()) {
    return errors::InvalidArgument("cannot merge the shards of checkpoint ", prefix, ": ",
                                   s.message());
  }
  TW_RETURN_IF_ERROR(merged.tensorflow_bundle()
                         ? WriteTensorFlowIndex(index_file, merged)
                         : WriteFileAtomically(index_file, EncodeIndexFile(merged)));
  for (int i = 0; i < num_shards; ++i) {
    TW_RETURN_IF_ERROR(RemoveFileIfExists(ShardIndexFileName(prefix, i, num_shards)));
  }
  return OkStatus();
}

}  // namespace tw::checkpoint
