#include "tensorweave/train/cluster_coordinator.h"

#include <algorithm>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/base/logging.h"
#include "tensorweave/train/session_policy.h"

namespace tw::train {

namespace {

constexpr absl::string_view kGrpcPrefix = "grpc://";

// Whether `s`, from the session on worker `task` ("/job:worker/replica:0/task:1"), says
// that this worker is gone or restarted rather than another task. The master annotates an
// error of another task "From /job:ps/replica:0/task:0: ..."; an unreachable or restarted
// worker gives a recoverable code with no such annotation (its own master is the one that
// is gone) or one naming itself. A worker that stops cleanly closes its sessions: their
// steps end Cancelled by Session::Close() (the coordinator closes its own only when it is
// destroyed, whose errors are not looked at), and a session made meanwhile is refused.
bool IsWorkerFailure(const Status& s, const std::string& task) {
  const absl::string_view message = s.message();
  if (IsCancelled(s)) {
    return absl::StrContains(message, "Session::Close()") ||
           absl::StrContains(message, "the server is stopping");
  }
  if (!IsRecoverable(s)) return false;
  const size_t from = message.find("From /job:");
  if (from == absl::string_view::npos) return true;
  return absl::StartsWith(message.substr(from + 5), task + ":");
}

}  // namespace

bool RemoteValue::IsReady() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

StatusOr<std::vector<Tensor>> RemoteValue::Fetch() const { return Fetch(absl::InfiniteDuration()); }

StatusOr<std::vector<Tensor>> RemoteValue::Fetch(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  if (!mu_.AwaitWithTimeout(absl::Condition(&ready_), timeout)) {
    return errors::DeadlineExceeded("The scheduled function did not run within ",
                                    absl::FormatDuration(timeout));
  }
  if (!status_.ok()) return status_;
  return values_;
}

int RemoteValue::worker() const {
  absl::MutexLock lock(&mu_);
  return worker_;
}

void RemoteValue::Set(int worker, StatusOr<std::vector<Tensor>> result) {
  absl::MutexLock lock(&mu_);
  if (ready_) return;
  ready_ = true;
  worker_ = worker;
  if (result.ok()) {
    values_ = *std::move(result);
  } else {
    status_ = result.status();
  }
}

// A queued function: what a worker runs with its session, and where the result goes.
struct ClusterCoordinator::Closure {
  std::string name;
  std::function<StatusOr<std::vector<Tensor>>(int worker, Session& session)> run;
  std::shared_ptr<RemoteValue> value;
};

// One worker: its session and the thread that runs functions on it. The session and
// `nodes_sent` belong to the thread; `available` and `generation` are read under mu_.
struct ClusterCoordinator::Worker {
  int index = 0;
  std::string task;  // "/job:worker/replica:0/task:1"
  std::unique_ptr<Session> session;
  int nodes_sent = 0;
  int64_t generation = -1;  // session_generation_ the session was made in
  std::thread thread;
};

StatusOr<std::unique_ptr<ClusterCoordinator>> ClusterCoordinator::Create(
    ClusterCoordinatorOptions options) {
  if (options.worker_targets.empty()) {
    return errors::InvalidArgument("ClusterCoordinator needs at least one worker");
  }
  for (size_t i = 0; i < options.worker_targets.size(); ++i) {
    if (!absl::StartsWith(options.worker_targets[i], kGrpcPrefix)) {
      return errors::InvalidArgument("ClusterCoordinator worker_targets[", i, "] \"",
                                     options.worker_targets[i], "\" is not a grpc:// target");
    }
  }
  TW_RETURN_IF_ERROR(options.session.tls.Validate());
  std::unique_ptr<ClusterCoordinator> coordinator(new ClusterCoordinator(std::move(options)));
  for (auto& worker : coordinator->workers_) {
    ClusterCoordinator* self = coordinator.get();
    const int index = worker->index;
    worker->thread = std::thread([self, index] { self->WorkerLoop(index); });
  }
  return coordinator;
}

ClusterCoordinator::ClusterCoordinator(ClusterCoordinatorOptions options)
    : options_(std::move(options)) {
  const int n = num_workers();
  stats_.completed_by_worker.assign(n, 0);
  stats_.worker_available.assign(n, false);
  for (int i = 0; i < n; ++i) {
    auto worker = std::make_unique<Worker>();
    worker->index = i;
    worker->task = absl::StrCat("/job:", options_.worker_job, "/replica:0/task:", i);
    workers_.push_back(std::move(worker));
  }
}

ClusterCoordinator::~ClusterCoordinator() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    FailQueuedLocked(errors::Cancelled("The ClusterCoordinator was destroyed"));
  }
  // Closing a session ends its running step (or a session creation still waiting for the
  // cluster); the thread then sees stopping_. A thread replaces its session only under mu_
  // and not once stopping_ is set, so the sessions are read safely here.
  for (auto& worker : workers_) {
    if (worker->session != nullptr) worker->session->Close().IgnoreError();
  }
  for (auto& worker : workers_) {
    if (worker->thread.joinable()) worker->thread.join();
  }
}

