#include "src/distributed/master.h"

#include <algorithm>
#include <array>
#include <optional>
#include <random>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/base/call_and_wait.h"
#include "src/base/logging.h"
#include "src/base/metrics.h"
#include "src/base/request_text.h"
#include "src/base/strings.h"
#include "src/base/timer_queue.h"
#include "src/distributed/client_terminated.h"
#include "src/distributed/cluster_wait.h"
#include "src/graph/graph.h"
#include "src/graph/partition.h"
#include "src/graph/placer.h"
#include "src/runtime/step_timeout.h"
#include "tensorweave/device_name.h"

namespace tw {
namespace {

// tw_steps_total{code} and tw_step_seconds: the steps this master ran for its clients
// (src/base/metrics.h). A step that never started (an unknown session) counts, untimed.
void CountStep(const Status& s, absl::Duration took) {
  if (!RecordingMetrics()) return;
  static const auto* by_code = [] {
    auto* counters = new std::array<Counter*, 17>();
    auto& family = Metrics().CounterFamily(
        "tw_steps_total", "Steps run by this task's master, by status code.", {"code"});
    for (int code = 0; code < 17; ++code) {
      (*counters)[code] =
          family.With({absl::StatusCodeToString(static_cast<absl::StatusCode>(code))});
    }
    return counters;
  }();
  static Histogram* seconds =
      Metrics()
          .HistogramFamily("tw_step_seconds", "Time of the steps this task's master ran, seconds.",
                           {}, LatencyBuckets())
          .With({});
  const int code = static_cast<int>(s.code());
  (*by_code)[code >= 0 && code < 17 ? code : 2]->Add(1);
  if (s.ok() || took > absl::ZeroDuration()) seconds->Observe(absl::ToDoubleSeconds(took));
}

// How long a cancelled step's tasks have to confirm (their RunGraph replies) before the
// calls are cancelled on this side. A healthy task confirms in one round trip; the grace
// only bounds how long a hung or unreachable one delays the step's error.
constexpr absl::Duration kCancelGrace = absl::Seconds(2);

uint64_t Random64() {
  static std::mt19937_64* rng = new std::mt19937_64(std::random_device{}());
  static absl::Mutex* mu = new absl::Mutex();
  absl::MutexLock lock(mu);
  return (*rng)();
}

// Identifies a step's executable: its feeds, fetches and targets.
std::string SignatureKey(const RunStepArgs& args) {
  std::string key;
  for (const NamedTensor& f : args.feed) absl::StrAppend(&key, f.name, ",");
  absl::StrAppend(&key, "|", absl::StrJoin(args.proto.fetch(), ","), "|",
                  absl::StrJoin(args.proto.target(), ","));
  return key;
}

bool TaskPassesFilters(const std::string& task, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  auto device = DeviceName::Parse(task);
  if (!device.ok()) return false;
  for (const std::string& f : filters) {
    auto spec = DeviceName::Parse(f);
    if (spec.ok() && spec->IsSatisfiedBy(*device)) return true;
  }
  return false;
}

}  // namespace

// Whether the master still stands, for work that reaches its workers from threads of
// others: a step's cancellation runs where the cancelling happens (a step's timer on the
// TimerQueue, a client's cancellation on a gRPC thread), and may still be calling workers
// when the step has ended and the master stopped. Stop() closes it, which waits for such
// work in progress and refuses later work, so that the workers may go once Stop returns.
// Thread-safe; shared by the master and its sessions, so it outlives both.
class WorkerAccess {
 public:
  // False once closed; otherwise the caller may use the workers until Exit().
  bool Enter() {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    ++inside_;
    return true;
  }
  void Exit() {
    absl::MutexLock lock(&mu_);
    --inside_;
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    mu_.Await(absl::Condition(
        +[](int* inside) { return *inside == 0; }, &inside_));
  }

 private:
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int inside_ ABSL_GUARDED_BY(mu_) = 0;
};

// One session of a master: its graph, the cluster's devices it may use, and an executable
// (registered partitions) per step signature. Thread-safe.
class MasterSession : public std::enable_shared_from_this<MasterSession> {
 public:
  using StatusCallback = std::function<void(const Status&)>;
  MasterSession(std::string handle, const MasterOptions& options, WorkerCache* workers,
                std::shared_ptr<WorkerAccess> access, std::vector<proto::DeviceAttributes> devices,
                bool isolate)
      : isolate_(isolate),
        handle_(std::move(handle)),
        options_(options),
        workers_(workers),
        access_(std::move(access)),
        devices_(std::move(devices)) {}

