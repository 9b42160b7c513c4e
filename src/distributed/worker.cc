#include "src/distributed/worker.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include "src/base/request_text.h"
#include "src/base/timer_queue.h"
#include "src/distributed/client_terminated.h"
#include "src/graph/graph.h"
#include "tensorweave/device_name.h"

namespace tw {

// The rendezvous of one step on one worker. Values this worker's _Send kernels produce stay
// here until a local _Recv or a peer's RecvTensor takes them; a _Recv of a value produced on
// another task pulls it from that task's worker. Thread-safe.
class StepRendezvous final : public Rendezvous,
                             public std::enable_shared_from_this<StepRendezvous> {
 public:
  StepRendezvous(int64_t step_id, std::string local_task, WorkerCache* peers)
      : step_id_(step_id), local_task_(std::move(local_task)), peers_(peers) {}

  Status Send(const std::string& key, const Tensor& value) override {
    return local_.Send(key, value);
  }

  void RecvLocalAsync(const std::string& key, CancellationManager* cm, RecvCallback done) override {
    local_.RecvAsync(key, cm, std::move(done));
  }

  void RecvAsync(const std::string& key, CancellationManager* cm, RecvCallback done) override {
    auto parsed = ParseRendezvousKey(key);
    if (!parsed.ok()) {
      done(parsed.status(), Tensor());
      return;
    }
    const std::string task = DeviceName::TaskOf(parsed->src_device);
    if (task == local_task_) {
      local_.RecvAsync(key, cm, std::move(done));
      return;
    }
    Call(task, {key}, {}, cm, [done = std::move(done)](const Status& s, RecvTensorResult& got) {
      done(s, s.ok() ? got.tensor[0].tensor : Tensor());
    });
  }

  // A _Recv marked pushed waits locally: when its sender fails, it learns so from the
  // master's CleanupGraph (or the step's timeout), not from a pull of its own.
  //
  // Pulls `keys` (all produced on `task`) with one RecvTensor call, which answers when all
  // of them are there, and leaves them in this rendezvous for the _Recv nodes marked
  // `prefetch` (src/graph/partition.h), which read them locally. When `push` names keys
  // this step sends to that task, the call waits for them and carries them. A failure
  // aborts the rendezvous, so those _Recv nodes fail with it.
  void Prefetch(const std::string& task, std::vector<std::string> keys,
                const std::vector<std::string>& push,
                const std::shared_ptr<CancellationManager>& cm) {
    if (push.empty()) {
      Pull(task, std::move(keys), {}, cm);
      return;
    }
    struct Gather {
      absl::Mutex mu;
      size_t pending ABSL_GUARDED_BY(mu);
      Status status ABSL_GUARDED_BY(mu);
      std::vector<NamedTensor> push;
      std::vector<std::string> keys;
    };
    auto gather = std::make_shared<Gather>();
    gather->pending = push.size();
    gather->push.resize(push.size());
    gather->keys = std::move(keys);
    for (size_t i = 0; i < push.size(); ++i) {
      gather->push[i].name = push[i];
      local_.RecvAsync(
          push[i], cm.get(),
          [self = shared_from_this(), task, cm, gather, i](const Status& s, const Tensor& t) {
            Status status;
            {
              absl::MutexLock lock(&gather->mu);
              if (s.ok()) {
                gather->push[i].tensor = t;
              } else if (gather->status.ok()) {
                gather->status = s;
              }
              if (--gather->pending > 0) return;
              status = gather->status;
            }
            if (!status.ok()) {
              self->StartAbort(status);
              return;
            }
            self->Pull(task, std::move(gather->keys), std::move(gather->push), cm);
          });
    }
  }

  void StartAbort(const Status& status) override { local_.StartAbort(status); }

  // Counts what keeps a step alive on this worker once its partition runs: the partition
  // itself and each tensor it sends to peers (RunGraph adds them, the partition's success
  // and each RecvTensor served take one; served ones may come first). True when this call
  // brought the count to zero: the step is over here.
  bool Settle(int delta) {
    return outstanding_.fetch_add(delta, std::memory_order_acq_rel) + delta == 0;
  }
  StatusOr<Tensor> TryRecvLocal(const std::string& key) { return local_.TryRecv(key); }

 private:
  using CallCallback = std::function<void(const Status&, RecvTensorResult&)>;

  // A prefetch: one call, whose tensors go into this rendezvous. `self` and `cm` stay alive
  // until the call is over, even when the step ends first.
  void Pull(const std::string& task, std::vector<std::string> keys, std::vector<NamedTensor> push,
            const std::shared_ptr<CancellationManager>& cm) {
    Call(task, std::move(keys), std::move(push), cm.get(),
         [self = shared_from_this(), cm](const Status& s, RecvTensorResult& got) {
           if (!s.ok()) {
             self->StartAbort(s);
             return;
           }
           for (NamedTensor& t : got.tensor) {
             if (!self->local_.Send(t.name, t.tensor).ok()) return;  // the step ended
           }
         });
  }

  // One RecvTensor call to `task` for `keys`, carrying `push`; `done` gets the tensors in
  // the keys' order. Errors other than cancellation name the task.
  void Call(const std::string& task, std::vector<std::string> keys, std::vector<NamedTensor> push,
            CancellationManager* cm, CallCallback done) {
    auto peer = peers_->GetWorker(task);
    if (!peer.ok()) {
      RecvTensorResult none;
      done(peer.status(), none);
      return;
    }
    struct Call {
      RecvTensorArgs request;
      RecvTensorResult response;
    };
    auto call = std::make_shared<Call>();
    call->request.proto.set_step_id(step_id_);
    for (std::string& key : keys) call->request.proto.add_rendezvous_key(std::move(key));
    call->request.push = std::move(push);
    (*peer)->RecvTensorAsync(
        &call->request, &call->response, cm, [call, task, done = std::move(done)](Status s) {
          // The pushed tensors are sent: drop them before `done` runs the step on, so a
          // variable they were read from is not shared when an update comes to it (it would
          // be copied first).
          call->request.push.clear();
          const int asked = call->request.proto.rendezvous_key_size();
          if (s.ok() && call->response.tensor.size() != static_cast<size_t>(asked)) {
            s = errors::Internal("RecvTensor asked for ", asked, " tensors and got ",
                                 call->response.tensor.size());
          }
          if (!s.ok() && !IsCancelled(s)) s = errors::Annotate(s, "From " + task + ": ");
          done(s, call->response);
        });
  }

  const int64_t step_id_;
  const std::string local_task_;
  std::atomic<int> outstanding_{0};
  WorkerCache* const peers_;
  LocalRendezvous local_;
};

// The worker's device as an isolated session sees it: the same device, except that its
// variables and queues are the session's own.
class IsolatedDevice final : public DeviceBase {
 public:
  explicit IsolatedDevice(DeviceBase* base)
      : base_(base), resources_(base->resource_manager()->default_container()) {}
  const std::string& name() const override { return base_->name(); }
  const DeviceName& parsed_name() const override { return base_->parsed_name(); }
  const std::string& device_type() const override { return base_->device_type(); }
  uint64_t incarnation() const override { return base_->incarnation(); }
  ResourceMgr* resource_manager() override { return &resources_; }
  void Schedule(std::function<void()> fn) override { base_->Schedule(std::move(fn)); }
  int NumThreads() const override { return base_->NumThreads(); }
  const FileAccessPolicy& file_access() const override { return base_->file_access(); }

