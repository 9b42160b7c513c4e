// Writes TFRecord files: the framing of TensorFlow's event files (and .tfrecord data).
// Each record on disk is
//
//   uint64 length (little-endian)
//   uint32 masked CRC32C of those 8 bytes (little-endian)
//   byte   data[length]
//   uint32 masked CRC32C of data (little-endian)
//
// with mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (src/base/crc32c.h). A record
// that reached the disk whole is recognized by readers; a torn last record is detected by
// its length or CRC (RecordReader).
//
// Owned by one user; not thread-safe (EventFileWriter serializes its calls).
#ifndef TENSORWEAVE_SRC_SUMMARY_RECORD_WRITER_H_
#define TENSORWEAVE_SRC_SUMMARY_RECORD_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tensorweave/status.h"

namespace tw::summary {

// Bytes before and after a record's data.
inline constexpr size_t kRecordHeaderBytes = sizeof(uint64_t) + sizeof(uint32_t);
inline constexpr size_t kRecordFooterBytes = sizeof(uint32_t);

// `data` framed as one record, as it appears in a file.
std::string FrameRecord(std::string_view data);

class RecordWriter {
 public:
  // Creates a new file at `path`; AlreadyExists when something is there (an existing file
  // is never truncated), NotFound when the directory does not exist, other errno codes as
  // src/base/errno_status.h, each naming the path.
  static StatusOr<std::unique_ptr<RecordWriter>> Create(const std::string& path);
  // Closes the file; errors are lost, so call Close() to see them.
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one record. It is buffered in memory until Flush (or until the buffer passes
  // kFlushBytes); errors name the file. FailedPrecondition after Close.
  Status Write(std::string_view data);
  // Writes the buffered records to the file (write(2), no fsync: a crash of the machine
  // may lose them, a crash of the process does not).
  Status Flush();
  // Flushes and closes; later calls return OK and do nothing.
  Status Close();

  const std::string& path() const { return path_; }

  // Buffered bytes beyond which Write flushes by itself.
  static constexpr size_t kFlushBytes = 1 << 20;

 private:
  RecordWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  const std::string path_;
  int fd_;  // -1 once closed
  std::string buffer_;
};

}  // namespace tw::summary

#endif  // TENSORWEAVE_SRC_SUMMARY_RECORD_WRITER_H_
