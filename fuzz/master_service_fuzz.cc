// Fuzzes the master service in process (src/distributed/master.h) with structured requests:
// a master on the worker task of a cluster of in-process workers (ps:0 and worker:0) and,
// for half the inputs, a task that is down (ps:1 answers every call Unavailable), driven by
// a sequence of calls of every method (CreateSession, ExtendSession, RunStep, IsPrepared,
// CloseSession, ListDevices, Reset, CloseAllSessions, Stop) with graphs of registered ops
// (random attributes, inputs and placement, resources of the wrong kind, forged resource
// handles), feeds, fetches and targets drawn from the session's graph, device filters,
// timeouts and client cancellations. Any request may fail, but none may crash the task, and
// every call must end once the master is stopped and the clients' cancellations fired. The master
// and its workers are made per input; devices (and their thread pools) live for the process, their
// resources are cleared after each input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>

#include "fuzz/service_fuzz_util.h"
#include "src/distributed/master.h"
#include "src/distributed/worker.h"
#include "src/framework/file_access.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/device_name.h"
#include "testing/in_process_cluster.h"

namespace tw::fuzz {
namespace {

constexpr int kMaxCalls = 16;
// Every step carries a timeout of at most this, so that a step that waits (a dequeue on an
// empty queue) ends by itself.
constexpr int64_t kMaxStepMs = 40;
const char kDownTask[] = "/job:ps/replica:0/task:1";

FuzzEnv* env = nullptr;

struct StepCall {
  RunStepArgs args;
  RunStepResult result;
};

// What the fuzzer knows of a session it created: the outputs and nodes of its graph.
struct SessionInfo {
  std::vector<std::pair<std::string, DataType>> outputs;
  std::vector<std::string> nodes;
  int extensions = 0;
};

class MasterFuzz {
 public:
  explicit MasterFuzz(FuzzedDataProvider& fdp) : fdp_(fdp) {
    MasterOptions options;
    options.local_device = env->devices[1]->name();
    for (auto& d : env->devices) {
      workers_.push_back(std::make_unique<Worker>(d.get(), &cache_));
      cache_.workers[DeviceName::TaskOf(d->name())] = workers_.back().get();
      options.tasks.push_back(DeviceName::TaskOf(d->name()));
    }
    // Half the inputs have a task that is down: sessions must filter it out.
    if (fdp_.ConsumeBool()) {
      cache_.workers[kDownTask] = down_.get();
      options.tasks.push_back(kDownTask);
    }
    options.wait_for_cluster = absl::Milliseconds(5);
    master_ = std::make_unique<Master>(std::move(options), &cache_);
  }

  ~MasterFuzz() {
    // Stopping ends the waits for the cluster and closes the sessions, which cancels their
    // steps: then every call must end.
    master_->Stop();
    for (auto& cm : cms_) cm->StartCancel();
    calls_.WaitAllOrDie(absl::Seconds(5));
    master_.reset();
    workers_.clear();
  }

  void Run() {
    for (int i = 0; i < kMaxCalls && fdp_.remaining_bytes() > 0; ++i) {
      TakeCreated();
      switch (fdp_.ConsumeIntegralInRange(0, 12)) {
        case 0:
        case 1:
          CreateSession();
          break;
        case 2:
          ExtendSession();
          break;
        case 3:
        case 4:
        case 5:
          RunStep();
          break;
        case 6:
          IsPrepared();
          break;
        case 7:
          CloseSession();
          break;
        case 8:
          ListDevices();
          break;
        case 9:
          Reset();
          break;
        case 10:
          if (fdp_.ConsumeIntegralInRange(0, 3) == 0) master_->CloseAllSessions();
          break;
        case 11:
          if (fdp_.ConsumeIntegralInRange(0, 7) == 0) master_->Stop();
          (void)master_->PendingCreates();
          break;
        default:
          if (!cms_.empty() && fdp_.ConsumeBool()) {
            cms_[fdp_.ConsumeIntegralInRange<size_t>(0, cms_.size() - 1)]->StartCancel();
          } else {
            (void)calls_.WaitAll(absl::Milliseconds(fdp_.ConsumeIntegralInRange(0, 20)));
          }
          break;
      }
    }
  }

