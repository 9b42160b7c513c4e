// EventFileWriter: writes training summaries into a log directory as TensorBoard's event
// files, which `tensorboard --logdir <dir>` reads (docs/summaries.md).
//
//   auto writer = tw::EventFileWriter::Create("/tmp/train");
//   auto values = session.Run({}, {summary});      // e.g. ops::MergeSummary's output
//   (*writer)->AddSummary(values->at(0).scalar<std::string>(), step);
//   (*writer)->Close();
//
// The file is "<logdir>/events.out.tfevents.<seconds, 10 digits>.<hostname><suffix>",
// made when the writer is created, and starts with an Event whose file_version is
// "brain.Event:2". Every Event is one TFRecord record (src/io/record_writer.h); the
// messages have the field numbers of TensorFlow's event.proto and summary.proto
// (tensorweave/protobuf/event.proto, summary.proto).
//
// Events are buffered and reach the file at Flush, at Close, once `max_queue` of them are
// pending, or at the first event added `flush_secs` after the last write. There is no
// background thread: a writer left idle keeps its pending events until one of these.
//
// Thread-safe: any thread may call any method.
#ifndef TENSORWEAVE_SUMMARY_H_
#define TENSORWEAVE_SUMMARY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tensorweave/protobuf/event.pb.h"
#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"

namespace tw {

namespace io {
class RecordWriter;
}  // namespace io

// The version string of the first Event of every event file.
inline constexpr char kEventFileVersion[] = "brain.Event:2";

struct EventFileWriterOptions {
  // Appended to the file name (TensorFlow's filename_suffix), e.g. ".eval"; no '/'.
  std::string filename_suffix;
  // Pending events that make the writer write (TensorFlow's FileWriter default: 10); 1 or
  // less writes every event through.
  int max_queue = 10;
  // Pending events older than this are written with the next event (TensorFlow's
  // default: 120 s).
  absl::Duration flush_secs = absl::Seconds(120);
};

class EventFileWriter {
 public:
  // Creates `logdir` (and its parents) when missing, and the event file in it with its
  // file_version record written through. If a file of that name exists (two writers in
  // one second), ".1", ".2", ... is appended rather than overwriting it. Errors name the
  // directory or file: InvalidArgument for an empty logdir or a suffix with '/',
  // PermissionDenied, NotFound, ResourceExhausted (a full disk) or Internal from errno.
  static StatusOr<std::unique_ptr<EventFileWriter>> Create(const std::string& logdir,
                                                           EventFileWriterOptions options = {});
  // Closes the file (errors are logged: call Close() to see them).
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // Writes `serialized_summary` (a serialized Summary, what the summary ops output) as an
  // Event at `step`, stamped with the current time. InvalidArgument naming the file and
  // step when the bytes are not a Summary.
  Status AddSummary(const std::string& serialized_summary, int64_t step);
  // Writes a Summary with one scalar (simple_value), as the ScalarSummary op would make it,
  // at `step`: for values computed outside the graph (a rate, an evaluation).
  Status AddScalar(const std::string& tag, float value, int64_t step);
  // Writes `graph` for TensorBoard's graph view, at `step`: each node's name, op, inputs and
  // device (the fields NodeDef shares with TensorFlow's); attributes are left out, since
  // tensorweave's AttrValue numbers its fields differently from TensorFlow's.
  Status AddGraph(const proto::GraphDef& graph, int64_t step = 0);
  // Writes a SessionLog event. At a START at step s, TensorBoard discards the events it
  // read earlier with steps from s on: what a restarted run is about to repeat.
  Status AddSessionLog(proto::SessionLog::SessionStatus status, int64_t step);
  // Writes `event`; a zero wall_time is replaced by the current time.
  Status AddEvent(proto::Event event);
  // Writes the pending events to the file.
  Status Flush();
  // Flushes and closes. Later Add* calls fail with FailedPrecondition naming the file;
  // Close again returns OK.
  Status Close();

  // The event file's full path.
  const std::string& path() const { return path_; }

 private:
  EventFileWriter(std::string path, std::unique_ptr<io::RecordWriter> records,
                  EventFileWriterOptions options);
  Status WriteLocked(const proto::Event& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const EventFileWriterOptions options_;
  absl::Mutex mu_;
  std::unique_ptr<io::RecordWriter> records_ ABSL_GUARDED_BY(mu_);  // null once closed
  int pending_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_flush_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SUMMARY_H_
