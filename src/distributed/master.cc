#include "src/distributed/master.h"

#include <random>
#include <set>

#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "src/base/logging.h"
#include "src/base/strings.h"
#include "src/core/tensor_coding.h"
#include "src/distributed/client_terminated.h"
#include "src/graph/graph.h"
#include "src/graph/partition.h"
#include "src/graph/placer.h"
#include "tensorweave/device_name.h"

namespace tw {
namespace {

uint64_t Random64() {
  static std::mt19937_64* rng = new std::mt19937_64(std::random_device{}());
  static absl::Mutex* mu = new absl::Mutex();
  absl::MutexLock lock(mu);
  return (*rng)();
}

// Starts an asynchronous worker call and waits for it.
template <typename Start>
Status CallAndWait(Start&& start) {
  absl::Notification done;
  Status result;
  start([&](const Status& s) {
    result = s;
    done.Notify();
  });
  done.WaitForNotification();
  return result;
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

// One session of a master: its graph, the cluster's devices it may use, and an executable
// (registered partitions) per step signature. Thread-safe.
class MasterSession {
 public:
  MasterSession(std::string handle, const MasterOptions& options, WorkerCache* workers,
                std::vector<proto::DeviceAttributes> devices)
      : handle_(std::move(handle)),
        options_(options),
        workers_(workers),
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
        return errors::InvalidArgument("Duplicate node name in graph: '", n.name(), "'");
      }
      *merged.add_node() = n;
    }
    TW_RETURN_IF_ERROR(Graph::Create(merged).status());
    for (const proto::NodeDef& n : graph.node()) names_.insert(n.name());
    graph_ = std::move(merged);
    return OkStatus();
  }

  Status Run(const proto::RunStepRequest& request, proto::RunStepResponse* response);

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
  };

  uint64_t Incarnation(const std::string& device) const {
    for (const auto& d : devices_) {
      if (d.name() == device) return d.incarnation();
    }
    return 0;
  }

  StatusOr<std::shared_ptr<const Executable>> GetExecutable(const proto::RunStepRequest& request);

  const std::string handle_;
  const MasterOptions& options_;
  WorkerCache* const workers_;
  const std::vector<proto::DeviceAttributes> devices_;

  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  proto::GraphDef graph_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> names_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const Executable>> executables_ ABSL_GUARDED_BY(mu_);
  std::set<std::shared_ptr<CancellationManager>> active_ ABSL_GUARDED_BY(mu_);
};

StatusOr<std::shared_ptr<const MasterSession::Executable>> MasterSession::GetExecutable(
    const proto::RunStepRequest& request) {
  std::vector<std::string> feeds, fetches(request.fetch().begin(), request.fetch().end()),
      targets(request.target().begin(), request.target().end());
  for (const auto& f : request.feed()) feeds.push_back(f.name());
  const std::string key = absl::StrJoin(feeds, ",") + "|" + absl::StrJoin(fetches, ",") + "|" +
                          absl::StrJoin(targets, ",");
  proto::GraphDef graph;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::Aborted("Session ", handle_, " is closed");
    if (auto it = executables_.find(key); it != executables_.end()) return it->second;
    graph = graph_;
  }
  TW_ASSIGN_OR_RETURN(proto::GraphDef step, PruneForStep(graph, feeds, fetches, targets));
  std::vector<std::string> device_names;
  for (const auto& d : devices_) device_names.push_back(d.name());
  TW_RETURN_IF_ERROR(PlaceGraph(device_names, options_.local_device, &step));
  auto incarnation = [this](const std::string& d) { return Incarnation(d); };
  auto e = std::make_shared<Executable>();
  TW_ASSIGN_OR_RETURN(
      e->keys, MakeClientTerminated(feeds, fetches, options_.local_device, incarnation, &step));
  TW_ASSIGN_OR_RETURN(auto parts, PartitionGraph(step, {.incarnation = incarnation}));
  for (auto& [device, part] : parts) {
    const std::string task = TaskOfDevice(device);
    TW_ASSIGN_OR_RETURN(WorkerInterface * worker, workers_->GetWorker(task));
    proto::RegisterGraphRequest reg;
    reg.set_session_handle(handle_);
    *reg.mutable_graph_def() = std::move(part);
    proto::RegisterGraphResponse registered;
    Status s = CallAndWait([&](auto done) { worker->RegisterGraphAsync(&reg, &registered, done); });
    if (!s.ok()) return errors::Annotate(s, "From " + task + ": ");
    e->parts.push_back({device, worker, registered.graph_handle()});
  }
  absl::MutexLock lock(&mu_);
  return executables_.emplace(key, std::move(e)).first->second;
}

