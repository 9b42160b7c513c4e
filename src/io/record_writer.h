// Writes TFRecord files: TensorFlow's .tfrecord data files and the framing of its event
// files. Each record in the (uncompressed) stream is
//
//   uint64 length (little-endian)
//   uint32 masked CRC32C of those 8 bytes (little-endian)
//   byte   data[length]
//   uint32 masked CRC32C of data (little-endian)
//
// with mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (src/base/crc32c.h). A record
// that reached the disk whole is recognized by readers; a torn last record is detected by
// its length or CRC (RecordReader). With ZLIB or GZIP compression the whole stream of
// records is one zlib or gzip stream, as TensorFlow's TFRecordWriter writes it.
//
// Owned by one user; not thread-safe (EventFileWriter serializes its calls).
#ifndef TENSORWEAVE_SRC_IO_RECORD_WRITER_H_
#define TENSORWEAVE_SRC_IO_RECORD_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "src/io/compression.h"
#include "tensorweave/status.h"

namespace tw::io {

// Bytes before and after a record's data.
inline constexpr size_t kRecordHeaderBytes = sizeof(uint64_t) + sizeof(uint32_t);
inline constexpr size_t kRecordFooterBytes = sizeof(uint32_t);

// `data` framed as one record, as it appears in an uncompressed file.
std::string FrameRecord(std::string_view data);
// Appends `data` framed as one record to `out`.
void AppendFramedRecord(std::string_view data, std::string* out);

struct RecordWriterOptions {
  Compression compression = Compression::kNone;
  // false (event files): an existing file is never replaced, Create fails with
  // AlreadyExists. true (TensorFlow's TFRecordWriter): an existing file is truncated.
  bool truncate = false;
};

class RecordWriter {
 public:
  // Creates the file at `path`: AlreadyExists when something is there and not
  // options.truncate, NotFound when the directory does not exist, other errno codes as
  // src/base/errno_status.h, each naming the path.
  static StatusOr<std::unique_ptr<RecordWriter>> Create(const std::string& path,
                                                        RecordWriterOptions options = {});
  // Closes the file; errors are lost, so call Close() to see them.
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one record. It is buffered in memory until Flush (or until the buffer passes
  // kFlushBytes); errors name the file. FailedPrecondition after Close or after a write
  // error of a compressed file (its stream cannot be resumed).
  Status Write(std::string_view data);
  // Writes the buffered records to the file (write(2), no fsync: a crash of the machine
  // may lose them, a crash of the process does not). A compressed stream is flushed to a
  // byte boundary (Z_SYNC_FLUSH), so a reader sees every record written so far.
  Status Flush();
  // Flushes, ends a compressed stream (its trailer) and closes; later calls return OK and
  // do nothing.
  Status Close();

  const std::string& path() const { return path_; }

  // Buffered bytes beyond which Write flushes by itself.
  static constexpr size_t kFlushBytes = 1 << 20;

 private:
  RecordWriter(std::string path, int fd, std::unique_ptr<Deflater> deflater)
      : path_(std::move(path)), fd_(fd), deflater_(std::move(deflater)) {}
  // Compresses buffer_ (when compressing) with `mode` and writes the result.
  Status WriteBuffer(Deflater::Mode mode);
  Status WriteAll(std::string_view bytes);

  const std::string path_;
  int fd_;                              // -1 once closed
  std::unique_ptr<Deflater> deflater_;  // null: no compression
  std::string buffer_;
  std::string compressed_;
  Status error_;  // a failed write of a compressed stream: nothing more can be appended
};

}  // namespace tw::io

#endif  // TENSORWEAVE_SRC_IO_RECORD_WRITER_H_
