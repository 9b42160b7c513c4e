#include "src/checkpoint/tf_bundle.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "src/base/crc32c.h"
#include "src/base/request_text.h"
#include "src/checkpoint/checkpoint_format.h"
#include "src/checkpoint/ordered_code.h"
#include "src/checkpoint/table_blocks.h"
#include "tensorweave/protobuf/tensor_bundle.pb.h"

namespace tw::checkpoint {
namespace {

// LevelDB's (and TensorFlow's) table footer ends with this number, little-endian.
constexpr uint64_t kTableMagicNumber = 0xdb4775248b80fb57ull;
// TensorFlow's tensor bundle versions: it writes producer 1, min_consumer 0, and reads
// what a producer >= 0 wrote unless its min_consumer is above 1 or it lists 1 as bad.
constexpr int kBundleVersion = 1;

Status CheckVersion(const tfproto::VersionDef& v, const std::string& file) {
  if (v.producer() < 0) {
    return errors::Unimplemented("TensorFlow checkpoint ", file, ": producer version ",
                                 v.producer(), " below the minimum 0");
  }
  if (v.min_consumer() > kBundleVersion) {
    return errors::Unimplemented("TensorFlow checkpoint ", file, " needs a reader of version ",
                                 v.min_consumer(), "; this one is version ", kBundleVersion);
  }
  for (int bad : v.bad_consumers()) {
    if (bad == kBundleVersion) {
      return errors::Unimplemented("TensorFlow checkpoint ", file, " disallows reader version ",
                                   kBundleVersion);
    }
  }
  return OkStatus();
}

StatusOr<std::vector<int64_t>> Dims(const tfproto::TensorShapeProto& shape, const std::string& name,
                                    const std::string& file) {
  if (shape.unknown_rank()) {
    return errors::DataLoss("TensorFlow checkpoint ", file, ": tensor \"", QuoteRequestText(name),
                            "\" has an unknown rank");
  }
  std::vector<int64_t> dims;
  for (const auto& d : shape.dim()) dims.push_back(d.size());
  auto valid = TensorShape::Create(dims);
  if (!valid.ok()) {
    return errors::DataLoss("TensorFlow checkpoint ", file, ": tensor \"", QuoteRequestText(name),
                            "\" has an invalid shape: ", valid.status().message());
  }
  return dims;
}

// The index file's bytes, already read whole, as the file LevelDB's Table reads: LevelDB
// reads exactly the bytes CheckTableBlocks checked.
class BytesFile final : public leveldb::RandomAccessFile {
 public:
  explicit BytesFile(std::string_view bytes) : bytes_(bytes) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* /*scratch*/) const override {
    if (offset > bytes_.size()) return leveldb::Status::IOError("read past the end of the index");
    const std::string_view part = bytes_.substr(offset, n);
    *result = leveldb::Slice(part.data(), part.size());
    return leveldb::Status::OK();
  }

 private:
  std::string_view bytes_;
};

uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Turns the bundle's entries into the CheckpointIndex's row slices, checking each.
class BundleIndexBuilder {
 public:
  BundleIndexBuilder(const std::string& prefix, const std::string& index_file,
                     proto::CheckpointIndex* index)
      : prefix_(prefix), index_file_(index_file), index_(index) {}

