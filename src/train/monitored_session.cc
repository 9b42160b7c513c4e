#include "tensorweave/train/monitored_session.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "src/base/logging.h"
#include "tensorweave/ops.h"
#include "tensorweave/train/session_policy.h"

namespace tw::train {
namespace {

// TensorFlow's error for a tensor fed by two hooks, or by a hook and the caller.
Status FedTwice(const std::string& message, const std::vector<std::string>& tensors) {
  return errors::InvalidArgument(message, " Conflict(s): [", absl::StrJoin(tensors, ", "), "]");
}

}  // namespace

StatusOr<std::unique_ptr<MonitoredTrainingSession>> MonitoredTrainingSession::Create(
    const Model& model, MonitoredTrainingSessionOptions options,
    std::vector<std::unique_ptr<SessionRunHook>> hooks) {
  if (model.variables == nullptr) {
    return errors::InvalidArgument("MonitoredTrainingSession: model.variables is null");
  }
  std::unique_ptr<MonitoredTrainingSession> session(
      new MonitoredTrainingSession(model, std::move(options), std::move(hooks)));
  TW_RETURN_IF_ERROR(session->Init());
  return session;
}

MonitoredTrainingSession::MonitoredTrainingSession(
    const Model& model, MonitoredTrainingSessionOptions options,
    std::vector<std::unique_ptr<SessionRunHook>> hooks)
    : model_(model), options_(std::move(options)), hooks_(std::move(hooks)) {}

MonitoredTrainingSession::~MonitoredTrainingSession() {
  if (session_ != nullptr) (void)session_->Close();
}

Status MonitoredTrainingSession::Init() {
  // Every node the session will run is built now, before the first session sends the graph.
  const Scope scope = model_.scope.NewSubScope("monitored_session");
  init_op_ = model_.variables->InitOp(scope.WithOpName("init"));
  initialized_ = model_.variables->InitializedOp(scope.WithOpName("initialized"));
  global_step_value_ = ops::ReadVariable(scope.WithOpName("global_step_value"), model_.global_step);
  if (!options_.checkpoint_dir.empty()) {
    std::vector<SaveableVariable> saveables;
    for (const ModelVariable& v : model_.variables->all()) {
      saveables.push_back(
          {.name = v.name, .var = v.var, .full_shape = v.full_shape, .row_offset = v.row_offset});
    }
    TW_ASSIGN_OR_RETURN(saver_, Saver::Create(model_.scope, std::move(saveables),
                                              {.checkpoint_dir = options_.checkpoint_dir,
                                               .max_to_keep = options_.max_checkpoints_to_keep}));
    if (options_.save_checkpoint_steps > 0 ||
        options_.save_checkpoint_secs > absl::ZeroDuration()) {
      hooks_.push_back(
          CheckpointSaverHook(options_.save_checkpoint_steps, options_.save_checkpoint_secs));
    }
  }
  // As TensorFlow's MonitoredTrainingSession: summaries go into summary_dir or else
  // checkpoint_dir, and only the chief writes them.
  const std::string summary_dir =
      options_.summary_dir.empty() ? options_.checkpoint_dir : options_.summary_dir;
  if (options_.is_chief && !summary_dir.empty()) {
    TW_ASSIGN_OR_RETURN(summary_writer_, EventFileWriter::Create(summary_dir));
    if (options_.log_step_count_steps > 0) {
      hooks_.push_back(StepCounterHook(options_.log_step_count_steps, 0, summary_writer_));
    }
    if (options_.save_summaries_steps > 0 && model_.summary.op().valid()) {
      hooks_.push_back(
          SummarySaverHook(model_.summary, options_.save_summaries_steps, summary_writer_));
    }
  }
  const HookContext context{
      .global_step = global_step_value_, .saver = saver_.get(), .is_chief = options_.is_chief};
  for (auto& hook : hooks_) TW_RETURN_IF_ERROR(hook->Begin(context));
  TW_RETURN_IF_ERROR(model_.scope.status());
  return CreateSession(absl::Now() + options_.wait_for_model_timeout);
}

void MonitoredTrainingSession::ReplaceSession() {
  if (session_ != nullptr) (void)session_->Close();
  SessionOptions session_options = options_.session_options;
  session_options.target = options_.target;
  session_ = std::make_unique<ClientSession>(model_.scope, session_options);
}

Status MonitoredTrainingSession::CreateSession(absl::Time deadline) {
  ReplaceSession();
  TW_RETURN_IF_ERROR(options_.is_chief ? PrepareAsChief() : WaitForModel(deadline));
  for (auto& hook : hooks_) TW_RETURN_IF_ERROR(hook->AfterCreateSession(*session_));
  return OkStatus();
}

StatusOr<std::vector<std::string>> MonitoredTrainingSession::Uninitialized() {
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> flags, session_->Run({}, {initialized_}));
  std::vector<std::string> names;
  const auto& all = model_.variables->all();
  for (size_t i = 0; i < all.size(); ++i) {
    if (!flags[0].flat<bool>()[i]) names.push_back(all[i].var.op().name());
  }
  return names;
}