 private:
  DeviceBase* const base_;
  ResourceMgr resources_;
};

Worker::Worker(DeviceBase* device, WorkerCache* peers) : device_(device), peers_(peers) {}

void Worker::CancelRunningPartitions() {
  std::vector<std::shared_ptr<CancellationManager>> running;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, cm] : running_) running.push_back(cm);
  }
  for (auto& cm : running) cm->StartCancel();
}

Worker::~Worker() {
  std::map<int64_t, std::shared_ptr<StepRendezvous>> steps;
  std::vector<std::shared_ptr<CancellationManager>> running;
  {
    absl::MutexLock lock(&mu_);
    steps.swap(steps_);
    for (auto& [id, cm] : running_) running.push_back(cm);
  }
  for (auto& [id, step] : steps) step->StartAbort(errors::Aborted("worker shutting down"));
  // Running partitions complete into this object: cancel them and wait for their ends.
  for (auto& cm : running) cm->StartCancel();
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](decltype(running_)* calls) { return calls->empty(); }, &running_));
}

std::shared_ptr<StepRendezvous> Worker::FindOrCreateStep(int64_t step_id) {
  absl::MutexLock lock(&mu_);
  return StepEnded(step_id) ? nullptr : FindOrCreateStepLocked(step_id);
}

std::shared_ptr<StepRendezvous> Worker::FindOrCreateStepLocked(int64_t step_id) {
  std::shared_ptr<StepRendezvous>& step = steps_[step_id];
  if (step == nullptr) {
    step = std::make_shared<StepRendezvous>(step_id, DeviceName::TaskOf(device_->name()), peers_);
  }
  return step;
}