  ~MasterSession() { Close(); }

  const std::string& handle() const { return handle_; }
  const std::vector<proto::DeviceAttributes>& devices() const { return devices_; }

  Status Extend(const proto::GraphDef& graph) {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::Aborted("Session ", handle_, " is closed");
    proto::GraphDef merged = graph_;
    for (const proto::NodeDef& n : graph.node()) {
      if (names_.count(n.name())) {
        return errors::InvalidArgument("Duplicate node name in graph: '",
                                       QuoteRequestText(n.name()), "'");
      }
      *merged.add_node() = n;
    }
    TW_RETURN_IF_ERROR(Graph::Create(merged).status());
    for (const proto::NodeDef& n : graph.node()) names_.insert(n.name());
    graph_ = std::move(merged);
    return OkStatus();
  }

  // Whether the step's partitions are registered already, so RunAsync will not block.
  bool IsPrepared(const RunStepArgs& args) {
    absl::MutexLock lock(&mu_);
    return closed_ || executables_.count(SignatureKey(args)) > 0;
  }

  // Runs one step; `done` is called once, on any thread, after every partition finished.
  // `client_cm` (may be null) cancels the step.
  void RunAsync(const RunStepArgs* args, RunStepResult* result, CancellationManager* client_cm,
                StatusCallback done);

  // Cancels running steps and forgets the registered graphs.
  void Close() {
    std::vector<std::shared_ptr<CancellationManager>> running;
    std::map<std::string, std::shared_ptr<const Executable>> executables;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return;
      closed_ = true;
      running.assign(active_.begin(), active_.end());
      executables.swap(executables_);
    }
    for (auto& cm : running) cm->StartCancel();
    for (auto& [key, e] : executables) {
      for (const Partition& p : e->parts) {
        auto request = std::make_shared<proto::DeregisterGraphRequest>();
        auto response = std::make_shared<proto::DeregisterGraphResponse>();
        request->set_session_handle(handle_);
        request->set_graph_handle(p.graph_handle);
        p.worker->DeregisterGraphAsync(request.get(), response.get(),
                                       [request, response](const Status&) {});
      }
    }
  }

 private:
  struct Partition {
    std::string device;
    WorkerInterface* worker = nullptr;
    std::string graph_handle;
  };
  struct Executable {
    std::vector<Partition> parts;
    ClientTerminatedKeys keys;
    // Index into `parts` of the partition that reads each feed (-1: none) and produces each
    // fetch, in the request's order.
    std::vector<int> feed_part, fetch_part;
  };
  struct Step;
  // RunAsync's steps, in order. NewStep: the step's state and its RunGraph requests (each
  // feed to the partition that reads it, each fetch a recv key of the one that makes it);
  // its cancellation cancels the partitions (CancelPartitions).
  std::shared_ptr<Step> NewStep(std::shared_ptr<const Executable> executable,
                                const RunStepArgs* args, RunStepResult* result,
                                StatusCallback done);
  // Counts the step as running, so that Close cancels it. False when the session is closed:
  // the step's `done` has then run with Aborted.
  bool Admit(const std::shared_ptr<Step>& step);
  // The client's cancellation (`client_cm`, may be null) cancels the step; a client that
  // cancelled already cancels it at once.
  static void WatchClient(const std::shared_ptr<Step>& step, CancellationManager* client_cm);
  // Cancels the step when its timeout (if any) runs out.
  static void StartTimer(const std::shared_ptr<Step>& step);
  // Sends RunGraph to every partition; each reply goes to OnPartitionDone. A step with no
  // partition finishes at once.
  static void StartPartitions(const std::shared_ptr<Step>& step);
  // The step's cancellation: asks every task of the step to end it (CleanupGraph), whose
  // RunGraph then replies once its partition has stopped; cancels the calls themselves only
  // if that has not happened within kCancelGrace (a task that hangs or cannot be reached).
  static void CancelPartitions(const std::shared_ptr<Step>& step);
  static void OnPartitionDone(const std::shared_ptr<Step>& step, const std::string& task,
                              const Status& s);
  void FinishStep(const std::shared_ptr<Step>& step);

  uint64_t Incarnation(const std::string& device) const {
    for (const auto& d : devices_) {
      if (d.name() == device) return d.incarnation();
    }
    return 0;
  }

