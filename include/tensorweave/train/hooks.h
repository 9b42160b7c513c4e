// Hooks around the steps of a MonitoredTrainingSession: stopping, checkpoints, step rate
// and loss logging, summaries for TensorBoard, NaN guard. Each hook may add fetches and feeds to a
// step and look at the fetched values.
#ifndef TENSORWEAVE_TRAIN_HOOKS_H_
#define TENSORWEAVE_TRAIN_HOOKS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tensorweave/session.h"
#include "tensorweave/status.h"
#include "tensorweave/summary.h"
#include "tensorweave/train/saver.h"

namespace tw::train {

// What hooks see of the model.
struct HookContext {
  Output global_step;  // an int64 scalar: the global step's value
  Saver* saver = nullptr;
  bool is_chief = false;
};

// Given to AfterRun: lets a hook end training after this step.
class RunContext {
 public:
  void RequestStop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

 private:
  bool stop_requested_ = false;
};

// What a hook adds to the next step, as TensorFlow's SessionRunArgs: tensors to fetch (their
// values go to the hook's AfterRun, in this order) and tensors to feed. A tensor may be fed
// by one hook only and not also by the caller of MonitoredTrainingSession::Run; otherwise
// the step does not run and fails with InvalidArgument "Same tensor is fed by two hooks."
// or "Same tensor is fed by a SessionRunHook and user.", followed by " Conflict(s): " and
// the tensors' names.
struct SessionRunArgs {
  std::vector<Output> fetches;
  ClientSession::FeedList feeds;
};

// Called on the thread running the session; a hook is used by one session.
class SessionRunHook {
 public:
  virtual ~SessionRunHook() = default;
  // Once, when the monitored session is made (before any session exists).
  virtual Status Begin(const HookContext&) { return OkStatus(); }
  // Each time a session is made or remade after a failure, once the model is ready.
  virtual Status AfterCreateSession(ClientSession&) { return OkStatus(); }
  // Tensors to fetch with the next step (what the default BeforeRunArgs fetches).
  virtual std::vector<Output> BeforeRun() { return {}; }
  // What to fetch and feed with the next step: called once per step of the monitored
  // session (not again when the step is rerun after a recovery). A hook overrides this or
  // BeforeRun; by default it is BeforeRun()'s fetches and no feeds.
  virtual SessionRunArgs BeforeRunArgs() { return {.fetches = BeforeRun(), .feeds = {}}; }
  // The values of the fetches, in order. An error ends the step's Run with it.
  virtual Status AfterRun(const std::vector<Tensor>& values, RunContext* context) {
    (void)values;
    (void)context;
    return OkStatus();
  }
  // When the monitored session closes normally.
  virtual Status End(ClientSession&) { return OkStatus(); }
};

// Requests stop once the global step reaches `last_step` (TensorFlow's
// StopAtStepHook(last_step=...)).
std::unique_ptr<SessionRunHook> StopAtStepHook(int64_t last_step);
// Requests stop `num_steps` global steps after the step the first session starts from
// (TensorFlow's StopAtStepHook(num_steps=...)): the last step is the global step read in
// the first AfterCreateSession plus `num_steps`, and stays so when the session is remade
// after a failure. As in TensorFlow, num_steps <= 0 stops after the first step.
std::unique_ptr<SessionRunHook> StopAtStepHookForSteps(int64_t num_steps);

// Saves a checkpoint (chief only) every `every_steps` global steps and/or `every_secs`
// (0 disables either), after the first step of each session, and at the end.
std::unique_ptr<SessionRunHook> CheckpointSaverHook(
    int64_t every_steps, absl::Duration every_secs = absl::ZeroDuration());

// Logs "global step N: X global steps/s, Y examples/s on this worker" every `every_steps`
// global steps (a SecondOrStepTimer, tensorweave/train/step_timer.h; the first step starts
// the clock), without the examples when `examples_per_step` is 0. With a `writer`, also
// writes X there as the scalar summary "global_step/sec" at step N, as TensorFlow's
// StepCounterHook with an output_dir.
std::unique_ptr<SessionRunHook> StepCounterHook(int64_t every_steps, int64_t examples_per_step,
                                                std::shared_ptr<EventFileWriter> writer = nullptr);

// Writes the value of `summary` (a serialized Summary: ops::MergeSummary's or another
// summary op's output) into `writer` at the global step, as TensorFlow's SummarySaverHook:
// on the first step of the monitored session (after a SessionLog START event, which lets
// TensorBoard drop what a restarted run repeats), then at the first step at least
// `every_steps` global steps after the last one written; flushes the writer at the end.
// The step written is the global step read again after the step ran (so it is the step
// the summarized values lead to). Begin fails with InvalidArgument when `summary` is not
// set or `writer` is null; an error of the summary op or the writer ends the step's Run.
std::unique_ptr<SessionRunHook> SummarySaverHook(Output summary, int64_t every_steps,
                                                 std::shared_ptr<EventFileWriter> writer);

// Logs "step N: name = value, ..." every `every_steps` local steps (scalars).
std::unique_ptr<SessionRunHook> LoggingHook(std::map<std::string, Output> tensors,
                                            int64_t every_steps);

// Fails the step with InvalidArgument ("NaN loss during training") when `loss` is NaN or
// infinite, or only requests stop when `fail_on_nan` is false.
std::unique_ptr<SessionRunHook> NanTensorHook(Output loss, bool fail_on_nan = true);

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_HOOKS_H_
