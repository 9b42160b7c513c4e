#include "src/checkpoint/checkpoint_format.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "src/base/crc32c.h"

namespace tw::checkpoint {

static_assert(std::endian::native == std::endian::little,
              "checkpoint files store numbers little-endian, as in memory");

namespace {

constexpr char kIndexMagic[] = "TWCKIDX1";
constexpr size_t kMagicBytes = 8;
constexpr size_t kFramingBytes = kMagicBytes + 8 + 4;
constexpr int kMaxRank = 64;

void PutFixed64(std::string* out, uint64_t v) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  out->append(buf, 8);
}
void PutFixed32(std::string* out, uint32_t v) {
  char buf[4];
  std::memcpy(buf, &v, 4);
  out->append(buf, 4);
}
uint64_t GetFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t GetFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

std::string ShardSuffix(int shard, int num_shards) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "-%05d-of-%05d", shard, num_shards);
  return buf;
}

std::string Describe(const proto::CheckpointEntry& e) {
  return absl::StrCat("\"", e.name(), "\" (rows ", e.row_offset(), "+", e.row_count(), ")");
}

// The full shape of an entry, or DataLoss.
StatusOr<TensorShape> EntryShape(const proto::CheckpointEntry& e, const std::string& file) {
  if (e.full_shape_size() > kMaxRank) {
    return errors::DataLoss("checkpoint index ", file, ": tensor ", Describe(e), " has rank ",
                            e.full_shape_size());
  }
  std::vector<int64_t> dims(e.full_shape().begin(), e.full_shape().end());
  for (int64_t d : dims) {
    if (d < 0) {
      return errors::DataLoss("checkpoint index ", file, ": tensor ", Describe(e),
                              " has a negative dimension");
    }
  }
  auto shape = TensorShape::Create(dims);
  if (!shape.ok()) {
    return errors::DataLoss("checkpoint index ", file, ": tensor ", Describe(e),
                            " has a bad shape: ", shape.status().message());
  }
  return shape;
}

}  // namespace

std::string IndexFileName(const std::string& prefix) { return prefix + ".index"; }
std::string DataFileName(const std::string& prefix, int shard, int num_shards) {
  return prefix + ".data" + ShardSuffix(shard, num_shards);
}
std::string ShardIndexFileName(const std::string& prefix, int shard, int num_shards) {
  return prefix + ".index" + ShardSuffix(shard, num_shards);
}

int64_t NumRows(const TensorShape& full_shape) {
  return full_shape.rank() == 0 ? 1 : full_shape.dim(0);
}

int64_t RowElements(const TensorShape& full_shape) {
  int64_t n = 1;
  for (int i = 1; i < full_shape.rank(); ++i) n *= full_shape.dim(i);
  return n;
}

bool IsSavableDataType(DataType dtype) { return IsValidDataType(dtype) && dtype != DT_RESOURCE; }

std::string EncodeIndexFile(const proto::CheckpointIndex& index) {
  std::string payload;
  index.SerializeToString(&payload);
  std::string out(kIndexMagic, kMagicBytes);
  PutFixed64(&out, payload.size());
  out += payload;
  PutFixed32(&out, crc32c::Mask(crc32c::Value(out.data(), out.size())));
  return out;
}

StatusOr<proto::CheckpointIndex> DecodeIndexFile(std::string_view bytes, const std::string& file) {
  if (bytes.size() < kFramingBytes) {
    return errors::DataLoss("checkpoint index ", file, " is truncated: ", bytes.size(), " bytes");
  }
  if (std::memcmp(bytes.data(), kIndexMagic, kMagicBytes) != 0) {
    return errors::DataLoss("checkpoint index ", file, " does not start with ", kIndexMagic);
  }
  const uint64_t length = GetFixed64(bytes.data() + kMagicBytes);
  if (length != bytes.size() - kFramingBytes) {
    return errors::DataLoss("checkpoint index ", file, " says its payload has ", length,
                            " bytes, but the file has room for ", bytes.size() - kFramingBytes,
                            " (truncated or extended)");
  }
  const size_t body = bytes.size() - 4;
  const uint32_t stored = crc32c::Unmask(GetFixed32(bytes.data() + body));
  const uint32_t actual = crc32c::Value(bytes.data(), body);
  if (stored != actual) {
    return errors::DataLoss("checkpoint index ", file, " fails its checksum (corrupted)");
  }
  proto::CheckpointIndex index;
  if (length > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
      !index.ParseFromArray(bytes.data() + kMagicBytes + 8, static_cast<int>(length))) {
    return errors::DataLoss("checkpoint index ", file, " cannot be parsed");
  }
  TW_RETURN_IF_ERROR(ValidateIndex(index, file, /*merged=*/index.shard() < 0));
  return index;
}