  StatusOr<std::shared_ptr<const Executable>> GetExecutable(const RunStepArgs& args);

  const bool isolate_;  // the session's resources are its own on every task
  const std::string handle_;
  const MasterOptions& options_;
  WorkerCache* const workers_;
  const std::shared_ptr<WorkerAccess> access_;
  const std::vector<proto::DeviceAttributes> devices_;

  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  proto::GraphDef graph_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> names_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const Executable>> executables_ ABSL_GUARDED_BY(mu_);
  std::set<std::shared_ptr<CancellationManager>> active_ ABSL_GUARDED_BY(mu_);
};

StatusOr<std::shared_ptr<const MasterSession::Executable>> MasterSession::GetExecutable(
    const RunStepArgs& args) {
  const proto::RunStepRequest& request = args.proto;
  std::vector<std::string> feeds, fetches(request.fetch().begin(), request.fetch().end()),
      targets(request.target().begin(), request.target().end());
  for (const NamedTensor& f : args.feed) feeds.push_back(f.name);
  const std::string key = SignatureKey(args);
  proto::GraphDef graph;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::Aborted("Session ", handle_, " is closed");
    if (auto it = executables_.find(key); it != executables_.end()) return it->second;
    graph = graph_;
  }
  // A tensor fetched more than once is received once: repeated fetches share its key.
  std::vector<std::string> unique_fetches;
  std::vector<size_t> fetch_slot;
  for (const std::string& f : fetches) {
    auto it = std::find(unique_fetches.begin(), unique_fetches.end(), f);
    fetch_slot.push_back(static_cast<size_t>(it - unique_fetches.begin()));
    if (it == unique_fetches.end()) unique_fetches.push_back(f);
  }
  TW_ASSIGN_OR_RETURN(proto::GraphDef step, PruneForStep(graph, feeds, unique_fetches, targets));
  std::vector<std::string> device_names;
  for (const auto& d : devices_) device_names.push_back(d.name());
  TW_RETURN_IF_ERROR(PlaceGraph(device_names, options_.local_device, &step));
  auto incarnation = [this](const std::string& d) { return Incarnation(d); };
  auto e = std::make_shared<Executable>();
  TW_ASSIGN_OR_RETURN(e->keys, MakeClientTerminated(feeds, unique_fetches, options_.local_device,
                                                    incarnation, &step));
  if (unique_fetches.size() != fetches.size()) {
    ClientTerminatedKeys expanded = e->keys;
    expanded.fetch_devices.clear();
    expanded.fetch_keys.clear();
    for (size_t slot : fetch_slot) {
      expanded.fetch_devices.push_back(e->keys.fetch_devices[slot]);
      expanded.fetch_keys.push_back(e->keys.fetch_keys[slot]);
    }
    e->keys = std::move(expanded);
  }
  TW_ASSIGN_OR_RETURN(auto parts, PartitionGraph(step, {.incarnation = incarnation}));
  std::map<std::string, int> part_of_device;
  for (auto& [device, part] : parts) {
    const std::string task = DeviceName::TaskOf(device);
    TW_ASSIGN_OR_RETURN(WorkerInterface * worker, workers_->GetWorker(task));
    proto::RegisterGraphRequest reg;
    reg.set_session_handle(handle_);
    reg.set_isolate_session(isolate_);
    *reg.mutable_graph_def() = std::move(part);
    proto::RegisterGraphResponse registered;
    Status s = CallAndWait([&](auto done) { worker->RegisterGraphAsync(&reg, &registered, done); });
    if (!s.ok()) return errors::Annotate(s, "From " + task + ": ");
    part_of_device[device] = static_cast<int>(e->parts.size());
    e->parts.push_back({device, worker, registered.graph_handle()});
  }
  for (const std::string& device : e->keys.feed_devices) {
    auto it = part_of_device.find(device);
    e->feed_part.push_back(it == part_of_device.end() ? -1 : it->second);
  }
  for (const std::string& device : e->keys.fetch_devices) {
    e->fetch_part.push_back(part_of_device.at(device));
  }
  absl::MutexLock lock(&mu_);
  return executables_.emplace(key, std::move(e)).first->second;
}