bool Worker::StepEnded(int64_t step_id) {
  const absl::Time forget_before = absl::Now() - kEndedStepMemory;
  while (!ended_order_.empty() && ended_order_.front().first < forget_before) {
    ended_.erase(ended_order_.front().second);
    ended_order_.pop_front();
  }
  return ended_.contains(step_id);
}

size_t Worker::ActiveSteps() {
  absl::MutexLock lock(&mu_);
  return steps_.size();
}

size_t Worker::NumGraphs() {
  absl::MutexLock lock(&mu_);
  return graphs_.size();
}

std::shared_ptr<StepRendezvous> Worker::BeginServing(int64_t step_id) {
  absl::MutexLock lock(&mu_);
  if (StepEnded(step_id)) return nullptr;
  ++serving_[step_id];
  return FindOrCreateStepLocked(step_id);
}

void Worker::EndServing(int64_t step_id, StepRendezvous* step, bool failed) {
  absl::MutexLock lock(&mu_);
  auto serving = serving_.find(step_id);
  if (--serving->second > 0) return;
  serving_.erase(serving);
  auto it = steps_.find(step_id);
  if (failed && it != steps_.end() && it->second.get() == step && !running_.contains(step_id) &&
      step->Settle(0)) {
    steps_.erase(it);
  }
}

void Worker::EraseStep(int64_t step_id, StepRendezvous* step) {
  {
    absl::MutexLock lock(&mu_);
    auto it = steps_.find(step_id);
    if (it == steps_.end() || it->second.get() != step) return;
    steps_.erase(it);
  }
  // A RecvTensor still waiting on the step (for a key its partition does not produce) would
  // otherwise wait for ever: once the step is forgotten, CleanupGraph cannot reach it.
  step->StartAbort(
      errors::Cancelled("step ", step_id, " has ended on ", DeviceName::TaskOf(device_->name())));
}

void Worker::GetStatusAsync(const proto::GetStatusRequest*, proto::GetStatusResponse* response,
                            StatusCallback done) {
  proto::DeviceAttributes* d = response->add_device();
  d->set_name(device_->name());
  d->set_device_type(device_->device_type());
  d->set_incarnation(device_->incarnation());
  done(OkStatus());
}

