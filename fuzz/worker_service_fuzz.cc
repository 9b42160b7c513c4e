// Fuzzes the worker service in process (src/distributed/worker.h) with structured requests:
// two tasks' workers (ps and worker) that know each other, driven by a sequence of calls of
// every method (GetStatus, RegisterGraph, DeregisterGraph, RunGraph, RecvTensor,
// CleanupGraph, CleanupAll) with graphs of registered ops (random attributes and inputs,
// _Send/_Recv with right and wrong attributes, resources of the wrong kind, forged resource
// handles), feeds and fetches by rendezvous key, pushes, cancellations and step timeouts.
// Any request may fail, but no request may crash a task, and every call must end once its
// step is cleaned up and its cancellation fired (a call still pending then is reported as a
// hang). Workers are made per input; devices (and their thread pools) live for the process,
// their resources are cleared after each input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <set>

#include "fuzz/service_fuzz_util.h"
#include "src/distributed/worker.h"
#include "src/framework/file_access.h"
#include "src/framework/rendezvous.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/device_name.h"

namespace tw::fuzz {
namespace {

constexpr int kMaxCalls = 24;
// Every RunGraph carries a timeout of at most this, so that a step that waits (a dequeue on
// an empty queue, a _Recv nobody sends) ends by itself.
constexpr int64_t kMaxStepMs = 40;

FuzzEnv* env = nullptr;

// What one asynchronous call needs alive until its `done`.
struct RunGraphCall {
  RunGraphArgs request;
  RunGraphResult response;
};
struct RecvTensorCall {
  RecvTensorArgs request;
  RecvTensorResult response;
};

struct Registered {
  int worker;
  std::string handle;
  FuzzGraph graph;
};

class WorkerFuzz {
 public:
  explicit WorkerFuzz(FuzzedDataProvider& fdp) : fdp_(fdp) {
    for (auto& d : env->devices) {
      workers_.push_back(std::make_unique<Worker>(d.get(), &cache_));
      cache_.workers[DeviceName::TaskOf(d->name())] = workers_.back().get();
    }
  }

  ~WorkerFuzz() {
    // End every step this input touched, on both tasks, and cancel every call: then every
    // call must end.
    for (auto& w : workers_) {
      for (int64_t step : steps_) {
        proto::CleanupGraphRequest req;
        req.set_step_id(step);
        proto::CleanupGraphResponse resp;
        Status s = CallAndWait([&](auto done) { w->CleanupGraphAsync(&req, &resp, done); });
        if (!s.ok()) std::abort();
      }
    }
    for (auto& cm : cms_) cm->StartCancel();
    calls_.WaitAllOrDie(absl::Seconds(5));
    workers_.clear();
  }