Status MasterSession::Run(const proto::RunStepRequest& request, proto::RunStepResponse* response) {
  TW_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> e, GetExecutable(request));
  const int64_t step_id = static_cast<int64_t>(Random64() & ((uint64_t{1} << 56) - 1));
  const size_t n = e->parts.size();
  std::vector<proto::RunGraphRequest> requests(n);
  std::vector<proto::RunGraphResponse> responses(n);
  std::map<std::string, size_t> by_device;
  for (size_t i = 0; i < n; ++i) {
    requests[i].set_session_handle(handle_);
    requests[i].set_graph_handle(e->parts[i].graph_handle);
    requests[i].set_step_id(step_id);
    requests[i].set_timeout_ms(request.timeout_ms());
    by_device[e->parts[i].device] = i;
  }
  for (int i = 0; i < request.feed_size(); ++i) {
    auto it = by_device.find(e->keys.feed_devices[i]);
    if (it == by_device.end()) continue;  // a feed nothing in this step reads
    proto::NamedTensorProto* send = requests[it->second].add_send();
    send->set_name(e->keys.feed_keys[i]);
    *send->mutable_tensor() = request.feed(i).tensor();
  }
  for (int i = 0; i < request.fetch_size(); ++i) {
    requests[by_device.at(e->keys.fetch_devices[i])].add_recv_key(e->keys.fetch_keys[i]);
  }

  auto cm = std::make_shared<CancellationManager>();
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::Aborted("Session ", handle_, " is closed");
    active_.insert(cm);
  }
  absl::Mutex done_mu;
  size_t pending = n;
  Status root_cause, follow_on;
  for (size_t i = 0; i < n; ++i) {
    const std::string task = TaskOfDevice(e->parts[i].device);
    e->parts[i].worker->RunGraphAsync(
        &requests[i], &responses[i], cm.get(), [&, task](const Status& s) {
          if (!s.ok()) cm->StartCancel();  // the first real error stops the other tasks
          absl::MutexLock lock(&done_mu);
          if (!s.ok()) {
            Status& slot = IsCancelled(s) ? follow_on : root_cause;
            if (slot.ok()) {
              slot = FromAbsl(s.message()).starts_with("From ")
                         ? s
                         : errors::Annotate(s, "From " + task + ": ");
            }
          }
          --pending;
        });
  }
  bool timed_out = false;
  {
    absl::MutexLock lock(&done_mu);
    auto all_done = [&pending]() { return pending == 0; };
    if (request.timeout_ms() > 0 &&
        !done_mu.AwaitWithTimeout(absl::Condition(&all_done),
                                  absl::Milliseconds(request.timeout_ms()))) {
      timed_out = true;
      done_mu.Unlock();
      cm->StartCancel();  // cancels the RunGraph calls, which cancel their steps
      done_mu.Lock();
    }
    done_mu.Await(absl::Condition(&all_done));
  }
  bool closed = false;
  {
    absl::MutexLock lock(&mu_);
    active_.erase(cm);
    closed = closed_;
  }
  // Tell every task the step is over (its tensors and rendezvous go away); nobody waits.
  for (const Partition& p : e->parts) {
    auto req = std::make_shared<proto::CleanupGraphRequest>();
    auto resp = std::make_shared<proto::CleanupGraphResponse>();
    req->set_step_id(step_id);
    p.worker->CleanupGraphAsync(req.get(), resp.get(), [req, resp](const Status&) {});
  }
  if (timed_out) {
    return errors::DeadlineExceeded("Timed out waiting for the step to finish after ",
                                    request.timeout_ms(), " ms");
  }
  TW_RETURN_IF_ERROR(root_cause);
  if (!follow_on.ok()) {
    if (closed)
      return errors::Cancelled("Step was cancelled by an explicit call to Session::Close()");
    return follow_on;
  }
  for (int i = 0; i < request.fetch_size(); ++i) {
    const auto& reply = responses[by_device.at(e->keys.fetch_devices[i])];
    bool found = false;
    for (const auto& t : reply.recv()) {
      if (t.name() == e->keys.fetch_keys[i]) {
        proto::NamedTensorProto* out = response->add_tensor();
        out->set_name(request.fetch(i));
        *out->mutable_tensor() = t.tensor();
        found = true;
        break;
      }
    }
    if (!found) return errors::Internal("fetch ", request.fetch(i), " missing from the reply");
  }
  return OkStatus();
}