Status MonitoredTrainingSession::PrepareAsChief() {
  TW_ASSIGN_OR_RETURN(std::vector<std::string> missing, Uninitialized());
  StatusOr<std::string> latest = errors::NotFound("no saver");
  if (!missing.empty() && saver_ != nullptr) {
    latest = LatestCheckpoint(options_.checkpoint_dir);
    if (!latest.ok() && !IsNotFound(latest.status())) return latest.status();
  }
  switch (ChooseChiefPreparation(missing.empty(), latest.ok())) {
    case ChiefPreparation::kKeepModel:
      Log().info("model is ready: every variable is initialized");
      return OkStatus();
    case ChiefPreparation::kRestoreCheckpoint:
      TW_RETURN_IF_ERROR(saver_->Restore(*session_, *latest));
      Log().info("restored the model from {}", *latest);
      return OkStatus();
    case ChiefPreparation::kInitialize:
      break;
  }
  TW_RETURN_IF_ERROR(session_->Run({}, {}, {init_op_}).status());
  Log().info("initialized the model ({} variables)", model_.variables->all().size());
  return OkStatus();
}

Status MonitoredTrainingSession::WaitForModel(absl::Time deadline) {
  // After a failed poll the session may be bound to a task incarnation that is gone.
  return WaitForModelReady([this] { return Uninitialized(); }, absl::Now(), deadline,
                           [this] { ReplaceSession(); });
}

Status MonitoredTrainingSession::Recover(const Status& cause, absl::Time deadline) {
  Log().warn("step failed ({}); making a new session", cause.ToString());
  TW_RETURN_IF_ERROR(RetryWhileRecoverable([&] { return CreateSession(deadline); }, deadline,
                                           options_.recovery_timeout));
  ++recoveries_;
  Log().info("recovered after {} (recovery {})", cause.ToString(), recoveries_);
  return OkStatus();
}

StatusOr<std::vector<Tensor>> MonitoredTrainingSession::Run(const ClientSession::FeedList& feeds,
                                                            const std::vector<Output>& fetches,
                                                            const std::vector<Operation>& targets) {
  if (closed_) return errors::FailedPrecondition("MonitoredTrainingSession is closed");
  std::vector<Output> all_fetches = fetches;
  std::vector<size_t> hook_offsets;
  ClientSession::FeedList all_feeds;
  absl::flat_hash_set<std::string> hook_fed;
  for (auto& hook : hooks_) {
    SessionRunArgs args = hook->BeforeRunArgs();
    hook_offsets.push_back(all_fetches.size());
    for (Output& o : args.fetches) all_fetches.push_back(std::move(o));
    // As TensorFlow's MonitoredSession: a tensor fed twice fails the step before it runs.
    std::vector<std::string> conflicts;
    for (const auto& feed : args.feeds) {
      if (hook_fed.contains(feed.first.name())) conflicts.push_back(feed.first.name());
    }
    if (!conflicts.empty()) return FedTwice("Same tensor is fed by two hooks.", conflicts);
    for (auto& feed : args.feeds) {
      hook_fed.insert(feed.first.name());
      all_feeds.push_back(std::move(feed));
    }
  }
  hook_offsets.push_back(all_fetches.size());
  std::vector<std::string> conflicts;
  for (const auto& feed : feeds) {
    if (hook_fed.contains(feed.first.name())) conflicts.push_back(feed.first.name());
  }
  if (!conflicts.empty()) {
    return FedTwice("Same tensor is fed by a SessionRunHook and user.", conflicts);
  }
  all_feeds.insert(all_feeds.end(), feeds.begin(), feeds.end());
  StatusOr<std::vector<Tensor>> values = session_->Run(all_feeds, all_fetches, targets);
  // One recovery deadline per step, however many times the step fails after a recovery.
  std::optional<absl::Time> deadline;
  auto recover = [&](const Status& cause) {
    if (!deadline) deadline = absl::Now() + options_.recovery_timeout;
    return Recover(cause, *deadline);
  };
  while (!values.ok() && IsRecoverable(values.status())) {
    TW_RETURN_IF_ERROR(recover(values.status()));
    values = session_->Run(all_feeds, all_fetches, targets);
  }
  if (!values.ok()) return values.status();
  RunContext context;
  for (size_t h = 0; h < hooks_.size(); ++h) {
    std::vector<Tensor> mine(values->begin() + static_cast<std::ptrdiff_t>(hook_offsets[h]),
                             values->begin() + static_cast<std::ptrdiff_t>(hook_offsets[h + 1]));
    Status s = hooks_[h]->AfterRun(mine, &context);
    // A hook's own step (a checkpoint, a re-read of the global step) can meet a lost task
    // too; the training step itself is done, so only the session is remade.
    if (!s.ok() && IsRecoverable(s)) s = recover(s);
    TW_RETURN_IF_ERROR(s);
  }
  if (context.stop_requested()) stop_requested_ = true;
  values->resize(fetches.size());
  return values;
}

Status MonitoredTrainingSession::Close() {
  if (closed_) return OkStatus();
  closed_ = true;
  Status status;
  for (auto& hook : hooks_) {
    Status s = hook->End(*session_);
    if (status.ok()) status = s;
  }
  Status closed = session_->Close();
  session_.reset();
  if (summary_writer_ != nullptr) {
    Status s = summary_writer_->Close();
    if (closed.ok()) closed = s;
  }
  return status.ok() ? closed : status;
}

}  // namespace tw::train