Status ClusterCoordinator::ExtendGraph(const proto::GraphDef& nodes) {
  absl::MutexLock lock(&graph_mu_);
  std::unordered_set<std::string> added;
  for (const proto::NodeDef& node : nodes.node()) {
    if (node_names_.count(node.name()) > 0 || !added.insert(node.name()).second) {
      return errors::InvalidArgument("Duplicate node name in graph: '", node.name(), "'");
    }
  }
  for (const proto::NodeDef& node : nodes.node()) *graph_.add_node() = node;
  node_names_.insert(added.begin(), added.end());
  return OkStatus();
}

StatusOr<std::shared_ptr<RemoteValue>> ClusterCoordinator::Schedule(
    std::shared_ptr<const ScheduledFunction> function, std::vector<Tensor> feeds) {
  if (function == nullptr) return errors::InvalidArgument("Schedule got no function");
  const size_t replicas = function->per_worker.size();
  if (replicas != 1 && replicas != workers_.size()) {
    return errors::InvalidArgument("Function '", function->name, "' has ", replicas,
                                   " replicas for ", workers_.size(), " workers");
  }
  for (const WorkerStep& step : function->per_worker) {
    if (step.feeds.size() != feeds.size()) {
      return errors::InvalidArgument("Function '", function->name, "' takes ", step.feeds.size(),
                                     " inputs, got ", feeds.size());
    }
  }
  auto closure = std::make_unique<Closure>();
  closure->name = function->name;
  closure->value = std::make_shared<RemoteValue>();
  closure->run = [function, feeds = std::move(feeds)](
                     int worker, Session& session) -> StatusOr<std::vector<Tensor>> {
    const WorkerStep& step = function->per_worker[function->per_worker.size() == 1 ? 0 : worker];
    std::vector<std::pair<std::string, Tensor>> fed;
    fed.reserve(feeds.size());
    for (size_t i = 0; i < feeds.size(); ++i) fed.emplace_back(step.feeds[i], feeds[i]);
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session.Run(fed, step.fetches, step.targets, &out));
    return out;
  };
  std::shared_ptr<RemoteValue> value = closure->value;
  TW_RETURN_IF_ERROR(Enqueue(std::move(closure)));
  return value;
}

Status ClusterCoordinator::Enqueue(std::unique_ptr<Closure> closure) {
  absl::MutexLock lock(&mu_);
  TW_RETURN_IF_ERROR(TakePendingErrorLocked());
  TW_RETURN_IF_ERROR(broken_);
  if (stopping_) return errors::Cancelled("The ClusterCoordinator is being destroyed");
  queue_.push_back(std::move(closure));
  ++stats_.scheduled;
  changed_.Signal();
  return OkStatus();
}

Status ClusterCoordinator::Join() {
  absl::MutexLock lock(&mu_);
  while (!(queue_.empty() && running_ == 0) && !stopping_) changed_.Wait(&mu_);
  return TakePendingErrorLocked();
}

StatusOr<bool> ClusterCoordinator::Done() {
  absl::MutexLock lock(&mu_);
  TW_RETURN_IF_ERROR(TakePendingErrorLocked());
  return queue_.empty() && running_ == 0;
}

Status ClusterCoordinator::InitializeModel(const WorkerStep& report, const WorkerStep& initialize) {
  auto closure = std::make_unique<Closure>();
  closure->name = "InitializeModel";
  closure->value = std::make_shared<RemoteValue>();
  closure->run = [report, initialize](int, Session& session) -> StatusOr<std::vector<Tensor>> {
    std::vector<Tensor> missing;
    TW_RETURN_IF_ERROR(session.Run({}, report.fetches, report.targets, &missing));
    const bool ready = std::all_of(missing.begin(), missing.end(),
                                   [](const Tensor& t) { return t.num_elements() == 0; });
    std::vector<Tensor> none;
    if (!ready) TW_RETURN_IF_ERROR(session.Run({}, initialize.fetches, initialize.targets, &none));
    return none;
  };
  std::shared_ptr<RemoteValue> value = closure->value;
  TW_RETURN_IF_ERROR(Enqueue(std::move(closure)));
  Status s = value->Fetch().status();
  if (!s.ok()) {
    absl::MutexLock lock(&mu_);
    // Returned here: Join need not return it again.
    if (pending_error_.message() == s.message()) pending_error_ = OkStatus();
  }
  return s;
}

ClusterCoordinatorStats ClusterCoordinator::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

Status ClusterCoordinator::TakePendingErrorLocked() {
  Status s = pending_error_;
  pending_error_ = OkStatus();
  return s;
}

void ClusterCoordinator::FailQueuedLocked(const Status& cause) {
  for (auto& closure : queue_) {
    closure->value->Set(-1, cause);
    ++stats_.failed;
  }
  queue_.clear();
  changed_.SignalAll();
}