void Worker::RegisterGraphAsync(const proto::RegisterGraphRequest* request,
                                proto::RegisterGraphResponse* response, StatusCallback done) {
  for (const proto::NodeDef& n : request->graph_def().node()) {
    if (n.device() != device_->name()) {
      done(errors::InvalidArgument("node '", QuoteRequestText(n.name()), "' is placed on ",
                                   QuoteRequestText(n.device()), ", not on this task's device ",
                                   device_->name()));
      return;
    }
  }
  // Graph::Create checks every node's attributes against its op (required ones present, of
  // the declared types, defaults filled in), so the attributes read below exist.
  auto graph = Graph::Create(request->graph_def());
  if (!graph.ok()) {
    done(graph.status());
    return;
  }
  for (const Node& n : (*graph)->nodes()) {
    // A partition planned against an earlier incarnation of this task would wait forever
    // for tensors that process will never send.
    if ((n.op() == "_Send" || n.op() == "_Recv") && !IsClientTerminated(n.def) &&
        n.def.attr().at("send_device").s() == device_->name() &&
        static_cast<uint64_t>(n.def.attr().at("send_device_incarnation").i()) !=
            device_->incarnation()) {
      done(errors::Aborted("graph for ", device_->name(),
                           " expects another incarnation of it: the task restarted"));
      return;
    }
  }
  // The keys of the _Recv nodes the partitioner marked for prefetching, by source device
  // (the partitioner made sure that each such group can be answered as a whole), and of the
  // _Send nodes it marked push, by destination device.
  std::map<std::string, std::vector<std::string>> prefetch, push;
  for (const Node& n : (*graph)->nodes()) {
    const bool recv = n.op() == "_Recv";
    if (!recv && n.op() != "_Send") continue;
    const auto& attr = n.def.attr();
    if (recv && attr.at("pushed").b() && !attr.at("prefetch").b()) {
      // It would pull a value its sender keeps for the push, and wait for ever.
      done(errors::InvalidArgument("_Recv '", QuoteRequestText(n.name()),
                                   "' is pushed but not prefetch"));
      return;
    }
    const bool marked =
        recv ? attr.at("prefetch").b() && !attr.at("pushed").b() : attr.at("push").b();
    if (!marked) continue;
    const std::string& src = attr.at("send_device").s();
    const std::string& dst = attr.at("recv_device").s();
    (recv ? prefetch[src] : push[dst])
        .push_back(RendezvousKey(src, static_cast<uint64_t>(attr.at("send_device_incarnation").i()),
                                 dst, attr.at("tensor_name").s()));
  }
  for (const auto& [dst, keys] : push) {
    if (!prefetch.contains(dst)) {
      done(errors::InvalidArgument("graph pushes ", QuoteRequestText(keys.front()), " to ",
                                   QuoteRequestText(dst),
                                   " but pulls nothing from it to carry the push"));
      return;
    }
  }
  std::shared_ptr<IsolatedDevice> isolated;
  if (request->isolate_session()) {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<IsolatedDevice>& d = isolated_[request->session_handle()];
    if (d == nullptr) d = std::make_shared<IsolatedDevice>(device_);
    isolated = d;
  }
  auto executor = Executor::Create(
      *std::move(graph), isolated != nullptr ? static_cast<DeviceBase*>(isolated.get()) : device_);
  if (!executor.ok()) {
    done(executor.status());
    return;
  }
  auto item = std::make_shared<GraphItem>();
  item->session_handle = request->session_handle();
  item->peer_sends = PeerSends(request->graph_def());
  for (auto& [src, keys] : prefetch) {
    auto pushed = push.find(src);
    item->prefetch.push_back(
        {DeviceName::TaskOf(src), std::move(keys),
         pushed == push.end() ? std::vector<std::string>() : std::move(pushed->second)});
  }
  item->executor = *std::move(executor);
  item->isolated = std::move(isolated);
  // The incarnation makes handles unique across restarts of this task: a master holding a
  // handle from an earlier process must get "not found" (Aborted), never another graph.
  char handle[34];
  {
    absl::MutexLock lock(&mu_);
    std::snprintf(handle, sizeof(handle), "%016" PRIx64 "-%016" PRIx64, device_->incarnation(),
                  static_cast<uint64_t>(next_graph_++));
    graphs_[handle] = std::move(item);
  }
  response->set_graph_handle(handle);
  done(OkStatus());
}

void Worker::DeregisterGraphAsync(const proto::DeregisterGraphRequest* request,
                                  proto::DeregisterGraphResponse*, StatusCallback done) {
  std::shared_ptr<GraphItem> doomed;  // destroyed outside the lock
  {
    absl::MutexLock lock(&mu_);
    auto it = graphs_.find(request->graph_handle());
    if (it != graphs_.end()) {
      doomed = std::move(it->second);
      graphs_.erase(it);
    }
    // An isolated session's resources go when its last graph here goes.
    if (doomed != nullptr && doomed->isolated != nullptr &&
        std::none_of(graphs_.begin(), graphs_.end(),
                     [&](const auto& g) { return g.second->isolated == doomed->isolated; })) {
      isolated_.erase(doomed->session_handle);
    }
  }
  done(OkStatus());
}