  // The tensor `name` whose entry is `entry`: whole, or (partitioned) in the row slices
  // that `slice_entries` holds under their slice keys.
  Status Add(const std::string& name, const tfproto::BundleEntryProto& entry,
             const std::map<std::string, tfproto::BundleEntryProto>& slice_entries) {
    const auto dtype = static_cast<DataType>(entry.dtype());
    if (!IsSavableDataType(dtype) || !proto::DataType_IsValid(entry.dtype())) {
      return errors::DataLoss("TensorFlow checkpoint index ", index_file_, ": tensor \"",
                              QuoteRequestText(name), "\" has dtype ", entry.dtype(),
                              ", which this reader does not hold");
    }
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Dims(entry.shape(), name, index_file_));
    const int64_t rows = dims.empty() ? 1 : dims[0];
    if (entry.slices_size() == 0) return AddBytes(name, entry, dims, 0, rows, entry);
    // Partitioned: each slice must cut rows only; their rows must cover the tensor once.
    std::vector<std::vector<SliceExtent>> slices;
    for (const tfproto::TensorSliceProto& slice : entry.slices()) {
      std::vector<SliceExtent> extents(dims.size());
      bool rows_only = slice.extent_size() == static_cast<int>(dims.size()) && !dims.empty();
      for (int d = 0; rows_only && d < slice.extent_size(); ++d) {
        const auto& x = slice.extent(d);
        if (x.has_length_case() == tfproto::TensorSliceProto::Extent::kLength) {
          extents[d] = {x.start(), x.length()};
          rows_only = d == 0 || (x.start() == 0 && x.length() == dims[d]);
        }
      }
      if (!rows_only) {  // listed; reading it says why not (CheckpointReader::ReadRows)
        AddUnreadable(name, dtype, dims);
        return OkStatus();
      }
      slices.push_back(std::move(extents));
    }
    std::vector<std::pair<int64_t, int64_t>> covered;
    for (const std::vector<SliceExtent>& extents : slices) {
      const int64_t start = extents[0].length < 0 ? 0 : extents[0].start;
      const int64_t count = extents[0].length < 0 ? rows : extents[0].length;
      if (start < 0 || count < 0 || start > rows || count > rows - start) {
        return Loss(name, absl::StrCat("has a slice of rows ", start, "+", count, " outside its ",
                                       rows, " rows"));
      }
      auto found = slice_entries.find(EncodeSliceKey(name, extents));
      if (found == slice_entries.end()) {
        return Loss(
            name, absl::StrCat("lists a slice of rows ", start, "+", count, " that has no entry"));
      }
      TW_RETURN_IF_ERROR(AddBytes(name, entry, dims, start, count, found->second));
      covered.emplace_back(start, count);
    }
    std::sort(covered.begin(), covered.end());
    int64_t next = 0;
    for (const auto& [start, count] : covered) {
      if (start != next) break;
      next += count;
    }
    if (next != rows) return Loss(name, "has slices that do not cover its rows exactly once");
    return OkStatus();
  }

 private:
  Status Loss(const std::string& name, const std::string& what) const {
    return errors::DataLoss("TensorFlow checkpoint index ", index_file_, ": tensor \"",
                            QuoteRequestText(name), "\" ", what);
  }

  proto::CheckpointEntry* NewEntry(const std::string& name, DataType dtype,
                                   const std::vector<int64_t>& dims) {
    proto::CheckpointEntry* e = index_->add_entry();
    e->set_name(name);
    e->set_dtype(static_cast<proto::DataType>(dtype));
    for (int64_t d : dims) e->add_full_shape(d);
    return e;
  }

  void AddUnreadable(const std::string& name, DataType dtype, const std::vector<int64_t>& dims) {
    proto::CheckpointEntry* e = NewEntry(name, dtype, dims);
    e->set_row_count(dims.empty() ? 1 : dims[0]);
    e->set_shard(-1);
  }