// The state of one running step, shared by the RunGraph callbacks and the timeout timer.
struct MasterSession::Step {
  std::shared_ptr<MasterSession> session;  // keeps the session alive while the step runs
  std::shared_ptr<const Executable> executable;
  const RunStepArgs* args = nullptr;
  RunStepResult* result = nullptr;
  StatusCallback done;
  int64_t step_id = 0;
  std::vector<RunGraphArgs> requests;
  std::vector<RunGraphResult> responses;
  // Cancels the step (timeout, Close, another partition's error): see CancelPartitions.
  std::shared_ptr<CancellationManager> cm = std::make_shared<CancellationManager>();
  // Cancels the RunGraph calls themselves; only CancelPartitions' backstop does.
  std::shared_ptr<CancellationManager> calls_cm = std::make_shared<CancellationManager>();
  std::optional<TimerQueue::Id> timer;
  // The step's limit: the request's timeout, else the server's default; 0 for none.
  int64_t timeout_ms = 0;
  // The client's cancellation (it gave up or disconnected), which cancels `cm`; its
  // callback is removed before `done`, with which the client's manager may go.
  CancellationManager* client_cm = nullptr;
  CancellationManager::Token client_token = 0;

  absl::Mutex mu;
  size_t pending ABSL_GUARDED_BY(mu) = 0;  // RunGraph calls that have not replied
  bool timed_out ABSL_GUARDED_BY(mu) = false;
  bool client_cancelled ABSL_GUARDED_BY(mu) = false;
  Status root_cause ABSL_GUARDED_BY(mu), follow_on ABSL_GUARDED_BY(mu);
};

void MasterSession::RunAsync(const RunStepArgs* args, RunStepResult* result,
                             CancellationManager* client_cm, StatusCallback done) {
  auto executable = GetExecutable(*args);
  if (!executable.ok()) {
    done(executable.status());
    return;
  }
  std::shared_ptr<Step> step = NewStep(*std::move(executable), args, result, std::move(done));
  if (!Admit(step)) return;
  WatchClient(step, client_cm);
  StartTimer(step);
  StartPartitions(step);
}

std::shared_ptr<MasterSession::Step> MasterSession::NewStep(
    std::shared_ptr<const Executable> executable, const RunStepArgs* args, RunStepResult* result,
    StatusCallback done) {
  auto step = std::make_shared<Step>();
  step->session = shared_from_this();
  step->executable = std::move(executable);
  step->args = args;
  step->result = result;
  step->done = std::move(done);
  step->step_id = static_cast<int64_t>(Random64() & ((uint64_t{1} << 56) - 1));
  const Executable& e = *step->executable;
  const proto::RunStepRequest& header = args->proto;
  step->timeout_ms = header.timeout_ms();
  if (step->timeout_ms <= 0 && options_.default_step_timeout != absl::InfiniteDuration()) {
    step->timeout_ms =
        std::max<int64_t>(1, absl::ToInt64Milliseconds(options_.default_step_timeout));
  }
  const size_t n = e.parts.size();
  step->requests.resize(n);
  step->responses.resize(n);
  for (size_t i = 0; i < n; ++i) {
    proto::RunGraphRequest& r = step->requests[i].proto;
    r.set_session_handle(handle_);
    r.set_graph_handle(e.parts[i].graph_handle);
    r.set_step_id(step->step_id);
    r.set_timeout_ms(step->timeout_ms);
    step->requests[i].from_this_process = args->from_this_process;
  }
  for (size_t i = 0; i < args->feed.size(); ++i) {
    const int part = e.feed_part[i];
    if (part < 0) continue;  // a feed nothing in this step reads
    step->requests[part].send.push_back({e.keys.feed_keys[i], args->feed[i].tensor});
  }
  for (int i = 0; i < header.fetch_size(); ++i) {
    proto::RunGraphRequest& r = step->requests[e.fetch_part[i]].proto;
    const std::string& key = e.keys.fetch_keys[i];
    if (std::find(r.recv_key().begin(), r.recv_key().end(), key) == r.recv_key().end()) {
      r.add_recv_key(key);
    }
  }
  {
    absl::MutexLock lock(&step->mu);
    step->pending = n;
  }
  // A fresh manager: registering cannot fail.
  std::weak_ptr<Step> weak = step;
  (void)step->cm->RegisterCallback(step->cm->NewToken(), [weak] {
    if (auto s = weak.lock()) CancelPartitions(s);
  });
  return step;
}

bool MasterSession::Admit(const std::shared_ptr<Step>& step) {
  absl::MutexLock lock(&mu_);
  if (closed_) {
    StatusCallback cb = std::move(step->done);
    cb(errors::Aborted("Session ", handle_, " is closed"));
    return false;
  }
  active_.insert(step->cm);
  return true;
}