// One RunGraphAsync call: the partition's own cancellation (the caller's `cm`, CleanupGraph
// and the deadline all end up in `cm`) and what must be undone before `done`.
struct Worker::RunState {
  std::shared_ptr<GraphItem> item;  // keeps the executor alive while it runs
  std::shared_ptr<CancellationManager> cm = std::make_shared<CancellationManager>();
  CancellationManager* caller_cm = nullptr;
  CancellationManager::Token caller_token = 0;
  std::optional<TimerQueue::Id> timer;
  std::atomic<bool> deadline_passed{false};

  // Before `done`, on every way out: the caller's `cm` may go with `done`.
  void Unregister() {
    if (timer) TimerQueue::Default()->Cancel(*timer);
    if (caller_cm != nullptr) caller_cm->DeregisterCallback(caller_token);
  }
};

void Worker::RunGraphAsync(const RunGraphArgs* request, RunGraphResult* response,
                           CancellationManager* cm, StatusCallback done) {
  const proto::RunGraphRequest& header = request->proto;
  auto state = std::make_shared<RunState>();
  {
    absl::MutexLock lock(&mu_);
    auto it = graphs_.find(header.graph_handle());
    if (it != graphs_.end()) state->item = it->second;
  }
  if (state->item == nullptr) {
    done(errors::Aborted("Graph handle is not found: ", QuoteRequestText(header.graph_handle()),
                         ". Possibly this worker (", DeviceName::TaskOf(device_->name()),
                         ") just restarted."));
    return;
  }
  const GraphItem& item = *state->item;
  const int64_t step_id = header.step_id();
  std::shared_ptr<StepRendezvous> step;
  {
    absl::MutexLock lock(&mu_);
    if (!StepEnded(step_id)) {
      running_.emplace(step_id, state->cm);
      step = FindOrCreateStepLocked(step_id);
    }
  }
  if (step == nullptr) {  // `done` may call into this worker: never under mu_
    done(errors::Cancelled("step ", step_id, " was ended before its partition ",
                           header.graph_handle(), " started on ",
                           DeviceName::TaskOf(device_->name())));
    return;
  }
  if (cm != nullptr) {
    state->caller_cm = cm;
    state->caller_token = cm->NewToken();
    if (!cm->RegisterCallback(state->caller_token, [state] { state->cm->StartCancel(); })) {
      state->caller_cm = nullptr;
      state->Unregister();
      done(errors::Cancelled("step ", step_id, " was cancelled before it started"));
      RunEnded(step_id, state->cm.get());
      return;
    }
  }
  for (const NamedTensor& feed : request->send) {
    Status s = step->Send(feed.name, feed.tensor);
    if (!s.ok()) {
      state->Unregister();
      if (item.peer_sends == 0) EraseStep(step_id, step.get());
      done(errors::Annotate(s, "feed " + QuoteRequestText(feed.name) + ": "));
      RunEnded(step_id, state->cm.get());
      return;
    }
  }
  // The step stays until the partition has finished and peers have pulled what it sends.
  if (item.peer_sends > 0) step->Settle(item.peer_sends + 1);
  for (const GraphItem::PrefetchBatch& b : item.prefetch) {
    step->Prefetch(b.task, b.keys, b.push, state->cm);
  }
  Executor::Args args;
  args.step_id = step_id;
  args.rendezvous = step.get();
  args.cancellation_manager = state->cm.get();
  args.session_handle = item.session_handle;
  if (request->from_this_process) {
    // The program itself, which could open any file (RunGraphArgs::from_this_process).
    static const FileAccessPolicy* const kUnrestricted =
        new FileAccessPolicy(FileAccessPolicy::Unrestricted());
    args.file_access = kUnrestricted;
  }
  if (header.timeout_ms() > 0) {
    // The master cancels the step when its timeout passes; this task does not rely on that
    // message arriving (the master may be gone).
    args.deadline = absl::Now() + absl::Milliseconds(header.timeout_ms());
    std::weak_ptr<RunState> weak = state;
    state->timer = TimerQueue::Default()->Schedule(args.deadline, [weak] {
      if (auto s = weak.lock()) {
        s->deadline_passed = true;
        s->cm->StartCancel();
      }
    });
  }
  item.executor->RunAsync(args, [this, state, step, request, response,
                                 done = std::move(done)](const Status& s) mutable {
    FinishRun(state, step, request, response, s, std::move(done));
  });
}