 private:
  GraphOptions Options(const std::string& prefix) {
    GraphOptions options;
    options.devices = env->fuzz_devices;
    options.place_on = {"",
                        "/job:ps/task:0",
                        "/job:worker/task:0",
                        "/job:ps",
                        "/job:ps/replica:0/task:0/device:CPU:0",
                        kDownTask};
    options.name_prefix = prefix;
    options.checkpoint_dir = env->dir;
    options.max_nodes = 8;
    return options;
  }

  std::string Handle() {
    if (sessions_.empty() || fdp_.ConsumeIntegralInRange(0, 15) == 0) {
      return fdp_.ConsumeRandomLengthString(20);
    }
    auto it = sessions_.begin();
    std::advance(it, fdp_.ConsumeIntegralInRange<size_t>(0, sessions_.size() - 1));
    return it->first;
  }

  // A client's cancellation: none, one cancelled already, or one a later action (or the
  // end of the input) cancels.
  std::shared_ptr<CancellationManager> MaybeCm() {
    switch (fdp_.ConsumeIntegralInRange(0, 5)) {
      case 0:
        return nullptr;
      case 1: {
        auto cm = std::make_shared<CancellationManager>();
        cm->StartCancel();
        return cm;
      }
      default:
        cms_.push_back(std::make_shared<CancellationManager>());
        return cms_.back();
    }
  }

  // Sessions whose creation has ended well since the last action.
  void TakeCreated() {
    absl::MutexLock lock(&created_mu_);
    for (auto& [handle, info] : created_) sessions_[handle] = std::move(info);
    created_.clear();
  }

  void CreateSession() {
    struct Call {
      proto::CreateSessionRequest req;
      proto::CreateSessionResponse resp;
      SessionInfo info;
    };
    auto call = std::make_shared<Call>();
    proto::CreateSessionRequest& req = call->req;
    FuzzGraph g = FuzzGraphDef(fdp_, Options("n"));
    *req.mutable_graph_def() = g.graph;
    call->info = {g.outputs, g.node_names, 0};
    const int filters = fdp_.ConsumeIntegralInRange(0, 2);
    for (int i = 0; i < filters; ++i) {
      req.add_device_filters(
          PickString(fdp_, {"/job:ps/task:0", "/job:worker", "/job:ps", "/job:worker/task:0"}));
    }
    req.set_wait_for_cluster_ms(fdp_.ConsumeIntegralInRange(0, 10));
    req.set_isolate_session(fdp_.ConsumeIntegralInRange(0, 3) == 0);
    std::shared_ptr<CancellationManager> cm = MaybeCm();
    master_->CreateSessionAsync(
        &call->req, &call->resp, cm.get(),
        calls_.Done("CreateSession " + req.ShortDebugString(), [this, call, cm](const Status& s) {
          if (!s.ok()) return;
          absl::MutexLock lock(&created_mu_);
          created_.emplace_back(call->resp.session_handle(), std::move(call->info));
        }));
  }

  void ExtendSession() {
    proto::ExtendSessionRequest req;
    req.set_session_handle(Handle());
    auto it = sessions_.find(req.session_handle());
    GraphOptions options =
        Options(it == sessions_.end() ? "x" : "e" + std::to_string(it->second.extensions++) + "_");
    if (it != sessions_.end()) options.existing_outputs = it->second.outputs;
    FuzzGraph g = FuzzGraphDef(fdp_, options);
    *req.mutable_graph_def() = g.graph;
    Status s = master_->ExtendSession(req);
    Note("ExtendSession " + req.ShortDebugString(), s);
    if (s.ok() && it != sessions_.end()) {
      it->second.outputs.insert(it->second.outputs.end(), g.outputs.begin(), g.outputs.end());
      it->second.nodes.insert(it->second.nodes.end(), g.node_names.begin(), g.node_names.end());
    }
  }

