#include "src/runtime/direct_session.h"

#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "src/runtime/cpu_device.h"
#include "src/runtime/step_timeout.h"

namespace tw {

namespace {
std::string NewSessionHandle() {
  static std::atomic<uint64_t> next{1};
  return "session" + std::to_string(next.fetch_add(1));
}
}  // namespace

DirectSession::DirectSession(DeviceBase* device, std::unique_ptr<DeviceBase> owned)
    : device_(device),
      owned_device_(std::move(owned)),
      device_name_(device->parsed_name()),
      handle_(NewSessionHandle()) {}

DirectSession::~DirectSession() {
  Close().IgnoreError();
  // Executors hold kernels that refer to the device: drop them before an owned device.
  absl::MutexLock lock(&mu_);
  executables_.clear();
}

Status DirectSession::Extend(const proto::GraphDef& graph) {
  absl::MutexLock lock(&mu_);
  if (closed_) return errors::Cancelled("Session has been closed");
  proto::GraphDef merged = graph_;
  for (const proto::NodeDef& n : graph.node()) {
    if (node_names_.count(n.name())) {
      return errors::InvalidArgument("Duplicate node name in graph: '", n.name(), "'");
    }
    *merged.add_node() = n;
  }
  // Validate the whole graph now, so errors name the node when it is added.
  TW_RETURN_IF_ERROR(Graph::Create(merged).status());
  for (const proto::NodeDef& n : graph.node()) node_names_.insert(n.name());
  graph_ = std::move(merged);
  return OkStatus();
}

StatusOr<std::shared_ptr<const DirectSession::Executable>> DirectSession::BuildExecutable(
    const proto::GraphDef& graph, const std::vector<std::string>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  TW_ASSIGN_OR_RETURN(proto::GraphDef pruned, PruneForStep(graph, feeds, fetches, targets));
  for (const proto::NodeDef& n : pruned.node()) {
    auto wanted = DeviceName::Parse(n.device());
    if (!wanted.ok()) {
      return errors::InvalidArgument("node '", n.name(), "': ", wanted.status().message());
    }
    if (!wanted->IsSatisfiedBy(device_name_)) {
      return errors::InvalidArgument("Cannot assign a device for node '", n.name(),
                                     "': it asks for ", n.device(),
                                     ", but this session runs only on ", device_->name());
    }
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, Graph::Create(pruned));
  auto e = std::make_shared<Executable>();
  e->feed_names = feeds;
  for (const std::string& feed : feeds) {
    auto id = TensorId::Parse(feed);
    const Node* arg = g->FindNode("_arg_" + id->node + "_" + std::to_string(id->index));
    e->feed_types.push_back(arg->output_types[0]);
    std::optional<PartialShape> shape;
    for (const proto::NodeDef& n : graph.node()) {
      if (n.name() == id->node && n.op() == "Placeholder" && n.attr().count("shape")) {
        PartialShape s;
        if (GetNodeAttr(n, "shape", &s).ok() && !s.unknown_rank) shape = s;
      }
    }
    e->feed_shapes.push_back(shape);
  }
  TW_ASSIGN_OR_RETURN(e->executor, Executor::Create(std::move(g), device_));
  return std::shared_ptr<const Executable>(std::move(e));
}

StatusOr<std::shared_ptr<const DirectSession::Executable>> DirectSession::GetExecutable(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  std::vector<std::string> feed_names;
  feed_names.reserve(feeds.size());
  for (const auto& f : feeds) feed_names.push_back(f.first);
  std::string key = absl::StrJoin(feed_names, ",");
  key += '|';
  key += absl::StrJoin(fetches, ",");
  key += '|';
  key += absl::StrJoin(targets, ",");
  proto::GraphDef graph;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
    if (auto it = executables_.find(key); it != executables_.end()) return it->second;
    graph = graph_;
  }
  // Built outside the lock so other signatures keep running; a racing builder's result
  // is discarded in favour of the first one stored.
  TW_ASSIGN_OR_RETURN(auto built, BuildExecutable(graph, feed_names, fetches, targets));
  absl::MutexLock lock(&mu_);
  return executables_.emplace(key, std::move(built)).first->second;
}