void Worker::FinishRun(const std::shared_ptr<RunState>& state,
                       const std::shared_ptr<StepRendezvous>& step, const RunGraphArgs* request,
                       RunGraphResult* response, const Status& status, StatusCallback done) {
  state->Unregister();
  const proto::RunGraphRequest& req = request->proto;
  const int64_t step_id = req.step_id();
  Status result = status;
  if (!status.ok()) {
    if (IsCancelled(status) && state->deadline_passed) {
      result = errors::DeadlineExceeded("Timed out after ", req.timeout_ms(), " ms running step ",
                                        step_id);
    }
    step->StartAbort(result);  // peers waiting on this step's tensors learn of the failure
  } else {
    // The partition has finished, so its client-terminated sends are all there; a key that
    // is missing was never produced by this partition.
    response->recv.reserve(req.recv_key_size());
    for (const std::string& key : req.recv_key()) {
      auto t = step->TryRecvLocal(key);
      if (!t.ok()) {
        result =
            errors::InvalidArgument("fetch ", QuoteRequestText(key), " is not produced by graph ",
                                    QuoteRequestText(req.graph_handle()));
        break;
      }
      response->recv.push_back({key, *std::move(t)});
    }
  }
  if (state->item->peer_sends == 0) {
    EraseStep(step_id, step.get());
  } else if (result.ok() && step->Settle(-1)) {
    EraseStep(step_id, step.get());  // the peers pulled everything already
  }
  done(result);  // may free `request` and `response`
  RunEnded(step_id, state->cm.get());
}

void Worker::RunEnded(int64_t step_id, const CancellationManager* cm) {
  absl::MutexLock lock(&mu_);
  for (auto [it, end] = running_.equal_range(step_id); it != end; ++it) {
    if (it->second.get() == cm) {
      running_.erase(it);
      return;
    }
  }
}

