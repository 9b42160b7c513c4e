// Reads TFRecord files (the framing of record_writer.h), plain or ZLIB/GZIP-compressed,
// checking both CRCs of every record. Streams the file through a bounded buffer, so files
// of any size read in constant memory (plus the largest record).
//
// Owned by one user; not thread-safe.
#ifndef TENSORWEAVE_SRC_IO_RECORD_READER_H_
#define TENSORWEAVE_SRC_IO_RECORD_READER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "src/io/compression.h"
#include "tensorweave/status.h"

namespace tw::io {

struct RecordReaderOptions {
  Compression compression = Compression::kNone;
  // Bytes read from the file at a time.
  size_t buffer_bytes = 256 << 10;
};

class RecordReader {
 public:
  // Opens the file at `path`. Errors from errno name the path (src/base/errno_status.h).
  static StatusOr<std::unique_ptr<RecordReader>> Open(const std::string& path,
                                                      RecordReaderOptions options = {});
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads the next record's data into `*record`. OutOfRange ("end of <path>") after the
  // last record; DataLoss naming the file and the record's byte offset (in the
  // uncompressed stream) when the record is cut short (the file ends inside it), a CRC
  // does not match (the bytes were changed) or a compressed stream is corrupt. After an
  // error every later call returns the same error: nothing past a bad record is trusted,
  // since its length may be wrong.
  Status Next(std::string* record);
  StatusOr<std::string> Next();

  // Byte offset of the next record in the uncompressed stream.
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

 private:
  RecordReader(std::string path, int fd, RecordReaderOptions options,
               std::unique_ptr<Inflater> inflater);
  // Makes `n` bytes available at buffer_[pos_, end_); fewer only at the stream's end.
  Status Ensure(size_t n);
  // Reads (and decompresses) the next bytes of the stream into out[0, capacity); 0 at the
  // end.
  StatusOr<size_t> Produce(char* out, size_t capacity);
  Status Corrupt(const std::string& what) const;

  const std::string path_;
  int fd_;
  const RecordReaderOptions options_;
  std::unique_ptr<Inflater> inflater_;  // null: not compressed
  std::string raw_;                     // compressed bytes read from the file
  size_t raw_pos_ = 0, raw_end_ = 0;
  bool file_ended_ = false;
  std::string buffer_;  // uncompressed bytes
  size_t pos_ = 0, end_ = 0;
  uint64_t offset_ = 0;
  Status error_;
};

}  // namespace tw::io

#endif  // TENSORWEAVE_SRC_IO_RECORD_READER_H_