void MasterSession::WatchClient(const std::shared_ptr<Step>& step, CancellationManager* client_cm) {
  if (client_cm == nullptr) return;
  // A client that gives up ends its step on every task: otherwise a step waiting on a
  // queue would hold its partitions until the session closes.
  std::weak_ptr<Step> weak = step;
  step->client_token = client_cm->NewToken();
  const bool registered = client_cm->RegisterCallback(step->client_token, [weak] {
    if (auto s = weak.lock()) {
      {
        absl::MutexLock lock(&s->mu);
        s->client_cancelled = true;
      }
      s->cm->StartCancel();
    }
  });
  if (registered) {
    step->client_cm = client_cm;
    return;
  }
  {
    absl::MutexLock lock(&step->mu);
    step->client_cancelled = true;
  }
  step->cm->StartCancel();
}

void MasterSession::StartTimer(const std::shared_ptr<Step>& step) {
  if (step->timeout_ms <= 0) return;
  // The timer holds only a weak reference: a finished step is not kept alive by it.
  std::weak_ptr<Step> weak = step;
  step->timer =
      TimerQueue::Default()->Schedule(absl::Now() + absl::Milliseconds(step->timeout_ms), [weak] {
        if (auto s = weak.lock()) {
          {
            absl::MutexLock lock(&s->mu);
            s->timed_out = true;
          }
          s->cm->StartCancel();
        }
      });
}

void MasterSession::StartPartitions(const std::shared_ptr<Step>& step) {
  const std::vector<Partition>& parts = step->executable->parts;
  if (parts.empty()) {
    step->session->FinishStep(step);
    return;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const Partition& part = parts[i];
    part.worker->RunGraphAsync(&step->requests[i], &step->responses[i], step->calls_cm.get(),
                               [step, task = DeviceName::TaskOf(part.device)](const Status& s) {
                                 OnPartitionDone(step, task, s);
                               });
  }
}

void MasterSession::CancelPartitions(const std::shared_ptr<Step>& step) {
  // A master that has stopped told every task already (Stop closed its sessions), and its
  // workers may be gone.
  WorkerAccess& access = *step->session->access_;
  if (!access.Enter()) return;
  absl::Cleanup exit = [&access] { access.Exit(); };
  std::set<WorkerInterface*> told;
  for (const Partition& p : step->executable->parts) {
    if (!told.insert(p.worker).second) continue;
    auto req = std::make_shared<proto::CleanupGraphRequest>();
    auto resp = std::make_shared<proto::CleanupGraphResponse>();
    req->set_step_id(step->step_id);
    p.worker->CleanupGraphAsync(req.get(), resp.get(), [req, resp](const Status&) {});
  }
  std::weak_ptr<Step> weak = step;
  TimerQueue::Default()->Schedule(absl::Now() + kCancelGrace, [weak] {
    auto s = weak.lock();
    if (s == nullptr) return;
    {
      absl::MutexLock lock(&s->mu);
      if (s->pending == 0) return;  // every task replied
    }
    Log().warn("step {}: not every task confirmed its cancellation within {}; cancelling the calls",
               s->step_id, absl::FormatDuration(kCancelGrace));
    s->calls_cm->StartCancel();
  });
}

void MasterSession::OnPartitionDone(const std::shared_ptr<Step>& step, const std::string& task,
                                    const Status& s) {
  if (!s.ok()) step->cm->StartCancel();  // the first real error stops the other tasks
  {
    absl::MutexLock lock(&step->mu);
    if (!s.ok()) {
      Status& slot = IsCancelled(s) ? step->follow_on : step->root_cause;
      if (slot.ok()) {
        slot = FromAbsl(s.message()).starts_with("From ")
                   ? s
                   : errors::Annotate(s, "From " + task + ": ");
      }
    }
    if (--step->pending > 0) return;
  }
  step->session->FinishStep(step);
}

