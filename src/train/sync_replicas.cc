#include "tensorweave/train/sync_replicas.h"

#include "src/base/logging.h"
#include "tensorweave/ops.h"

namespace tw::train {
namespace {

// The global step's value as int64 (local steps, tokens and accumulators count in int64;
// TF 1.x programs also make int32 global steps).
Output StepValue(const Scope& s, const ops::Variable& global_step) {
  const Output value = ops::ReadVariable(s, global_step);
  return global_step.dtype == DT_INT64 ? value : ops::Cast(s, value, DT_INT64);
}

}  // namespace

StatusOr<std::unique_ptr<SyncReplicas>> SyncReplicas::Create(
    const Scope& scope, Optimizer* optimizer, const std::vector<GradAndVar>& grads,
    ModelVariables* variables, const ops::Variable& global_step, SyncReplicasOptions options) {
  if (options.replicas_to_aggregate < 1 ||
      options.total_num_replicas < options.replicas_to_aggregate) {
    return errors::InvalidArgument("SyncReplicas: need 1 <= replicas_to_aggregate (",
                                   options.replicas_to_aggregate, ") <= total_num_replicas (",
                                   options.total_num_replicas, ")");
  }
  std::unique_ptr<SyncReplicas> sync(new SyncReplicas());
  sync->scope_ = scope;
  sync->options_ = options;
  const Scope s = scope.NewSubScope("sync_replicas");

  const ops::Queue tokens = ops::FIFOQueue(s.ColocateWith(global_step.op()), {DT_INT64},
                                           {.shapes = {{}}, .shared_name = "sync_token_queue"});
  const ops::Variable local_step =
      ops::MakeVariable(options.worker_device.empty() ? s : s.WithDevice(options.worker_device),
                        "sync_local_step", DT_INT64, {});
  sync->local_step_ = local_step;
  const Output local_step_value = ops::ReadVariable(s, local_step);

  std::vector<Operation> pushes;
  std::vector<GradAndVar> averaged;
  std::vector<ops::Accumulator> accumulators;
  for (const GradAndVar& g : grads) {
    if (!g.grad.exists()) continue;
    TW_ASSIGN_OR_RETURN(Output dense, ToDense(s, g.grad));
    const Scope beside = s.ColocateWith(g.var.op());
    ops::Accumulator acc = ops::ConditionalAccumulator(
        beside, g.var.dtype, g.var.shape, {.shared_name = g.var.op().name() + "/grad_accumulator"});
    pushes.push_back(ops::AccumulatorApplyGradient(s, acc, local_step_value, dense));
    averaged.push_back({Gradient{.dense = ops::AccumulatorTakeGradient(
                                     beside, acc, options.replicas_to_aggregate)},
                        g.var});
    accumulators.push_back(acc);
  }
  if (pushes.empty()) {
    return errors::InvalidArgument("SyncReplicas: no variable has a gradient");
  }
  // Worker: push, wait for a token, continue from the step it carries.
  const Output token = ops::QueueDequeue(s.WithControlDependencies(pushes), tokens)[0];
  sync->train_op_ = ops::Assign(s.WithOpName("train"), local_step, token).op();
  sync->init_local_step_ =
      ops::Assign(s.WithOpName("init_local_step"), local_step, StepValue(s, global_step)).op();

  // Chief: apply the averages, then move the accumulators on and release the workers. The
  // optimizer gets the outer scope: its slots are named after their variables ("w/Adagrad"),
  // as TensorFlow names them, not "sync_replicas/w/Adagrad".
  TW_ASSIGN_OR_RETURN(Operation apply,
                      optimizer->ApplyGradients(scope, averaged, variables, global_step));
  const Scope after_apply = s.WithControlDependencies({apply});
  const Output new_step = StepValue(after_apply, global_step);
  std::vector<Operation> moved, reset;
  const Output current_step = StepValue(s, global_step);
  for (const ops::Accumulator& acc : accumulators) {
    moved.push_back(ops::AccumulatorSetGlobalStep(s, acc, new_step));
    reset.push_back(ops::AccumulatorSetGlobalStep(s, acc, current_step, /*reset=*/true));
  }
  sync->reset_accumulators_ = ops::Group(s.WithOpName("reset_accumulators"), reset);
  const Output released =
      ops::Fill(s, Tensor::FromVector<int32_t>({options.total_num_replicas}), new_step);
  sync->chief_update_op_ = ops::QueueEnqueueMany(
      s.WithControlDependencies(moved).WithOpName("chief_update"), tokens, {released});
  sync->close_tokens_ = ops::QueueClose(s.WithOpName("close_tokens"), tokens,
                                        /*cancel_pending_enqueues=*/true);
  sync->release_workers_ = ops::QueueEnqueueMany(
      s.WithOpName("release_workers"), tokens,
      {ops::Fill(s, Tensor::FromVector<int32_t>({options.total_num_replicas}), current_step)});
  sync->num_init_tokens_ = ops::Placeholder(s.WithOpName("num_init_tokens"), DT_INT32,
                                            {.shape = std::vector<int64_t>{1}});
  sync->init_tokens_ = ops::QueueEnqueueMany(s.WithOpName("init_tokens"), tokens,
                                             {ops::Fill(s, sync->num_init_tokens_, current_step)});
  TW_RETURN_IF_ERROR(scope.status());
  return sync;
}

SyncReplicas::~SyncReplicas() { Stop(); }

void SyncReplicas::StartChiefLoop(const SessionOptions& options) {
  absl::MutexLock lock(&mu_);
  if (stopped_ || chief_thread_.joinable()) return;
  chief_session_ = std::make_unique<ClientSession>(scope_, options);
  chief_thread_ = std::thread([this, options] { ChiefLoop(options); });
}

void SyncReplicas::ChiefLoop(SessionOptions options) {
  int64_t updates = 0;
  bool released = false;  // the workers were released since the last update
  while (true) {
    ClientSession* session;
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) break;
      session = chief_session_.get();
    }
    auto done = session->Run({}, {}, {chief_update_op_});
    if (done.ok()) {
      ++updates;
      released = false;
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) break;
    }
    if (!IsAborted(done.status()) && !IsUnavailable(done.status())) {
      // Not a lost or restarted task: retrying cannot help. Close the token queue so that
      // the workers stop instead of waiting for an update that will not come.
      Log().error("synchronous updates stop: {}", done.status().ToString());
      (void)session->Run({}, {}, {close_tokens_});
      break;
    }
    // A lost or restarted ps task: go on with a new session, as the workers do. Workers
    // that pushed their gradients wait for a token this update would have sent; release
    // them (once per outage: retries fail every 200 ms while the task is down), so that
    // their next steps meet the restarted task too and their sessions recover (the
    // chief's restores the checkpoint). Otherwise the chief's own training step waits for
    // a token while this loop waits for its gradients.
    Log().warn("synchronous update failed ({}); retrying", done.status().ToString());
    absl::SleepFor(absl::Milliseconds(200));
    std::unique_ptr<ClientSession> fresh = std::make_unique<ClientSession>(scope_, options);
    if (!released) {
      Status release = fresh->Run({}, {}, {release_workers_}).status();
      released = release.ok();
      if (released) {
        Log().info("released the workers waiting for this update");
      } else {
        Log().warn("could not release the workers yet: {}", release.ToString());
      }
    }
    std::unique_ptr<ClientSession> old;
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) break;
      old = std::move(chief_session_);
      chief_session_ = std::move(fresh);
    }
    (void)old->Close();
  }
  Log().info("synchronous updates: {} applied by the chief", updates);
}