  void Run() {
    for (int i = 0; i < kMaxCalls && fdp_.remaining_bytes() > 0; ++i) {
      const int w = fdp_.ConsumeIntegralInRange(0, static_cast<int>(workers_.size()) - 1);
      switch (fdp_.ConsumeIntegralInRange(0, 11)) {
        case 0:
          GetStatus(w);
          break;
        case 1:
        case 2:
        case 3:
          RegisterGraph(w);
          break;
        case 4:
          RegisterGraphBytes(w);
          break;
        case 5:
          DeregisterGraph(w);
          break;
        case 6:
        case 7:
          RunGraph(w);
          break;
        case 8:
          RecvTensor(w);
          break;
        case 9:
          CleanupGraph(w);
          break;
        case 10:
          CleanupAll(w);
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
  int64_t StepId() {
    int64_t id;
    switch (fdp_.ConsumeIntegralInRange(0, 7)) {
      case 0:
        id = fdp_.ConsumeIntegral<int64_t>();
        break;
      default:
        id = fdp_.ConsumeIntegralInRange(1, 3);
        break;
    }
    steps_.insert(id);
    return id;
  }

  const Registered* PickGraph(int w) {
    std::vector<const Registered*> mine;
    for (const Registered& r : graphs_) {
      if (r.worker == w) mine.push_back(&r);
    }
    if (mine.empty() || fdp_.ConsumeIntegralInRange(0, 15) == 0) return nullptr;
    return mine[fdp_.ConsumeIntegralInRange<size_t>(0, mine.size() - 1)];
  }

  std::string GraphHandle(const Registered* r) {
    return r != nullptr ? r->handle : fdp_.ConsumeRandomLengthString(40);
  }

  std::shared_ptr<CancellationManager> MaybeCm() {
    switch (fdp_.ConsumeIntegralInRange(0, 5)) {
      case 0:
        return nullptr;
      case 1: {
        auto cm = std::make_shared<CancellationManager>();
        cm->StartCancel();  // cancelled before the call
        return cm;
      }
      default:
        cms_.push_back(std::make_shared<CancellationManager>());
        return cms_.back();
    }
  }

  void GetStatus(int w) {
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    Status s = CallAndWait([&](auto done) { workers_[w]->GetStatusAsync(&req, &resp, done); });
    const DeviceBase* d = env->devices[w].get();
    if (!s.ok() || resp.device_size() != 1 || resp.device(0).name() != d->name() ||
        resp.device(0).incarnation() != d->incarnation()) {
      std::abort();
    }
  }

  void RegisterGraph(int w) {
    GraphOptions options;
    options.devices = env->fuzz_devices;
    options.place_on = {env->devices[w]->name()};
    options.worker_partition = true;
    options.checkpoint_dir = env->dir;
    Registered r{w, "", FuzzGraphDef(fdp_, options)};
    proto::RegisterGraphRequest req;
    req.set_session_handle(PickString(fdp_, {"s1", "s2", ""}));
    req.set_isolate_session(fdp_.ConsumeIntegralInRange(0, 3) == 0);
    *req.mutable_graph_def() = r.graph.graph;
    proto::RegisterGraphResponse resp;
    Status s = CallAndWait([&](auto done) { workers_[w]->RegisterGraphAsync(&req, &resp, done); });
    Note("RegisterGraph on " + std::to_string(w) + " " + req.ShortDebugString(), s);
    if (s.ok()) {
      r.handle = resp.graph_handle();
      graphs_.push_back(std::move(r));
    }
  }

  // A request from bytes: whatever parses is sent as it is.
  void RegisterGraphBytes(int w) {
    proto::RegisterGraphRequest req;
    if (!req.ParseFromString(fdp_.ConsumeRandomLengthString(512))) return;
    proto::RegisterGraphResponse resp;
    Status s = CallAndWait([&](auto done) { workers_[w]->RegisterGraphAsync(&req, &resp, done); });
    if (s.ok()) graphs_.push_back({w, resp.graph_handle(), {}});
  }

  void DeregisterGraph(int w) {
    proto::DeregisterGraphRequest req;
    req.set_graph_handle(GraphHandle(PickGraph(w)));
    req.set_session_handle(PickString(fdp_, {"s1", "s2", ""}));
    proto::DeregisterGraphResponse resp;
    Status s =
        CallAndWait([&](auto done) { workers_[w]->DeregisterGraphAsync(&req, &resp, done); });
    if (!s.ok()) std::abort();  // deregistering is always fine
  }

  void RunGraph(int w) {
    // Mostly a graph registered on either task, run there.
    const Registered* r = nullptr;
    if (!graphs_.empty() && fdp_.ConsumeIntegralInRange(0, 15) != 0) {
      r = &graphs_[fdp_.ConsumeIntegralInRange<size_t>(0, graphs_.size() - 1)];
      w = r->worker;
    }
    auto call = std::make_shared<RunGraphCall>();
    proto::RunGraphRequest& p = call->request.proto;
    p.set_session_handle(PickString(fdp_, {"s1", "s2", ""}));
    p.set_graph_handle(GraphHandle(r));
    p.set_step_id(StepId());
    p.set_timeout_ms(fdp_.ConsumeIntegralInRange<int64_t>(1, kMaxStepMs));
    const FuzzGraph empty;
    const FuzzGraph& g = r != nullptr ? r->graph : empty;
    // Feeds for the graph's _Recv nodes (mostly of the type they declare), and fetches of
    // its _Send nodes, now and then keys of nothing.
    std::set<std::string> fed;  // each key once, but now and then twice
    for (const auto& [key, dtype] : g.recv_keys) {
      if (fdp_.ConsumeIntegralInRange(0, 3) == 0) continue;
      if (!fed.insert(key).second && fdp_.ConsumeIntegralInRange(0, 15) != 0) continue;
      const DataType t = fdp_.ConsumeIntegralInRange(0, 7) == 0 ? FuzzType(fdp_) : dtype;
      call->request.send.push_back({key, FuzzTensor(fdp_, t, env->fuzz_devices)});
    }
    if (fdp_.ConsumeIntegralInRange(0, 7) == 0) {
      call->request.send.push_back(
          {RandomKey(-1), FuzzTensor(fdp_, FuzzType(fdp_), env->fuzz_devices)});
    }
    for (const auto& [key, dtype] : g.send_keys) {
      if (fdp_.ConsumeIntegralInRange(0, 2) != 0) p.add_recv_key(key);
    }
    if (fdp_.ConsumeIntegralInRange(0, 7) == 0) p.add_recv_key(RandomKey(w));
    std::shared_ptr<CancellationManager> cm = MaybeCm();
    workers_[w]->RunGraphAsync(
        &call->request, &call->response, cm.get(),
        calls_.Done("RunGraph " + p.ShortDebugString(), [call, cm](const Status&) {}));
  }

  // A rendezvous key: mostly from task `src` (any when -1) with the right incarnation.
  std::string RandomKey(int src_task) {
    const auto& d = env->fuzz_devices;
    const FuzzDevice& src = src_task >= 0 && fdp_.ConsumeIntegralInRange(0, 7) != 0
                                ? d[src_task]
                                : d[fdp_.ConsumeIntegralInRange<size_t>(0, d.size() - 1)];
    const FuzzDevice& dst = d[fdp_.ConsumeIntegralInRange<size_t>(0, d.size() - 1)];
    const uint64_t inc =
        fdp_.ConsumeIntegralInRange(0, 7) == 0 ? fdp_.ConsumeIntegral<uint64_t>() : src.incarnation;
    if (fdp_.ConsumeIntegralInRange(0, 15) == 0) return fdp_.ConsumeRandomLengthString(40);
    return RendezvousKey(src.name, inc, dst.name, PickString(fdp_, {"t0", "t1", "n0:0", "n1:0"}));
  }

  void RecvTensor(int w) {
    auto call = std::make_shared<RecvTensorCall>();
    proto::RecvTensorRequest& p = call->request.proto;
    p.set_step_id(StepId());
    // Keys the peers' graphs send to this task, or made up.
    const int keys =
        fdp_.ConsumeIntegralInRange(0, 15) == 0 ? 0 : fdp_.ConsumeIntegralInRange(1, 3);
    for (int i = 0; i < keys; ++i) {
      std::vector<std::string> candidates;
      for (const Registered& r : graphs_) {
        if (r.worker != w) continue;
        for (const auto& k : r.graph.send_keys) candidates.push_back(k.first);
      }
      if (!candidates.empty() && fdp_.ConsumeBool()) {
        p.add_rendezvous_key(
            candidates[fdp_.ConsumeIntegralInRange<size_t>(0, candidates.size() - 1)]);
      } else {
        p.add_rendezvous_key(RandomKey(w));
      }
    }
    // Pushes: tensors for the _Recv nodes of this task's graphs, or made up.
    const int pushes = fdp_.ConsumeIntegralInRange(0, 2);
    for (int i = 0; i < pushes; ++i) {
      std::vector<std::pair<std::string, DataType>> candidates;
      for (const Registered& r : graphs_) {
        if (r.worker != w) continue;
        candidates.insert(candidates.end(), r.graph.recv_keys.begin(), r.graph.recv_keys.end());
      }
      if (!candidates.empty() && fdp_.ConsumeBool()) {
        const auto& c = candidates[fdp_.ConsumeIntegralInRange<size_t>(0, candidates.size() - 1)];
        call->request.push.push_back({c.first, FuzzTensor(fdp_, c.second, env->fuzz_devices)});
      } else {
        call->request.push.push_back(
            {RandomKey(1 - w), FuzzTensor(fdp_, FuzzType(fdp_), env->fuzz_devices)});
      }
    }
    std::shared_ptr<CancellationManager> cm = MaybeCm();
    workers_[w]->RecvTensorAsync(
        &call->request, &call->response, cm.get(),
        calls_.Done("RecvTensor " + p.ShortDebugString(), [call, cm](const Status&) {}));
  }

  void CleanupGraph(int w) {
    proto::CleanupGraphRequest req;
    req.set_step_id(StepId());
    proto::CleanupGraphResponse resp;
    Status s = CallAndWait([&](auto done) { workers_[w]->CleanupGraphAsync(&req, &resp, done); });
    if (!s.ok()) std::abort();
  }

  void CleanupAll(int w) {
    proto::CleanupAllRequest req;
    const int n = fdp_.ConsumeIntegralInRange(0, 2);
    for (int i = 0; i < n; ++i) req.add_container(PickString(fdp_, Containers()));
    proto::CleanupAllResponse resp;
    Status s = CallAndWait([&](auto done) { workers_[w]->CleanupAllAsync(&req, &resp, done); });
    if (!s.ok()) std::abort();
  }

  FuzzedDataProvider& fdp_;
  MapWorkerCache cache_;
  // Declared before the workers: destroyed after them (a worker may still complete a call
  // while it is destroyed).
  CallTracker calls_;
  std::vector<std::shared_ptr<CancellationManager>> cms_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Registered> graphs_;
  std::set<int64_t> steps_;
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
    WorkerFuzz fuzz(fdp);
    fuzz.Run();
  }
  env->ClearResources();
  return 0;
}
