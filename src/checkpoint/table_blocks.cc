#include "src/checkpoint/table_blocks.h"

#include <cstdint>
#include <cstring>

#include "google/protobuf/io/coded_stream.h"
#include "snappy.h"

namespace tw::checkpoint {
namespace {

// The table format's constants (leveldb/doc/table_format.md).
constexpr size_t kFooterSize = 48;       // two handles, padding, 8-byte magic number
constexpr size_t kBlockTrailerSize = 5;  // 1-byte compression type, 4-byte masked CRC32C
constexpr uint8_t kNoCompression = 0;
constexpr uint8_t kSnappyCompression = 1;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

// Reads the varints of LevelDB's encoding with protobuf's reader (the same varints).
class VarintReader {
 public:
  explicit VarintReader(std::string_view bytes)
      : in_(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size())) {}
  bool Read32(uint32_t* value) { return in_.ReadVarint32(value); }
  bool Read64(uint64_t* value) { return in_.ReadVarint64(value); }
  bool ReadHandle(BlockHandle* h) { return Read64(&h->offset) && Read64(&h->size); }
  bool Skip(uint32_t bytes) { return in_.Skip(static_cast<int>(bytes)); }
  int Position() const { return in_.CurrentPosition(); }

 private:
  google::protobuf::io::CodedInputStream in_;
};

class TableChecker {
 public:
  TableChecker(std::string_view table, const std::string& what)
      : table_(table), what_(what), blocks_end_(table.size() - kFooterSize) {}

  Status Check() {
    VarintReader footer(table_.substr(blocks_end_, kFooterSize));
    BlockHandle metaindex, index;
    if (!footer.ReadHandle(&metaindex) || !footer.ReadHandle(&index)) {
      return Corrupt("its footer's block handles cannot be decoded");
    }
    TW_RETURN_IF_ERROR(CheckBlock(metaindex, "the metaindex block"));
    TW_RETURN_IF_ERROR(CheckBlock(index, "the index block"));
    std::string index_contents;
    TW_RETURN_IF_ERROR(Contents(index, &index_contents));
    return CheckIndexEntries(index_contents);
  }

 private:
  Status Corrupt(const std::string& what) const {
    return errors::DataLoss(what_, " is corrupt: ", what);
  }

  // The handle lies inside the file, before the footer, with its trailer; the block is
  // uncompressed or valid Snappy.
  Status CheckBlock(const BlockHandle& h, const std::string& what) const {
    if (h.offset > blocks_end_ || h.size > blocks_end_ - h.offset ||
        kBlockTrailerSize > blocks_end_ - h.offset - h.size) {
      return Corrupt(absl::StrCat(what, " (offset ", h.offset, ", ", h.size,
                                  " bytes) does not fit in the file's ", table_.size(), " bytes"));
    }
    const auto type = static_cast<uint8_t>(table_[h.offset + h.size]);
    if (type == kNoCompression) return OkStatus();
    if (type == kSnappyCompression &&
        snappy::IsValidCompressedBuffer(table_.data() + h.offset, h.size)) {
      return OkStatus();
    }
    return Corrupt(absl::StrCat(what, " (offset ", h.offset, ") has compression type ",
                                static_cast<int>(type),
                                type == kSnappyCompression ? " but is not valid Snappy"
                                                           : ", neither none (0) nor Snappy (1)"));
  }

  // A checked block's contents, decompressed if need be.
  Status Contents(const BlockHandle& h, std::string* out) const {
    const char* data = table_.data() + h.offset;
    if (static_cast<uint8_t>(table_[h.offset + h.size]) == kNoCompression) {
      out->assign(data, h.size);
      return OkStatus();
    }
    if (!snappy::Uncompress(data, h.size, out)) return Corrupt("the index block's Snappy data");
    return OkStatus();
  }

  // The index block: entries (shared, non-shared and value lengths, key bytes, a data
  // block's handle as the value), then the restart offsets and their count.
  Status CheckIndexEntries(std::string_view block) const {
    if (block.size() < 4) return Corrupt("the index block is shorter than its restart count");
    uint32_t restarts = 0;
    std::memcpy(&restarts, block.data() + block.size() - 4, 4);  // little-endian, as written
    if (restarts > (block.size() - 4) / 4) {
      return Corrupt(absl::StrCat("the index block's ", restarts, " restart points overrun it"));
    }
    const std::string_view entries = block.substr(0, block.size() - 4 - 4 * size_t{restarts});
    VarintReader in(entries);
    for (int n = 0; static_cast<size_t>(in.Position()) < entries.size(); ++n) {
      uint32_t shared = 0, non_shared = 0, value_size = 0;
      BlockHandle data;
      const int entry_at = in.Position();
      if (!in.Read32(&shared) || !in.Read32(&non_shared) || !in.Read32(&value_size) ||
          !in.Skip(non_shared)) {
        return Corrupt(
            absl::StrCat("index entry ", n, " (at byte ", entry_at, ") overruns the index block"));
      }
      const int handle_at = in.Position();
      if (!in.ReadHandle(&data) || in.Position() - handle_at > static_cast<int>(value_size) ||
          !in.Skip(value_size - static_cast<uint32_t>(in.Position() - handle_at))) {
        return Corrupt(absl::StrCat("index entry ", n, "'s block handle cannot be decoded"));
      }
      TW_RETURN_IF_ERROR(CheckBlock(data, absl::StrCat("data block ", n)));
    }
    return OkStatus();
  }

  std::string_view table_;
  const std::string& what_;
  size_t blocks_end_;  // where the footer begins
};

}  // namespace

Status CheckTableBlocks(std::string_view table, const std::string& what) {
  if (table.size() < kFooterSize) {
    return errors::DataLoss(what, " is corrupt: its ", table.size(),
                            " bytes are shorter than the table footer (", kFooterSize, ")");
  }
  return TableChecker(table, what).Check();
}

}  // namespace tw::checkpoint
