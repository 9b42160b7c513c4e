// Synchronous replicas: each update of the model averages the gradients of
// `replicas_to_aggregate` workers; with more workers than that (backup workers), the
// slowest ones' gradients of a step are dropped as stale instead of holding everyone up.
//
// The graph (built by every worker, shared by name):
//  - beside each variable, a ConditionalAccumulator "<var>/grad_accumulator";
//  - beside the global step, the FIFO queue "sync_token_queue" of int64 tokens;
//  - on the worker, its local step "sync_local_step" (not saved).
// A worker's train op applies its gradients to the accumulators, tagged with its local step,
// then takes a token (waiting while there is none) and makes the token its local step.
// The chief runs a loop on a thread of its own (started by MakeHook's hook): take the
// average from every accumulator (waiting for replicas_to_aggregate fresh gradients), apply
// it with the optimizer, which increments the global step, raise the accumulators' global
// step to it, and put total_num_replicas tokens carrying it into the token queue.
// Gradients computed from parameters older than the latest update are stale and dropped.
// The chief may also put initial tokens into the queue when its session is made (MakeHook's
// num_tokens): workers then take one without waiting for an update, i.e. run a step ahead.
// Stop() closes the token queue: workers waiting for a token then fail with OutOfRange,
// which tells them that training is over.
#ifndef TENSORWEAVE_TRAIN_SYNC_REPLICAS_H_
#define TENSORWEAVE_TRAIN_SYNC_REPLICAS_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tensorweave/ops/queue_ops.h"
#include "tensorweave/ops/training_ops.h"
#include "tensorweave/train/hooks.h"
#include "tensorweave/train/optimizer.h"

namespace tw::train {

struct SyncReplicasOptions {
  int replicas_to_aggregate = 1;
  int total_num_replicas = 1;  // >= replicas_to_aggregate; the rest are backups
  // Where this worker's local step lives, e.g. /job:worker/task:1; "" is the scope's device.
  std::string worker_device;
};

// Builds graph nodes in Create; the hook's chief loop runs on a thread of its own.
// Thread-safe for Stop().
class SyncReplicas {
 public:
  // `grads` from optimizer->ComputeGradients; sparse gradients are aggregated densely.
  static StatusOr<std::unique_ptr<SyncReplicas>> Create(const Scope& scope, Optimizer* optimizer,
                                                        const std::vector<GradAndVar>& grads,
                                                        ModelVariables* variables,
                                                        const ops::Variable& global_step,
                                                        SyncReplicasOptions options);
  ~SyncReplicas();

  // The worker's step: push gradients, wait for the chief's update.
  Operation train_op() const { return train_op_; }
  // The chief's update: take, apply, release tokens (what the chief loop runs).
  Operation chief_update_op() const { return chief_update_op_; }

  // A hook that sets the worker's local step from the global step whenever a session is
  // made and, on the chief, starts the chief loop after the model is ready, on a session of
  // its own made with `chief_session` (the training session's target and filters).
  // On the chief, each time a session is made (as TensorFlow's hook: a restarted ps task's
  // queue is new and empty), it first puts `num_tokens` tokens carrying the global step into
  // the token queue, as TensorFlow's make_session_run_hook(is_chief, num_tokens):
  // kTokensPerAggregate (-1) means replicas_to_aggregate; 0 none. The hook's Begin fails
  // with InvalidArgument "Too few tokens to finish the first step: N (given) vs M (needed)"
  // when num_tokens is below M = replicas_to_aggregate - total_num_replicas (here <= 0),
  // and other values <= 0 add none. Unlike TensorFlow (default -1), the default is 0: no
  // initial tokens, every worker's first step waits for the first update.
  static constexpr int kTokensPerAggregate = -1;
  std::unique_ptr<SessionRunHook> MakeHook(bool is_chief, SessionOptions chief_session = {},
                                           int num_tokens = 0);

  // Ends the chief loop (if running) and closes the token queue. Idempotent.
  void Stop();

  // The parts MakeHook's hook uses, for callers with hooks of their own (the Python
  // front-end): the chief loop, started once on a session of its own (no-op after Stop);
  // the op setting the local step from the global step; the op putting `n` tokens into the
  // queue for `num_init_tokens()` fed {n}; the op closing the token queue; and the local
  // step, a variable of this worker that checkpoints leave out.
  void StartChiefLoop(const SessionOptions& options);
  Operation init_local_step_op() const { return init_local_step_; }
  Operation init_tokens_op() const { return init_tokens_; }
  Output num_init_tokens() const { return num_init_tokens_; }
  Operation close_tokens_op() const { return close_tokens_; }
  const ops::Variable& local_step() const { return local_step_; }

 private:
  friend class SyncReplicasHook;
  SyncReplicas() = default;
  void ChiefLoop(SessionOptions options);

  Scope scope_ = Scope::NewRootScope();
  SyncReplicasOptions options_;
  Operation train_op_;
  Operation chief_update_op_;
  Operation init_local_step_;
  Operation reset_accumulators_;
  Operation close_tokens_;
  // Tokens of the current global step without an update: frees workers waiting for one.
  Operation release_workers_;
  // The chief's initial tokens: as many (of the current global step) as the int32 vector
  // `num_init_tokens_` = {n} fed says.
  Output num_init_tokens_;
  Operation init_tokens_;
  ops::Variable local_step_;

  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<ClientSession> chief_session_ ABSL_GUARDED_BY(mu_);
  std::thread chief_thread_;
};

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_SYNC_REPLICAS_H_
