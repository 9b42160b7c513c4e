// Reads the Events of one event file back (tensorweave/summary.h writes them): for tests
// and for tools that plot a run. Every record's CRCs are checked (record_reader.h).
//
//   auto reader = summary::EventFileReader::Open(path);
//   while (true) {
//     auto event = (*reader)->Next();
//     if (IsOutOfRange(event.status())) break;       // the end
//     if (!event.ok()) return event.status();        // DataLoss naming file and offset
//   }
//
// Owned by one user; not thread-safe.
#ifndef TENSORWEAVE_SRC_SUMMARY_EVENT_FILE_READER_H_
#define TENSORWEAVE_SRC_SUMMARY_EVENT_FILE_READER_H_

#include <memory>
#include <string>
#include <vector>

#include "src/io/record_reader.h"
#include "tensorweave/protobuf/event.pb.h"
#include "tensorweave/status.h"

namespace tw::summary {

class EventFileReader {
 public:
  // Errors as io::RecordReader::Open.
  static StatusOr<std::unique_ptr<EventFileReader>> Open(const std::string& path);

  // The next Event. OutOfRange after the last; DataLoss naming the file and the record's
  // byte offset for a torn or changed record, or a record that is not an Event.
  StatusOr<proto::Event> Next();

 private:
  explicit EventFileReader(std::unique_ptr<io::RecordReader> records)
      : records_(std::move(records)) {}
  std::unique_ptr<io::RecordReader> records_;
};

// The event files ("*tfevents*") directly in `logdir`, sorted by name (so by creation
// second). NotFound naming the directory when it does not exist.
StatusOr<std::vector<std::string>> ListEventFiles(const std::string& logdir);

}  // namespace tw::summary

#endif  // TENSORWEAVE_SRC_SUMMARY_EVENT_FILE_READER_H_