void Worker::RecvTensorAsync(const RecvTensorArgs* args, RecvTensorResult* response,
                             CancellationManager* cm, StatusCallback done) {
  const proto::RecvTensorRequest* request = &args->proto;
  const int n = request->rendezvous_key_size();
  if (n == 0) {
    done(errors::InvalidArgument("RecvTensor of step ", request->step_id(), " names no tensor"));
    return;
  }
  absl::flat_hash_set<std::string_view> asked;
  for (const std::string& text : request->rendezvous_key()) {
    // A key asked twice would leave one of its two waits unanswered.
    if (!asked.insert(text).second) {
      done(errors::InvalidArgument("RecvTensor asks for ", QuoteRequestText(text), " twice"));
      return;
    }
    auto key = ParseRendezvousKey(text);
    if (!key.ok()) {
      done(key.status());
      return;
    }
    if (key->src_device != device_->name() || key->src_incarnation != device_->incarnation()) {
      done(errors::Aborted("RecvTensor expects a different device incarnation: ",
                           QuoteRequestText(key->src_device), " is now ", device_->name(),
                           " incarnation ", device_->incarnation(), "; the task restarted"));
      return;
    }
  }
  // Pushes come from the network: each must be a tensor another task sends to this one
  // (never one of the tensors asked for, which this task produces), named once.
  absl::flat_hash_set<std::string_view> pushed_names;
  for (const NamedTensor& pushed : args->push) {
    auto key = ParseRendezvousKey(pushed.name);
    if (!key.ok()) {
      done(errors::Annotate(key.status(), "pushed tensor: "));
      return;
    }
    if (key->dst_device != device_->name() || key->src_device == device_->name()) {
      done(errors::InvalidArgument(
          "pushed tensor ", QuoteRequestText(pushed.name), " goes from ",
          QuoteRequestText(key->src_device), " to ", QuoteRequestText(key->dst_device),
          ", not from another task to this task's device ", device_->name()));
      return;
    }
    if (!pushed_names.insert(pushed.name).second) {
      done(errors::InvalidArgument("RecvTensor pushes ", QuoteRequestText(pushed.name), " twice"));
      return;
    }
  }
  const int64_t step_id = request->step_id();
  std::shared_ptr<StepRendezvous> step = BeginServing(step_id);
  if (step == nullptr) {
    done(errors::Cancelled("step ", step_id, " has ended"));
    return;
  }
  // The pushed tensors first: the requested ones may be computed from them.
  for (const NamedTensor& pushed : args->push) {
    if (Status s = step->Send(pushed.name, pushed.tensor); !s.ok()) {
      EndServing(step_id, step.get(), /*failed=*/true);
      done(errors::Annotate(s, "pushed tensor " + QuoteRequestText(pushed.name) + ": "));
      return;
    }
  }
  // Answers when every key has its tensor, with the first error if any failed (a failed
  // receive means the step was aborted or cancelled, which ends every other wait too).
  struct Wait {
    absl::Mutex mu;
    int pending ABSL_GUARDED_BY(mu);
    Status status ABSL_GUARDED_BY(mu);
    StatusCallback done;
  };
  auto wait = std::make_shared<Wait>();
  wait->pending = n;
  wait->done = std::move(done);
  response->tensor.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    response->tensor[i].name = request->rendezvous_key(i);
    step->RecvLocalAsync(
        request->rendezvous_key(i), cm,
        [this, step, step_id, wait, out = &response->tensor[i]](const Status& s, const Tensor& t) {
          if (s.ok() && step->Settle(-1)) EraseStep(step_id, step.get());
          Status result;
          {
            absl::MutexLock lock(&wait->mu);
            if (s.ok()) {
              out->tensor = t;
            } else if (wait->status.ok()) {
              wait->status = s;
            }
            if (--wait->pending > 0) return;
            result = wait->status;
          }
          EndServing(step_id, step.get(), !result.ok());
          StatusCallback finish = std::move(wait->done);
          finish(result);
        });
  }
}

void Worker::CleanupGraphAsync(const proto::CleanupGraphRequest* request,
                               proto::CleanupGraphResponse*, StatusCallback done) {
  const int64_t step_id = request->step_id();
  std::shared_ptr<StepRendezvous> step;
  std::vector<std::shared_ptr<CancellationManager>> running;
  {
    absl::MutexLock lock(&mu_);
    auto it = steps_.find(step_id);
    if (it != steps_.end()) {
      step = std::move(it->second);
      steps_.erase(it);
    }
    for (auto [r, end] = running_.equal_range(step_id); r != end; ++r) running.push_back(r->second);
    if (!StepEnded(step_id)) {
      ended_.insert(step_id);
      ended_order_.emplace_back(absl::Now(), step_id);
    }
  }
  for (auto& cm : running) cm->StartCancel();
  if (step != nullptr) step->StartAbort(errors::Cancelled("step ", step_id, " ended"));
  done(OkStatus());
}

void Worker::CleanupAllAsync(const proto::CleanupAllRequest* request, proto::CleanupAllResponse*,
                             StatusCallback done) {
  std::vector<std::string> containers(request->container().begin(), request->container().end());
  // As TensorFlow's DeviceMgr::ClearContainers: naming none clears the default container
  // only, not every container (a named one outlives a plain Reset).
  if (containers.empty()) containers.push_back(device_->resource_manager()->default_container());
  device_->resource_manager()->Clear(containers);
  done(OkStatus());
}

}  // namespace tw