Status ValidateIndex(const proto::CheckpointIndex& index, const std::string& file, bool merged) {
  auto loss = [&](auto&&... args) {
    return errors::DataLoss("checkpoint index ", file, ": ", args...);
  };
  const int n = index.num_shards();
  if (n < 1 || n > kMaxShards) return loss("bad shard count ", n);
  if (merged ? index.shard() != -1 : (index.shard() < 0 || index.shard() >= n)) {
    return loss("bad shard number ", index.shard(), " of ", n);
  }
  if (index.shard_size_size() != (merged ? n : 1)) {
    return loss(index.shard_size_size(), " data file sizes for ", merged ? n : 1, " files");
  }
  struct Slice {
    int64_t offset, count;
  };
  std::map<std::string, std::vector<Slice>> slices;
  std::map<std::string, const proto::CheckpointEntry*> first;
  for (const proto::CheckpointEntry& e : index.entry()) {
    if (e.name().empty()) return loss("an entry has no name");
    const int dtype_value = static_cast<int>(e.dtype());
    if (!IsValidDataType(dtype_value) || !IsSavableDataType(static_cast<DataType>(dtype_value))) {
      return loss("tensor ", Describe(e), " has bad dtype ", dtype_value);
    }
    const auto dtype = static_cast<DataType>(dtype_value);
    TW_ASSIGN_OR_RETURN(TensorShape shape, EntryShape(e, file));
    const int64_t rows = NumRows(shape);
    if (e.row_offset() < 0 || e.row_count() < 0 || e.row_offset() > rows ||
        e.row_count() > rows - e.row_offset() || (shape.rank() == 0 && e.row_count() != 1)) {
      return loss("tensor ", Describe(e), " has rows outside its shape ", shape.DebugString());
    }
    if (merged ? (e.shard() < 0 || e.shard() >= n) : e.shard() != index.shard()) {
      return loss("tensor ", Describe(e), " names bad shard ", e.shard());
    }
    const uint64_t size = index.shard_size(merged ? e.shard() : 0);
    if (e.length() > size || e.offset() > size - e.length()) {
      return loss("tensor ", Describe(e), " at offset ", e.offset(), " length ", e.length(),
                  " lies outside its data file of ", size, " bytes");
    }
    const int64_t elements = e.row_count() * RowElements(shape);  // <= the shape's count
    if (DataTypeIsTrivial(dtype)) {
      const auto elem = static_cast<int64_t>(DataTypeSize(dtype));
      if (elements > std::numeric_limits<int64_t>::max() / elem ||
          static_cast<uint64_t>(elements * elem) != e.length()) {
        return loss("tensor ", Describe(e), " of ", elements, " ", DataTypeName(dtype),
                    " elements has length ", e.length());
      }
    } else if (e.length() < static_cast<uint64_t>(elements)) {
      return loss("tensor ", Describe(e), " of ", elements, " strings has only ", e.length(),
                  " bytes");
    }
    if (!merged) continue;
    auto [it, inserted] = first.emplace(e.name(), &e);
    if (!inserted) {
      const proto::CheckpointEntry& f = *it->second;
      if (f.dtype() != e.dtype() || !std::equal(f.full_shape().begin(), f.full_shape().end(),
                                                e.full_shape().begin(), e.full_shape().end())) {
        return loss("slices of tensor \"", e.name(), "\" disagree on dtype or shape");
      }
    }
    slices[e.name()].push_back({e.row_offset(), e.row_count()});
  }
  for (auto& [name, list] : slices) {
    std::sort(list.begin(), list.end(),
              [](const Slice& a, const Slice& b) { return a.offset < b.offset; });
    TW_ASSIGN_OR_RETURN(TensorShape shape, EntryShape(*first[name], file));
    int64_t next = 0;
    for (const Slice& s : list) {
      if (s.offset != next) {
        return loss("slices of tensor \"", name, "\" ", s.offset < next ? "overlap" : "leave a gap",
                    " at row ", std::min(s.offset, next));
      }
      next = s.offset + s.count;
    }
    if (next != NumRows(shape)) {
      return loss("slices of tensor \"", name, "\" cover ", next, " of ", NumRows(shape), " rows");
    }
  }
  return OkStatus();
}

std::string EncodeTensorBytes(const Tensor& tensor) {
  if (tensor.dtype() != DT_STRING) {
    return std::string(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  }
  std::string out;
  for (const std::string& s : tensor.flat<std::string>()) {
    uint64_t len = s.size();
    while (len >= 0x80) {
      out.push_back(static_cast<char>((len & 0x7f) | 0x80));
      len >>= 7;
    }
    out.push_back(static_cast<char>(len));
    out += s;
  }
  return out;
}

StatusOr<Tensor> DecodeTensorBytes(DataType dtype, const TensorShape& shape, std::string_view bytes,
                                   const std::string& what) {
  auto allocated = Tensor::Allocate(dtype, shape);
  if (!allocated.ok()) {
    return errors::DataLoss(what, ": cannot hold ", DataTypeName(dtype), " ", shape.DebugString(),
                            ": ", allocated.status().message());
  }
  Tensor t = *std::move(allocated);
  if (dtype != DT_STRING) {
    if (bytes.size() != t.TotalBytes()) {
      return errors::DataLoss(what, ": ", bytes.size(), " bytes for ", t.TotalBytes(), " bytes of ",
                              DataTypeName(dtype), " ", shape.DebugString());
    }
    if (dtype == DT_BOOL) {
      for (char c : bytes) {
        if (c != 0 && c != 1) return errors::DataLoss(what, ": a bool byte is not 0 or 1");
      }
    }
    if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
    return t;
  }
  size_t pos = 0;
  for (std::string& s : t.flat<std::string>()) {
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      if (pos >= bytes.size() || shift > 63) {
        return errors::DataLoss(what, ": a string length runs past the end");
      }
      const auto b = static_cast<uint8_t>(bytes[pos++]);
      len |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
    }
    if (len > bytes.size() - pos) {
      return errors::DataLoss(what, ": a string of ", len, " bytes runs past the end");
    }
    s.assign(bytes.data() + pos, len);
    pos += len;
  }
  if (pos != bytes.size()) {
    return errors::DataLoss(what, ": ", bytes.size() - pos, " bytes left after the strings");
  }
  return t;
}

}  // namespace tw::checkpoint
