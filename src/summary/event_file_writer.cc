// EventFileWriter (tensorweave/summary.h): event files for TensorBoard.
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_format.h"
#include "src/base/errno_status.h"
#include "src/base/logging.h"
#include "src/io/record_writer.h"
#include "tensorweave/summary.h"

namespace tw {
namespace {

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

Status MakeDirectories(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return ErrnoStatus(error.value(), "cannot create directory", dir);
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Create(const std::string& logdir,
                                                                   EventFileWriterOptions options) {
  if (logdir.empty()) return errors::InvalidArgument("EventFileWriter: the logdir is empty");
  if (options.filename_suffix.find('/') != std::string::npos) {
    return errors::InvalidArgument("EventFileWriter: filename_suffix \"", options.filename_suffix,
                                   "\" contains '/'");
  }
  TW_RETURN_IF_ERROR(MakeDirectories(logdir));
  const absl::Time now = absl::Now();
  const std::string base =
      absl::StrFormat("%s/events.out.tfevents.%010d.%s%s", logdir, absl::ToUnixSeconds(now),
                      Hostname(), options.filename_suffix);
  StatusOr<std::unique_ptr<io::RecordWriter>> records = io::RecordWriter::Create(base);
  std::string path = base;
  // Never truncate another writer's file: two writers made in one second get distinct names.
  for (int n = 1; absl::IsAlreadyExists(records.status()) && n < 1000; ++n) {
    path = base + "." + std::to_string(n);
    records = io::RecordWriter::Create(path);
  }
  if (!records.ok()) return records.status();
  std::unique_ptr<EventFileWriter> writer(
      new EventFileWriter(path, *std::move(records), std::move(options)));
  proto::Event version;
  version.set_wall_time(absl::ToDoubleSeconds(now - absl::UnixEpoch()));
  version.set_file_version(kEventFileVersion);
  {
    absl::MutexLock lock(&writer->mu_);
    TW_RETURN_IF_ERROR(writer->WriteLocked(version));
    // Through to the file at once: TensorBoard recognizes the run as soon as it exists.
    TW_RETURN_IF_ERROR(writer->FlushLocked());
  }
  return writer;
}

EventFileWriter::EventFileWriter(std::string path, std::unique_ptr<io::RecordWriter> records,
                                 EventFileWriterOptions options)
    : path_(std::move(path)),
      options_(std::move(options)),
      records_(std::move(records)),
      last_flush_(absl::Now()) {}

EventFileWriter::~EventFileWriter() {
  Status s = Close();
  if (!s.ok()) Log().warn("closing event file {}: {}", path_, s.ToString());
}

Status EventFileWriter::AddSummary(const std::string& serialized_summary, int64_t step) {
  proto::Event event;
  if (!event.mutable_summary()->ParseFromString(serialized_summary)) {
    return errors::InvalidArgument("event file ", path_, ": the summary for step ", step, " (",
                                   serialized_summary.size(),
                                   " bytes) is not a serialized Summary");
  }
  event.set_step(step);
  return AddEvent(std::move(event));
}

Status EventFileWriter::AddScalar(const std::string& tag, float value, int64_t step) {
  proto::Event event;
  proto::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(value);
  event.set_step(step);
  return AddEvent(std::move(event));
}

Status EventFileWriter::AddGraph(const proto::GraphDef& graph, int64_t step) {
  proto::GraphDef portable;
  for (const proto::NodeDef& node : graph.node()) {
    proto::NodeDef* out = portable.add_node();
    out->set_name(node.name());
    out->set_op(node.op());
    *out->mutable_input() = node.input();
    out->set_device(node.device());
  }
  proto::Event event;
  event.set_step(step);
  event.set_graph_def(portable.SerializeAsString());
  return AddEvent(std::move(event));
}

Status EventFileWriter::AddSessionLog(proto::SessionLog::SessionStatus status, int64_t step) {
  proto::Event event;
  event.set_step(step);
  event.mutable_session_log()->set_status(status);
  return AddEvent(std::move(event));
}

Status EventFileWriter::AddEvent(proto::Event event) {
  if (event.wall_time() == 0) {
    event.set_wall_time(absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  }
  absl::MutexLock lock(&mu_);
  if (records_ == nullptr) return errors::FailedPrecondition("event file ", path_, " is closed");
  TW_RETURN_IF_ERROR(WriteLocked(event));
  if (pending_ >= options_.max_queue || absl::Now() - last_flush_ >= options_.flush_secs) {
    return FlushLocked();
  }
  return OkStatus();
}

Status EventFileWriter::WriteLocked(const proto::Event& event) {
  std::string bytes;
  if (!event.SerializeToString(&bytes)) {
    return errors::Internal("event file ", path_, ": cannot serialize an event");
  }
  TW_RETURN_IF_ERROR(records_->Write(bytes));
  ++pending_;
  return OkStatus();
}

Status EventFileWriter::FlushLocked() {
  pending_ = 0;
  last_flush_ = absl::Now();
  return records_->Flush();
}

Status EventFileWriter::Flush() {
  absl::MutexLock lock(&mu_);
  if (records_ == nullptr) return errors::FailedPrecondition("event file ", path_, " is closed");
  return FlushLocked();
}

Status EventFileWriter::Close() {
  absl::MutexLock lock(&mu_);
  if (records_ == nullptr) return OkStatus();
  Status s = records_->Close();
  records_.reset();
  return s;
}

}  // namespace tw
