// Reads TFRecord files (the framing of record_writer.h), checking both CRCs of every
// record. Used by tests and by tools that read event files back; TensorBoard has its own.
//
// Owned by one user; not thread-safe.
#ifndef TENSORWEAVE_SRC_SUMMARY_RECORD_READER_H_
#define TENSORWEAVE_SRC_SUMMARY_RECORD_READER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "tensorweave/status.h"

namespace tw::summary {

class RecordReader {
 public:
  // Reads the whole file at `path` (event files are small: summaries, not data). Errors
  // from errno name the path (src/base/errno_status.h).
  static StatusOr<std::unique_ptr<RecordReader>> Open(const std::string& path);

  // The next record's data. OutOfRange ("end of <path>") after the last record; DataLoss
  // naming the file and the record's byte offset when the record is cut short (the file
  // ends inside it) or a CRC does not match (the bytes were changed). After an error
  // every later call returns the same error: nothing past a bad record is trusted, since
  // its length may be wrong.
  StatusOr<std::string> Next();

  // Byte offset of the next record.
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

 private:
  RecordReader(std::string path, std::string contents)
      : path_(std::move(path)), contents_(std::move(contents)) {}
  Status Corrupt(const std::string& what) const;

  const std::string path_;
  const std::string contents_;
  uint64_t offset_ = 0;
  Status error_;
};

}  // namespace tw::summary

#endif  // TENSORWEAVE_SRC_SUMMARY_RECORD_READER_H_
