// WriteTensorFlowIndex and EncodeTensorFlowBytes (tf_bundle.h): checkpoints TensorFlow reads.
#include <cstdint>
#include <map>
#include <vector>

#include "google/protobuf/io/coded_stream.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table_builder.h"
#include "src/base/crc32c.h"
#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_format.h"
#include "src/checkpoint/ordered_code.h"
#include "src/checkpoint/tf_bundle.h"
#include "tensorweave/protobuf/tensor_bundle.pb.h"

namespace tw::checkpoint {
namespace {

// TensorFlow's table options for a bundle's index (tensorflow/core/lib/io/table_options.h,
// with the compression BundleWriter sets).
constexpr size_t kTensorFlowBlockSize = 262144;
constexpr int kTensorFlowRestartInterval = 16;

// The table LevelDB builds, kept in memory so that the index file is written atomically.
class StringFile final : public leveldb::WritableFile {
 public:
  leveldb::Status Append(const leveldb::Slice& data) override {
    contents_.append(data.data(), data.size());
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }
  const std::string& contents() const { return contents_; }

 private:
  std::string contents_;
};

void SetShape(const std::vector<int64_t>& dims, tfproto::TensorShapeProto* shape) {
  for (int64_t d : dims) shape->add_dim()->set_size(d);
}

// The entry of bytes that a CheckpointEntry locates: a whole tensor or one slice, whose
// shape is `dims`.
tfproto::BundleEntryProto BytesEntry(const proto::CheckpointEntry& e,
                                     const std::vector<int64_t>& dims) {
  tfproto::BundleEntryProto entry;
  entry.set_dtype(e.dtype());
  SetShape(dims, entry.mutable_shape());
  entry.set_shard_id(e.shard());
  entry.set_offset(static_cast<int64_t>(e.offset()));
  entry.set_size(static_cast<int64_t>(e.length()));
  entry.set_crc32c(e.masked_crc32c());
  return entry;
}

}  // namespace

Status WriteTensorFlowIndex(const std::string& index_file, const proto::CheckpointIndex& index) {
  std::map<std::string, std::vector<const proto::CheckpointEntry*>> by_name;
  for (const proto::CheckpointEntry& e : index.entry()) by_name[e.name()].push_back(&e);
  // Keys in the table's order (bytewise; std::string compares bytes as unsigned). The
  // header's key "" comes first.
  std::map<std::string, std::string> table;
  tfproto::BundleHeaderProto header;
  header.set_num_shards(index.num_shards());
  header.set_endianness(tfproto::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);  // min_consumer 0, as TensorFlow writes
  table[""] = header.SerializeAsString();
  for (const auto& [name, slices] : by_name) {
    const proto::CheckpointEntry& first = *slices.front();
    const std::vector<int64_t> dims(first.full_shape().begin(), first.full_shape().end());
    const int64_t rows = dims.empty() ? 1 : dims[0];
    if (slices.size() == 1 && first.row_offset() == 0 && first.row_count() == rows) {
      table[name] = BytesEntry(first, dims).SerializeAsString();
      continue;
    }
    tfproto::BundleEntryProto full;  // a partitioned variable: its slices, no bytes
    full.set_dtype(first.dtype());
    SetShape(dims, full.mutable_shape());
    for (const proto::CheckpointEntry* e : slices) {
      // A row slice: dimension 0 from row_offset, every other dimension whole (an extent
      // without start or length in the proto; start 0, length -1 in the key).
      std::vector<SliceExtent> extents(dims.size());
      extents[0] = {e->row_offset(), e->row_count()};
      tfproto::TensorSliceProto* slice = full.add_slices();
      auto* rows_extent = slice->add_extent();
      rows_extent->set_start(e->row_offset());
      rows_extent->set_length(e->row_count());
      for (size_t d = 1; d < dims.size(); ++d) slice->add_extent();
      std::vector<int64_t> slice_dims = dims;
      slice_dims[0] = e->row_count();
      table[EncodeSliceKey(name, extents)] = BytesEntry(*e, slice_dims).SerializeAsString();
    }
    table[name] = full.SerializeAsString();
  }
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;
  options.block_size = kTensorFlowBlockSize;
  options.block_restart_interval = kTensorFlowRestartInterval;
  StringFile file;
  leveldb::TableBuilder builder(options, &file);
  for (const auto& [key, value] : table) builder.Add(key, value);
  if (leveldb::Status s = builder.Finish(); !s.ok()) {
    return errors::Internal("cannot build the TensorFlow index ", index_file, ": ", s.ToString());
  }
  return WriteFileAtomically(index_file, file.contents());
}

TensorFlowBytes EncodeTensorFlowBytes(const Tensor& tensor) {
  TensorFlowBytes out;
  if (tensor.dtype() != DT_STRING) {
    out.bytes = EncodeTensorBytes(tensor);  // as in memory, as TensorFlow writes them
    out.masked_crc32c = crc32c::Mask(crc32c::Value(out.bytes.data(), out.bytes.size()));
    return out;
  }
  // Every length as a varint64; the CRC covers each length as uint32 (uint64 above
  // 2^32-1), then the masked CRC of the lengths (4 bytes, written after them), then the
  // strings' bytes.
  const auto strings = tensor.flat<std::string>();
  uint32_t crc = 0;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    const uint64_t length = strings[i].size();
    uint8_t varint[10];  // a varint64 takes at most 10 bytes
    const uint8_t* end =
        google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(length, varint);
    out.bytes.append(reinterpret_cast<const char*>(varint), end - varint);
    if (length <= UINT32_MAX) {
      const auto small = static_cast<uint32_t>(length);
      crc = crc32c::Extend(crc, reinterpret_cast<const char*>(&small), sizeof(small));
    } else {
      crc = crc32c::Extend(crc, reinterpret_cast<const char*>(&length), sizeof(length));
    }
  }
  const uint32_t length_checksum = crc32c::Mask(crc);
  out.bytes.append(reinterpret_cast<const char*>(&length_checksum), sizeof(length_checksum));
  crc =
      crc32c::Extend(crc, reinterpret_cast<const char*>(&length_checksum), sizeof(length_checksum));
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out.bytes.append(strings[i]);
    crc = crc32c::Extend(crc, strings[i].data(), strings[i].size());
  }
  out.masked_crc32c = crc32c::Mask(crc);
  return out;
}

}  // namespace tw::checkpoint