  // Rows [start, start + count) of tensor `name` (of shape `dims`), whose bytes `bytes`
  // locates: the whole tensor's entry, or a slice's entry of the same dtype.
  Status AddBytes(const std::string& name, const tfproto::BundleEntryProto& full,
                  const std::vector<int64_t>& dims, int64_t start, int64_t count,
                  const tfproto::BundleEntryProto& bytes) {
    const auto dtype = static_cast<DataType>(full.dtype());
    std::vector<int64_t> slice_dims = dims;
    if (!slice_dims.empty()) slice_dims[0] = count;
    const TensorShape slice_shape = *TensorShape::Create(slice_dims);
    const bool numeric = dtype != DT_STRING;
    const uint64_t expected =
        numeric ? static_cast<uint64_t>(slice_shape.num_elements()) * DataTypeSize(dtype) : 0;
    if (bytes.dtype() != full.dtype() || bytes.shard_id() < 0 ||
        bytes.shard_id() >= index_->num_shards() || bytes.offset() < 0 || bytes.size() < 0 ||
        static_cast<uint64_t>(bytes.offset()) + static_cast<uint64_t>(bytes.size()) >
            index_->shard_size(bytes.shard_id()) ||
        (numeric && static_cast<uint64_t>(bytes.size()) != expected)) {
      return errors::DataLoss("TensorFlow checkpoint ", prefix_, ": the entry of \"",
                              QuoteRequestText(name), "\" (rows ", start, "+", count, ", shard ",
                              bytes.shard_id(), ", offset ", bytes.offset(), ", size ",
                              bytes.size(), ", dtype ", bytes.dtype(),
                              ") does not fit its data file, or is not its tensor's");
    }
    proto::CheckpointEntry* e = NewEntry(name, dtype, dims);
    e->set_row_offset(start);
    e->set_row_count(count);
    e->set_shard(bytes.shard_id());
    e->set_offset(static_cast<uint64_t>(bytes.offset()));
    e->set_length(static_cast<uint64_t>(bytes.size()));
    e->set_masked_crc32c(bytes.crc32c());
    return OkStatus();
  }

  const std::string& prefix_;
  const std::string& index_file_;
  proto::CheckpointIndex* index_;
};

}  // namespace

bool IsTensorFlowIndex(std::string_view index_bytes) {
  if (index_bytes.size() < 48) return false;  // LevelDB's footer is 48 bytes
  uint64_t magic = 0;
  std::memcpy(&magic, index_bytes.data() + index_bytes.size() - 8, 8);
  return magic == kTableMagicNumber;
}

