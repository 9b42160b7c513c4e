#include "examples/wordcount_state.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"

namespace tw::examples {

SharedState MakeSharedState(const Scope& root) {
  const Scope files = root.WithDevice(kFilesDevice);
  const Scope reduce = root.WithDevice(kReduceDevice);
  return SharedState{
      .names = ops::MakeVariable(files, "wordcount_names", DT_STRING, {-1}),
      .counts = ops::MakeVariable(reduce, "wordcount_counts", DT_INT64, {-1}),
      .bytes = ops::MakeVariable(reduce, "wordcount_bytes", DT_INT64, {-1}),
      .round = ops::MakeVariable(reduce, "wordcount_round", DT_INT64, {}),
      .next_round = ops::MakeVariable(reduce, "wordcount_next_round", DT_INT64, {}),
      .check_ins = ops::FIFOQueue(reduce, {DT_INT32},
                                  {.shapes = {{}}, .shared_name = "wordcount_check_ins"}),
      .done_reports = ops::FIFOQueue(reduce, {DT_INT64},
                                     {.shapes = {{2}}, .shared_name = "wordcount_done_reports"}),
  };
}

ops::Queue RoundQueue(const Scope& root, int64_t round_id) {
  return ops::FIFOQueue(
      root.WithDevice(kFilesDevice), {DT_INT64, DT_STRING},
      {.shapes = {{}, {}}, .shared_name = "wordcount_round_" + std::to_string(round_id)});
}

ops::Queue RoundNews(const Scope& root, int map_index) {
  return ops::FIFOQueue(
      root.WithDevice(kReduceDevice), {DT_INT64},
      {.shapes = {{}}, .shared_name = "wordcount_round_news_" + std::to_string(map_index)});
}

int64_t NextRoundId(int64_t previous) {
  return std::max(previous + 1, absl::ToUnixMicros(absl::Now()));
}

bool IsRetryable(const Status& status) {
  return IsAborted(status) || IsUnavailable(status) || IsFailedPrecondition(status) ||
         IsDeadlineExceeded(status);
}

Status Patience::GaveUp(const Status& last_error) {
  return Status(last_error.code(), "gave up after " + absl::FormatDuration(kLimit) +
                                       " without a successful step; the last error: " +
                                       std::string(last_error.message()));
}

Status ReachPeer(Server* server, const std::string& peer) {
  Scope root = Scope::NewRootScope();
  auto probe =
      ops::Const(root.WithDevice(peer).WithOpName("probe_peer"), Tensor::Scalar<int32_t>(0));
  const absl::Time deadline = absl::Now() + kRestartedWait;
  while (true) {
    // A new session each time: one planned for a peer that restarted meanwhile fails.
    ClientSession session(root, {.target = server->target(), .device_filters = {peer}});
    auto answered = session.Run({}, {probe});
    if (answered.ok()) return OkStatus();
    if (absl::Now() >= deadline) return answered.status();
    absl::SleepFor(absl::Milliseconds(100));  // a failure that came at once: connection refused
  }
}

RemakingSession::RemakingSession(Scope scope, SessionOptions options)
    : scope_(std::move(scope)),
      options_(std::move(options)),
      session_(std::make_shared<ClientSession>(scope_, options_)) {}

RemakingSession::~RemakingSession() { Close(); }

std::shared_ptr<ClientSession> RemakingSession::Current() {
  absl::MutexLock lock(&mu_);
  return session_;
}

StatusOr<std::vector<Tensor>> RemakingSession::Run(const ClientSession::FeedList& feeds,
                                                   const std::vector<Output>& fetches,
                                                   const std::vector<Operation>& targets,
                                                   const RunOptions& options) {
  return Current()->Run(feeds, fetches, targets, options);
}

void RemakingSession::Remake() {
  std::shared_ptr<ClientSession> old;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    old = std::exchange(session_, std::make_shared<ClientSession>(scope_, options_));
  }
  old->Close().IgnoreError();
}

void RemakingSession::Close() {
  std::shared_ptr<ClientSession> current;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    current = session_;
  }
  current->Close().IgnoreError();
}

}  // namespace tw::examples