void MasterSession::FinishStep(const std::shared_ptr<Step>& step) {
  if (step->timer) TimerQueue::Default()->Cancel(*step->timer);
  if (step->client_cm != nullptr) step->client_cm->DeregisterCallback(step->client_token);
  bool closed = false;
  {
    absl::MutexLock lock(&mu_);
    active_.erase(step->cm);
    closed = closed_;
  }
  // No CleanupGraph: after a successful step every task has forgotten it by itself (its
  // partition ran and peers pulled all it sent), and a failed step was cancelled, which
  // sent CleanupGraph to every task (CancelPartitions).
  const Executable& e = *step->executable;
  StatusCallback done = std::move(step->done);
  const proto::RunStepRequest& header = step->args->proto;
  Status status;
  {
    absl::MutexLock lock(&step->mu);
    if (step->timed_out) {
      status = StepTimedOut(absl::Milliseconds(step->timeout_ms));
    } else if (step->client_cancelled) {
      status = errors::Cancelled("Step was cancelled by the client");
    } else if (!step->root_cause.ok()) {
      status = step->root_cause;
    } else if (!step->follow_on.ok()) {
      status = closed
                   ? errors::Cancelled("Step was cancelled by an explicit call to Session::Close()")
                   : step->follow_on;
    }
  }
  if (!status.ok()) {
    done(status);
    return;
  }
  std::vector<NamedTensor>& out = step->result->tensor;
  out.clear();
  out.reserve(header.fetch_size());
  for (int i = 0; i < header.fetch_size(); ++i) {
    std::vector<NamedTensor>& reply = step->responses[e.fetch_part[i]].recv;
    auto it = std::find_if(reply.begin(), reply.end(),
                           [&](const NamedTensor& t) { return t.name == e.keys.fetch_keys[i]; });
    if (it == reply.end()) {
      done(
          errors::Internal("fetch ", QuoteRequestText(header.fetch(i)), " missing from the reply"));
      return;
    }
    out.push_back({header.fetch(i), it->tensor});
  }
  done(OkStatus());
}

Master::Master(MasterOptions options, WorkerCache* workers)
    : options_(std::move(options)), workers_(workers), access_(std::make_shared<WorkerAccess>()) {}

Master::~Master() { Stop(); }

void Master::Stop() {
  std::map<const void*, std::shared_ptr<ClusterWait>> waits;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    waits.swap(waits_);
  }
  for (auto& [key, wait] : waits)
    wait->Cancel(errors::Cancelled("CreateSession: the server is stopping"));
  CloseAllSessions();
  // Cancellations still running on other threads end before the workers may go.
  access_->Close();
}

size_t Master::PendingCreates() {
  absl::MutexLock lock(&mu_);
  return waits_.size();
}

size_t Master::NumSessions() {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

void Master::CloseAllSessions() {
  std::vector<std::shared_ptr<MasterSession>> sessions;
  {
    absl::MutexLock lock(&mu_);
    while (!sessions_.empty()) {
      sessions.push_back(std::move(sessions_.begin()->second));
      ForgetClosedLocked(sessions_.begin());
    }
  }
  for (auto& s : sessions) s->Close();
}

namespace {

// TensorFlow's words for a handle the master does not know.
std::string SessionNotFound(const std::string& handle) {
  return absl::StrCat("Session ", QuoteRequestText(handle),
                      " is not found. Possibly, this master has restarted.");
}

}  // namespace

StatusOr<std::shared_ptr<MasterSession>> Master::FindSession(const std::string& handle) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) return errors::Aborted(SessionNotFound(handle));
  return it->second;
}

void Master::ForgetClosedLocked(
    std::map<std::string, std::shared_ptr<MasterSession>>::iterator it) {
  closed_handles_.insert(it->first);
  closed_order_.push_back(it->first);
  if (closed_order_.size() > kRememberedClosedSessions) {
    closed_handles_.erase(closed_order_.front());
    closed_order_.pop_front();
  }
  sessions_.erase(it);
}