StatusOr<proto::CheckpointIndex> ReadTensorFlowIndex(const std::string& prefix,
                                                     const std::string& index_file,
                                                     std::string_view index_bytes) {
  // LevelDB trusts the table's block handles with its allocations: check them first.
  TW_RETURN_IF_ERROR(CheckTableBlocks(index_bytes, "TensorFlow checkpoint index " + index_file));
  BytesFile file(index_bytes);
  leveldb::Options options;
  options.paranoid_checks = true;  // the index block's checksum too
  leveldb::Table* raw_table = nullptr;
  leveldb::Status s = leveldb::Table::Open(options, &file, index_bytes.size(), &raw_table);
  std::unique_ptr<leveldb::Table> table(raw_table);
  if (!s.ok()) {
    return errors::DataLoss("TensorFlow checkpoint index ", index_file,
                            " cannot be read: ", s.ToString());
  }
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  it->SeekToFirst();
  if (!it->Valid() || !it->key().empty()) {
    return errors::DataLoss("TensorFlow checkpoint index ", index_file,
                            " has no header entry (key \"\")",
                            it->status().ok() ? "" : ": " + it->status().ToString());
  }
  tfproto::BundleHeaderProto header;
  if (!header.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
    return errors::DataLoss("TensorFlow checkpoint index ", index_file,
                            ": its header cannot be parsed");
  }
  if (header.endianness() != tfproto::BundleHeaderProto::LITTLE) {
    return errors::Unimplemented("TensorFlow checkpoint ", index_file,
                                 " was written big-endian; this reader is little-endian");
  }
  TW_RETURN_IF_ERROR(CheckVersion(header.version(), index_file));
  if (header.num_shards() < 1 || header.num_shards() > kMaxShards) {
    return errors::DataLoss("TensorFlow checkpoint index ", index_file, " has ",
                            header.num_shards(), " shards; expected 1 to ", kMaxShards);
  }
  proto::CheckpointIndex index;
  index.set_num_shards(header.num_shards());
  index.set_shard(-1);
  index.set_tensorflow_bundle(true);
  for (int i = 0; i < header.num_shards(); ++i) {
    index.add_shard_size(FileSize(DataFileName(prefix, i, header.num_shards())));
  }
  std::map<std::string, tfproto::BundleEntryProto> slice_entries;  // by slice key
  std::vector<std::pair<std::string, tfproto::BundleEntryProto>> entries;
  for (it->Next(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    tfproto::BundleEntryProto entry;
    if (!entry.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return errors::DataLoss("TensorFlow checkpoint index ", index_file, ": the entry of \"",
                              QuoteRequestText(key), "\" cannot be parsed");
    }
    // A slice of a partitioned variable: its key (EncodeSliceKey) begins with a zero byte;
    // the variable's own entry lists the slices.
    if (!key.empty() && key[0] == '\0') {
      slice_entries.emplace(key, std::move(entry));
    } else {
      entries.emplace_back(key, std::move(entry));
    }
  }
  if (!it->status().ok()) {
    return errors::DataLoss("TensorFlow checkpoint index ", index_file,
                            " is corrupt: ", it->status().ToString());
  }
  BundleIndexBuilder builder(prefix, index_file, &index);
  for (const auto& [name, entry] : entries) {
    TW_RETURN_IF_ERROR(builder.Add(name, entry, slice_entries));
  }
  return index;
}

StatusOr<Tensor> DecodeTensorFlowBytes(DataType dtype, const TensorShape& shape,
                                       std::string_view bytes, uint32_t masked_crc32c,
                                       const std::string& what) {
  TW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, shape));
  if (dtype != DT_STRING) {
    if (crc32c::Value(bytes.data(), bytes.size()) != crc32c::Unmask(masked_crc32c)) {
      return errors::DataLoss("checksum mismatch: ", what, " is corrupted");
    }
    if (bytes.size() != out.TotalBytes()) {
      return errors::DataLoss(what, " has ", bytes.size(), " bytes; its shape needs ",
                              out.TotalBytes());
    }
    if (!bytes.empty()) std::memcpy(out.raw_data(), bytes.data(), bytes.size());
    return out;
  }
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  const int64_t n = out.num_elements();
  std::vector<uint64_t> lengths(static_cast<size_t>(n));
  uint32_t crc = 0;
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t length = 0;
    if (!in.ReadVarint64(&length) || length > bytes.size()) {
      return errors::DataLoss(what, ": string length ", i, " is missing or too large");
    }
    lengths[i] = length;
    total += length;
    // TensorFlow checksums each length as uint32 (uint64 above 2^32-1).
    if (length <= UINT32_MAX) {
      const auto small = static_cast<uint32_t>(length);
      crc = crc32c::Extend(crc, reinterpret_cast<const char*>(&small), sizeof(small));
    } else {
      crc = crc32c::Extend(crc, reinterpret_cast<const char*>(&length), sizeof(length));
    }
  }
  uint32_t length_checksum = 0;
  if (!in.ReadLittleEndian32(&length_checksum) || crc32c::Unmask(length_checksum) != crc) {
    return errors::DataLoss("checksum mismatch: the string lengths of ", what, " are corrupted");
  }
  crc =
      crc32c::Extend(crc, reinterpret_cast<const char*>(&length_checksum), sizeof(length_checksum));
  const auto start = static_cast<uint64_t>(in.CurrentPosition());
  if (start + total != bytes.size()) {
    return errors::DataLoss(what, " has ", bytes.size() - start, " bytes of strings; its ",
                            "lengths add up to ", total);
  }
  auto strings = out.flat<std::string>();
  uint64_t at = start;
  for (int64_t i = 0; i < n; ++i) {
    strings[i].assign(bytes.data() + at, lengths[i]);
    crc = crc32c::Extend(crc, bytes.data() + at, lengths[i]);
    at += lengths[i];
  }
  if (crc != crc32c::Unmask(masked_crc32c)) {
    return errors::DataLoss("checksum mismatch: ", what, " is corrupted");
  }
  return out;
}

}  // namespace tw::checkpoint