  // Feeds, fetches and targets from the session's graph, now and then names of nothing.
  std::shared_ptr<StepCall> MakeStep() {
    auto call = std::make_shared<StepCall>();
    proto::RunStepRequest& p = call->args.proto;
    p.set_session_handle(Handle());
    p.set_timeout_ms(fdp_.ConsumeIntegralInRange<int64_t>(1, kMaxStepMs));
    auto it = sessions_.find(p.session_handle());
    static const SessionInfo kNone;
    const SessionInfo& info = it == sessions_.end() ? kNone : it->second;
    auto name = [&](const std::vector<std::string>& pool) {
      if (pool.empty() || fdp_.ConsumeIntegralInRange(0, 15) == 0) {
        return PickString(fdp_, {"n0", "n0:0", "n0:1", "nope:0", ":0", "n0:-1"});
      }
      return pool[fdp_.ConsumeIntegralInRange<size_t>(0, pool.size() - 1)];
    };
    std::vector<std::string> outputs, nodes = info.nodes;
    for (const auto& o : info.outputs) outputs.push_back(o.first);
    const int feeds = fdp_.ConsumeIntegralInRange(0, 2);
    for (int i = 0; i < feeds; ++i) {
      DataType t = FuzzType(fdp_);
      std::string feed = name(outputs);
      for (const auto& o : info.outputs) {
        if (o.first == feed && fdp_.ConsumeIntegralInRange(0, 7) != 0) t = o.second;
      }
      call->args.feed.push_back({feed, FuzzTensor(fdp_, t, env->fuzz_devices)});
    }
    const int fetches = fdp_.ConsumeIntegralInRange(0, 3);
    for (int i = 0; i < fetches; ++i) p.add_fetch(name(outputs));
    const int targets = fdp_.ConsumeIntegralInRange(0, 2);
    for (int i = 0; i < targets; ++i) p.add_target(name(nodes));
    return call;
  }

  void RunStep() {
    std::shared_ptr<StepCall> call = MakeStep();
    std::shared_ptr<CancellationManager> cm = MaybeCm();
    master_->RunStepAsync(
        &call->args, &call->result, cm.get(),
        calls_.Done("RunStep " + call->args.proto.ShortDebugString(), [call, cm](const Status& s) {
          if (s.ok() &&
              call->result.tensor.size() != static_cast<size_t>(call->args.proto.fetch_size())) {
            std::abort();  // one tensor per fetch
          }
        }));
  }

  void IsPrepared() {
    std::shared_ptr<StepCall> call = MakeStep();
    (void)master_->IsPrepared(call->args);
  }

  void CloseSession() {
    proto::CloseSessionRequest req;
    req.set_session_handle(Handle());
    // Closing a session the master made is always fine (again, or after a reset, too); a
    // handle it never issued is Aborted, as TF's master answers.
    const bool made_here = sessions_.contains(req.session_handle());
    const Status s = master_->CloseSession(req);
    if (!s.ok() && (made_here || !IsAborted(s))) std::abort();
    sessions_.erase(req.session_handle());
  }

  void ListDevices() {
    proto::ListDevicesRequest req;
    req.set_session_handle(Handle());
    proto::ListDevicesResponse resp;
    (void)master_->ListDevices(req, &resp);
  }

  void Reset() {
    proto::ResetRequest req;
    const int n = fdp_.ConsumeIntegralInRange(0, 2);
    for (int i = 0; i < n; ++i) req.add_container(PickString(fdp_, Containers()));
    (void)master_->Reset(req);
    sessions_.clear();  // Reset closes every session
  }

  FuzzedDataProvider& fdp_;
  MapWorkerCache cache_;
  // A task that is down: every call fails as a lost peer's would.
  const std::unique_ptr<WorkerInterface> down_ = testing::NewUnreachableWorker();
  // Outlive the master and workers, which complete calls into them.
  CallTracker calls_;
  std::vector<std::shared_ptr<CancellationManager>> cms_;
  absl::Mutex created_mu_;
  std::vector<std::pair<std::string, SessionInfo>> created_ ABSL_GUARDED_BY(created_mu_);
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<Master> master_;
  std::map<std::string, SessionInfo> sessions_;
};

}  // namespace
}  // namespace tw::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tw::fuzz::env = tw::fuzz::FuzzEnv::Create();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tw::fuzz;
  FuzzedDataProvider fdp(data, size);
  {
    MasterFuzz fuzz(fdp);
    fuzz.Run();
  }
  env->ClearResources();
  return 0;
}