void Master::CreateSessionAsync(const proto::CreateSessionRequest* request,
                                proto::CreateSessionResponse* response, CancellationManager* cm,
                                StatusCallback done) {
  if (Status s = Graph::Create(request->graph_def()).status(); !s.ok()) {
    done(s);
    return;
  }
  const std::vector<std::string> filters(request->device_filters().begin(),
                                         request->device_filters().end());
  std::set<std::string> tasks;
  for (const std::string& task : options_.tasks) {
    if (task == DeviceName::TaskOf(options_.local_device) || TaskPassesFilters(task, filters)) {
      tasks.insert(task);
    }
  }
  const absl::Duration wait = request->wait_for_cluster_ms() > 0
                                  ? absl::Milliseconds(request->wait_for_cluster_ms())
                                  : options_.wait_for_cluster;
  auto cluster = ClusterWait::Create(workers_, std::move(tasks),
                                     {.wait = wait, .log_interval = options_.wait_log_interval});
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) {
      done(errors::Cancelled("CreateSession: the server is stopping"));
      return;
    }
    waits_[cluster.get()] = cluster;
  }
  // The client's cancellation (it gave up, or disconnected) ends the wait at once.
  const CancellationManager::Token token = cm != nullptr ? cm->NewToken() : 0;
  if (cm != nullptr && !cm->RegisterCallback(token, [cluster] {
        cluster->Cancel(errors::Cancelled("CreateSession was cancelled by the client"));
      })) {
    cluster->Cancel(errors::Cancelled("CreateSession was cancelled by the client"));
  }
  cluster->Run([this, request, response, cm, token, key = cluster.get(),
                done = std::move(done)](StatusOr<std::vector<proto::DeviceAttributes>> devices) {
    if (cm != nullptr) cm->DeregisterCallback(token);
    {
      absl::MutexLock lock(&mu_);
      waits_.erase(key);
    }
    done(devices.ok() ? FinishCreate(*request, *std::move(devices), response) : devices.status());
  });
}

Status Master::FinishCreate(const proto::CreateSessionRequest& request,
                            std::vector<proto::DeviceAttributes> devices,
                            proto::CreateSessionResponse* response) {
  char handle[17];
  std::snprintf(handle, sizeof(handle), "%016llx", static_cast<unsigned long long>(Random64()));
  auto session = std::make_shared<MasterSession>(handle, options_, workers_, access_,
                                                 std::move(devices), request.isolate_session());
  TW_RETURN_IF_ERROR(session->Extend(request.graph_def()));
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return errors::Cancelled("CreateSession: the server is stopping");
    sessions_[handle] = session;
  }
  response->set_session_handle(handle);
  return OkStatus();
}

Status Master::ExtendSession(const proto::ExtendSessionRequest& request) {
  TW_ASSIGN_OR_RETURN(auto session, FindSession(request.session_handle()));
  return session->Extend(request.graph_def());
}

void Master::RunStepAsync(const RunStepArgs* args, RunStepResult* result, CancellationManager* cm,
                          StatusCallback done) {
  auto session = FindSession(args->proto.session_handle());
  if (!session.ok()) {
    CountStep(session.status(), absl::Duration());
    done(session.status());
    return;
  }
  if (!RecordingMetrics()) {
    (*session)->RunAsync(args, result, cm, std::move(done));
    return;
  }
  const absl::Time start = absl::Now();
  (*session)->RunAsync(args, result, cm, [start, done = std::move(done)](const Status& s) {
    CountStep(s, absl::Now() - start);
    done(s);
  });
}

bool Master::IsPrepared(const RunStepArgs& args) {
  auto session = FindSession(args.proto.session_handle());
  return !session.ok() || (*session)->IsPrepared(args);
}

Status Master::CloseSession(const proto::CloseSessionRequest& request) {
  std::shared_ptr<MasterSession> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(request.session_handle());
    if (it == sessions_.end()) {
      // Closing again a session this master closed (twice, or after Reset) is fine.
      if (closed_handles_.count(request.session_handle()) != 0) return OkStatus();
      return errors::Aborted(SessionNotFound(request.session_handle()));
    }
    session = std::move(it->second);
    ForgetClosedLocked(it);
  }
  session->Close();
  return OkStatus();
}

Status Master::ListDevices(const proto::ListDevicesRequest& request,
                           proto::ListDevicesResponse* response) {
  auto session = FindSession(request.session_handle());
  // InvalidArgument, as TensorFlow's master answers ListDevices (RunStep's is Aborted).
  if (!session.ok()) return errors::InvalidArgument(session.status().message());
  for (const auto& d : (*session)->devices()) *response->add_device() = d;
  return OkStatus();
}

Status Master::Reset(const proto::ResetRequest& request) {
  CloseAllSessions();
  for (const std::string& task : options_.tasks) {
    auto worker = workers_->GetWorker(task);
    if (!worker.ok()) continue;
    proto::CleanupAllRequest req;
    *req.mutable_container() = request.container();
    proto::CleanupAllResponse resp;
    Status s = CallAndWait([&](auto done) { (*worker)->CleanupAllAsync(&req, &resp, done); });
    if (!s.ok() && !IsUnavailable(s)) return errors::Annotate(s, "From " + task + ": ");
  }
  return OkStatus();
}

}  // namespace tw
