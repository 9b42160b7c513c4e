// Graph-building functions for TF 1.x's queue-based readers. A reader takes file names from
// a string queue (ops::FIFOQueue of DT_STRING, filled by a producer) and gives one record
// at a time; when a file ends it takes the next name, and once the queue is closed and
// empty a read fails with OutOfRange, which ends an input epoch. Reads that wait for a
// name hold no thread. Files are checked against the task's allowed directories
// (src/framework/file_access.h): PermissionDenied naming the file otherwise.
//
//   auto files = ops::FIFOQueue(root, {DT_STRING});
//   auto reader = ops::TFRecordReader(root);
//   auto record = ops::ReaderRead(root, reader, files);   // record.key, record.value
#ifndef TENSORWEAVE_OPS_READER_OPS_H_
#define TENSORWEAVE_OPS_READER_OPS_H_

#include <string>

#include "tensorweave/ops/queue_ops.h"
#include "tensorweave/scope.h"

namespace tw::ops {

// A reader handle (a DT_RESOURCE tensor).
struct Reader {
  Output handle;
  Operation op() const { return handle.op(); }
};

struct ReaderOptions {
  std::string container;    // as FIFOQueueOptions::container
  std::string shared_name;  // "": private to the session
};

// Records of TFRecord files; compression_type "", "ZLIB" or "GZIP". Keys "<file>:<offset>".
Reader TFRecordReader(const Scope& scope, const std::string& compression_type = "",
                      const ReaderOptions& options = {});
// Lines of text files, without their newline; keys "<file>:<line number>" from 1.
Reader TextLineReader(const Scope& scope, int64_t skip_header_lines = 0,
                      const ReaderOptions& options = {});

struct FixedLengthRecordReaderOptions {
  int64_t header_bytes = 0;
  int64_t footer_bytes = 0;
  int64_t hop_bytes = 0;  // 0: records follow each other; else record i starts at i * hop
  std::string encoding;   // "", "ZLIB" or "GZIP": the whole file is compressed
  ReaderOptions reader;
};
// Records of record_bytes each between a header and a footer; keys "<file>:<record>" from 0.
Reader FixedLengthRecordReader(const Scope& scope, int64_t record_bytes,
                               const FixedLengthRecordReaderOptions& options = {});
// Each file whole, keyed by its name.
Reader WholeFileReader(const Scope& scope, const ReaderOptions& options = {});

struct ReadResult {
  Output key, value;  // scalars (ReaderRead) or vectors (ReaderReadUpTo)
};
ReadResult ReaderRead(const Scope& scope, const Reader& reader, const Queue& queue);
// Between 1 and num_records (an int64 scalar) records of one file.
ReadResult ReaderReadUpTo(const Scope& scope, const Reader& reader, const Queue& queue,
                          Input num_records);
Output ReaderNumRecordsProduced(const Scope& scope, const Reader& reader);
Output ReaderNumWorkUnitsCompleted(const Scope& scope, const Reader& reader);
// Forgets the current file and zeroes the counts; FailedPrecondition while a read waits.
Operation ReaderReset(const Scope& scope, const Reader& reader);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_READER_OPS_H_