void SyncReplicas::Stop() {
  std::unique_ptr<ClientSession> session;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    session = std::move(chief_session_);
  }
  if (session != nullptr) {
    // Workers waiting for a token learn that training is over; then the chief loop's
    // pending take is cancelled by closing its session.
    (void)session->Run({}, {}, {close_tokens_});
    (void)session->Close();
  }
  if (chief_thread_.joinable()) chief_thread_.join();
}

class SyncReplicasHook : public SessionRunHook {
 public:
  SyncReplicasHook(SyncReplicas* sync, bool is_chief, SessionOptions options, int num_tokens)
      : sync_(sync),
        is_chief_(is_chief),
        options_(std::move(options)),
        num_tokens_(num_tokens == SyncReplicas::kTokensPerAggregate
                        ? sync->options_.replicas_to_aggregate
                        : num_tokens) {}
  Status Begin(const HookContext&) override {
    // TensorFlow's get_init_tokens_op checks this on the chief only.
    if (!is_chief_) return OkStatus();
    const int needed = sync_->options_.replicas_to_aggregate - sync_->options_.total_num_replicas;
    if (num_tokens_ < needed) {
      return errors::InvalidArgument("Too few tokens to finish the first step: ", num_tokens_,
                                     " (given) vs ", needed, " (needed)");
    }
    return OkStatus();
  }
  Status AfterCreateSession(ClientSession& session) override {
    // After a restore from an older checkpoint, accumulators on ps tasks that kept running
    // hold a newer global step, and every fresh gradient would look stale to them. A
    // gradient that reaches such an accumulator before this reset is still dropped as
    // stale (tests/integration/training_recovery_test.cc restarts one of two ps tasks).
    if (is_chief_) {
      TW_RETURN_IF_ERROR(session.Run({}, {}, {sync_->reset_accumulators_}).status());
    }
    TW_RETURN_IF_ERROR(session.Run({}, {}, {sync_->init_local_step_}).status());
    if (is_chief_ && num_tokens_ > 0) {
      TW_RETURN_IF_ERROR(
          session
              .Run({{sync_->num_init_tokens_, Tensor::FromVector<int32_t>({num_tokens_})}}, {},
                   {sync_->init_tokens_})
              .status());
    }
    if (is_chief_) sync_->StartChiefLoop(options_);
    return OkStatus();
  }

 private:
  SyncReplicas* sync_;
  const bool is_chief_;
  const SessionOptions options_;
  const int num_tokens_;  // kTokensPerAggregate resolved
};

std::unique_ptr<SessionRunHook> SyncReplicas::MakeHook(bool is_chief, SessionOptions chief_session,
                                                       int num_tokens) {
  return std::make_unique<SyncReplicasHook>(this, is_chief, std::move(chief_session), num_tokens);
}

}  // namespace tw::train