Status DirectSession::CheckFeeds(const Executable& e,
                                 const std::vector<std::pair<std::string, Tensor>>& feeds) const {
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Tensor& t = feeds[i].second;
    if (t.dtype() != e.feed_types[i]) {
      return errors::InvalidArgument("Fed value for ", feeds[i].first, " is ",
                                     DataTypeName(t.dtype()), ", but the graph expects ",
                                     DataTypeName(e.feed_types[i]));
    }
    if (e.feed_shapes[i] && !e.feed_shapes[i]->IsCompatibleWith(t.shape())) {
      return errors::InvalidArgument("Cannot feed value of shape ", t.shape().DebugString(),
                                     " for tensor ", feeds[i].first, ", which has shape ",
                                     e.feed_shapes[i]->DebugString());
    }
  }
  return OkStatus();
}

Status DirectSession::Run(const RunOptions& options,
                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets, std::vector<Tensor>* outputs) {
  TW_ASSIGN_OR_RETURN(auto executable, GetExecutable(feeds, fetches, targets));
  TW_RETURN_IF_ERROR(CheckFeeds(*executable, feeds));

  std::vector<Tensor> args;
  args.reserve(feeds.size());
  for (const auto& f : feeds) args.push_back(f.second);
  CallFrame frame(std::move(args), fetches.size());
  auto cancellation = std::make_shared<CancellationManager>();
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
    active_steps_.insert(cancellation);
  }
  Executor::Args run_args;
  run_args.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  run_args.call_frame = &frame;
  run_args.cancellation_manager = cancellation.get();
  run_args.session_handle = handle_;
  if (options.timeout != absl::InfiniteDuration())
    run_args.deadline = absl::Now() + options.timeout;

  // The caller's cancellation cancels this step's manager; the callback holds it, so it
  // may still run after the step ended.
  const CancellationManager::Token caller_token =
      options.cancellation ? options.cancellation->manager()->NewToken() : 0;
  if (options.cancellation != nullptr &&
      !options.cancellation->manager()->RegisterCallback(
          caller_token, [cancellation] { cancellation->StartCancel(); })) {
    cancellation->StartCancel();  // cancelled before it started: it ends at once
  }
  absl::Notification finished;
  Status status;
  executable->executor->RunAsync(run_args, [&](const Status& s) {
    status = s;
    finished.Notify();
  });
  bool timed_out = false;
  if (options.timeout == absl::InfiniteDuration()) {
    finished.WaitForNotification();
  } else if (!finished.WaitForNotificationWithTimeout(options.timeout)) {
    timed_out = true;
    cancellation->StartCancel();  // wakes waiting kernels; they leave their queues intact
    finished.WaitForNotification();
  }
  if (options.cancellation != nullptr) {
    options.cancellation->manager()->DeregisterCallback(caller_token);
  }
  bool closed = false;
  {
    absl::MutexLock lock(&mu_);
    active_steps_.erase(cancellation);
    closed = closed_;
  }
  if (options.cancellation != nullptr && options.cancellation->IsCancelled() && !status.ok()) {
    return errors::Cancelled("Step was cancelled by the caller");
  }
  if (timed_out && !status.ok()) {
    return StepTimedOut(options.timeout);
  }
  if (closed && IsCancelled(status)) {
    return errors::Cancelled("Step was cancelled by an explicit call to Session::Close()");
  }
  TW_RETURN_IF_ERROR(status);
  *outputs = std::move(frame.retvals());
  // The caller owns what it gets and may write into it: a fetched tensor that still shares
  // its buffer with the runtime (a variable's value, a constant) is handed out as a copy.
  for (Tensor& t : *outputs) {
    if (t.BufferIsShared()) t = t.Copy();
  }
  return OkStatus();
}

StatusOr<std::vector<DeviceAttributes>> DirectSession::ListDevices() {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
  }
  return std::vector<DeviceAttributes>{
      {device_name_.ToString(), device_name_.type.value_or("CPU")}};
}

Status DirectSession::Close() {
  std::vector<std::shared_ptr<CancellationManager>> running;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    running.assign(active_steps_.begin(), active_steps_.end());
  }
  // Cancellation callbacks run kernels' wake-ups, so never under our lock.
  for (const auto& cm : running) cm->StartCancel();
  absl::MutexLock lock(&mu_);
  auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return active_steps_.empty(); };
  mu_.Await(absl::Condition(&drained));
  return OkStatus();
}

}  // namespace tw