Master::Master(MasterOptions options, WorkerCache* workers)
    : options_(std::move(options)), workers_(workers) {}

Master::~Master() { CloseAllSessions(); }

void Master::CloseAllSessions() {
  std::map<std::string, std::shared_ptr<MasterSession>> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  for (auto& [h, s] : sessions) s->Close();
}

StatusOr<std::shared_ptr<MasterSession>> Master::FindSession(const std::string& handle) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    return errors::Aborted("Session ", handle,
                           " is not found; the master may have restarted or closed it");
  }
  return it->second;
}

Status Master::CreateSession(const proto::CreateSessionRequest& request,
                             proto::CreateSessionResponse* response) {
  TW_RETURN_IF_ERROR(Graph::Create(request.graph_def()).status());
  const std::vector<std::string> filters(request.device_filters().begin(),
                                         request.device_filters().end());
  std::set<std::string> waiting;
  for (const std::string& task : options_.tasks) {
    if (task == TaskOfDevice(options_.local_device) || TaskPassesFilters(task, filters)) {
      waiting.insert(task);
    }
  }
  const absl::Duration wait = request.wait_for_cluster_ms() > 0
                                  ? absl::Milliseconds(request.wait_for_cluster_ms())
                                  : options_.wait_for_cluster;
  const absl::Time deadline = absl::Now() + wait;
  absl::Time next_log = absl::Now() + options_.wait_log_interval;
  absl::Duration backoff = absl::Milliseconds(50);
  std::vector<proto::DeviceAttributes> devices;
  while (true) {
    for (auto it = waiting.begin(); it != waiting.end();) {
      auto worker = workers_->GetWorker(*it);
      if (!worker.ok()) return worker.status();
      proto::GetStatusRequest req;
      proto::GetStatusResponse resp;
      Status s = CallAndWait([&](auto done) { (*worker)->GetStatusAsync(&req, &resp, done); });
      if (s.ok()) {
        devices.insert(devices.end(), resp.device().begin(), resp.device().end());
        it = waiting.erase(it);
      } else {
        ++it;
      }
    }
    if (waiting.empty()) break;
    const std::string names =
        absl::StrJoin(std::vector<std::string>(waiting.begin(), waiting.end()), ", ");
    if (absl::Now() >= deadline) {
      return errors::Unavailable("CreateSession gave up after ", absl::FormatDuration(wait),
                                 " waiting for ", names);
    }
    if (absl::Now() >= next_log) {
      Log().info("CreateSession still waiting for response from {}", names);
      next_log = absl::Now() + options_.wait_log_interval;
    }
    absl::SleepFor(std::min(backoff, deadline - absl::Now()));
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
  char handle[17];
  std::snprintf(handle, sizeof(handle), "%016llx", static_cast<unsigned long long>(Random64()));
  auto session = std::make_shared<MasterSession>(handle, options_, workers_, std::move(devices));
  TW_RETURN_IF_ERROR(session->Extend(request.graph_def()));
  {
    absl::MutexLock lock(&mu_);
    sessions_[handle] = session;
  }
  response->set_session_handle(handle);
  return OkStatus();
}

Status Master::ExtendSession(const proto::ExtendSessionRequest& request) {
  TW_ASSIGN_OR_RETURN(auto session, FindSession(request.session_handle()));
  return session->Extend(request.graph_def());
}

Status Master::RunStep(const proto::RunStepRequest& request, proto::RunStepResponse* response) {
  TW_ASSIGN_OR_RETURN(auto session, FindSession(request.session_handle()));
  return session->Run(request, response);
}

Status Master::CloseSession(const proto::CloseSessionRequest& request) {
  std::shared_ptr<MasterSession> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(request.session_handle());
    if (it == sessions_.end()) return OkStatus();  // closing twice is fine
    session = std::move(it->second);
    sessions_.erase(it);
  }
  session->Close();
  return OkStatus();
}

Status Master::ListDevices(const proto::ListDevicesRequest& request,
                           proto::ListDevicesResponse* response) {
  TW_ASSIGN_OR_RETURN(auto session, FindSession(request.session_handle()));
  for (const auto& d : session->devices()) *response->add_device() = d;
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