bool ClusterCoordinator::SleepUnlessStopping() {
  absl::MutexLock lock(&mu_);
  const absl::Time until = absl::Now() + options_.worker_retry_interval;
  while (!stopping_ && absl::Now() < until) changed_.WaitWithDeadline(&mu_, until);
  return stopping_;
}

Status ClusterCoordinator::SendNewNodes(Worker& worker) {
  proto::GraphDef delta;
  {
    absl::MutexLock lock(&graph_mu_);
    if (worker.nodes_sent == graph_.node_size() && worker.nodes_sent > 0) return OkStatus();
    for (int i = worker.nodes_sent; i < graph_.node_size(); ++i) *delta.add_node() = graph_.node(i);
    worker.nodes_sent = graph_.node_size();
  }
  Status s = worker.session->Extend(delta);
  if (!s.ok()) worker.nodes_sent -= delta.node_size();
  return s;
}

Status ClusterCoordinator::Connect(Worker& worker) {
  SessionOptions options = options_.session;
  options.target = options_.worker_targets[worker.index];
  options.device_filters = options_.shared_tasks;
  options.device_filters.push_back(
      absl::StrCat("/job:", options_.worker_job, "/task:", worker.index));
  int64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return errors::Cancelled("The ClusterCoordinator is being destroyed");
    generation = session_generation_;
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(options));
  std::unique_ptr<Session> old;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return errors::Cancelled("The ClusterCoordinator is being destroyed");
    old = std::move(worker.session);
    worker.session = std::move(session);
    worker.nodes_sent = 0;
    worker.generation = generation;
  }
  if (old != nullptr) old->Close().IgnoreError();
  // The first Extend creates the master session, which waits for the shared tasks.
  return SendNewNodes(worker);
}

void ClusterCoordinator::WorkerLoop(int index) {
  Worker& worker = *workers_[index];
  bool connected = false;
  bool was_available = false;
  bool reported_down = false;  // logged once per outage, not at every retry
  while (true) {
    if (!connected) {
      Status s = Connect(worker);
      if (!s.ok()) {
        absl::MutexLock lock(&mu_);
        if (stopping_) return;
        if (!IsRecoverable(s) && !IsWorkerFailure(s, worker.task)) {
          // The graph or the options are wrong for good: every function would fail so.
          if (broken_.ok()) broken_ = s;
          FailQueuedLocked(s);
        }
      }
      if (!s.ok()) {
        if (!reported_down) {
          Log().info("ClusterCoordinator: worker {} ({}) is not available, retrying every {}: {}",
                     index, options_.worker_targets[index],
                     absl::FormatDuration(options_.worker_retry_interval), s.ToString());
          reported_down = true;
        }
        if (SleepUnlessStopping()) return;
        continue;
      }
      if (reported_down && was_available) {
        Log().info("ClusterCoordinator: worker {} is back", index);
      }
      reported_down = false;
      connected = true;
      absl::MutexLock lock(&mu_);
      stats_.worker_available[index] = true;
      if (was_available) ++stats_.worker_recoveries;
      was_available = true;
    }
    std::unique_ptr<Closure> closure;
    {
      absl::MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_ && worker.generation == session_generation_) {
        changed_.Wait(&mu_);
      }
      if (stopping_) return;
      if (worker.generation != session_generation_) {  // a ps task was lost: a new session
        connected = false;
        continue;
      }
      closure = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    Status sent = SendNewNodes(worker);
    StatusOr<std::vector<Tensor>> out =
        sent.ok() ? closure->run(index, *worker.session) : StatusOr<std::vector<Tensor>>(sent);
    if (!out.ok() && IsWorkerFailure(out.status(), worker.task)) connected = false;
    Finish(worker, std::move(closure), std::move(out));
  }
}

void ClusterCoordinator::Finish(Worker& worker, std::unique_ptr<Closure> closure,
                                StatusOr<std::vector<Tensor>> out) {
  absl::MutexLock lock(&mu_);
  --running_;
  changed_.SignalAll();
  if (out.ok()) {
    ++stats_.completed;
    ++stats_.completed_by_worker[worker.index];
    closure->value->Set(worker.index, std::move(out));
    return;
  }
  const Status& s = out.status();
  if (!stopping_ && IsWorkerFailure(s, worker.task)) {
    Log().warn(
        "ClusterCoordinator: worker {} failed running '{}' ({}); it runs on another "
        "worker",
        worker.index, closure->name, s.ToString());
    ++stats_.rescheduled;
    ++stats_.worker_failures;
    stats_.worker_available[worker.index] = false;
    queue_.push_front(std::move(closure));  // next to run
    return;
  }
  ++stats_.failed;
  closure->value->Set(worker.index, s);
  if (pending_error_.ok()) pending_error_ = s;
  FailQueuedLocked(errors::Cancelled("Cancelled because the scheduled function '", closure->name,
                                     "' failed: ", s.message()));
  // A recoverable error of another task (a ps task lost or restarted) leaves every
  // session bound to the incarnation that is gone.
  if (IsRecoverable(s)) ++session_generation_;
}

}  // namespace tw::train
