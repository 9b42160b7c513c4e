// MonitoredTrainingSession: a session for training loops that prepares the model, runs hooks
// around each step and survives the loss of a ps task.
//
//   auto session = tw::train::MonitoredTrainingSession::Create(model, {
//       .target = server->target(), .is_chief = task_index == 0,
//       .checkpoint_dir = "/tmp/train"}, std::move(hooks));
//   while (!(*session)->ShouldStop()) {
//     auto out = (*session)->Run({{images, batch.images}, {labels, batch.labels}}, {loss},
//     {train}); if (!out.ok()) return 1;
//   }
//   (*session)->Close();
//
// Preparing the model: the chief restores the latest checkpoint of checkpoint_dir, or runs the
// initializers when there is none (variables a ps task still holds are kept when every
// variable is initialized); other workers wait until every variable is initialized, logging
// every 10 s which ones they wait for.
// Summaries (chief only, as TensorFlow's): into summary_dir, or checkpoint_dir when it is
// empty, the chief writes an event file for TensorBoard (tensorweave/summary.h) with
// "global_step/sec" every log_step_count_steps steps and the value of Model::summary, when
// set, every save_summaries_steps global steps.
// Recovery: a step that fails with Aborted or Unavailable (a ps task restarted or is gone)
// closes the session, makes a new one as above (the chief restoring the latest checkpoint)
// and runs the step again; the caller sees an error only when recovery does not succeed
// within `recovery_timeout`.
#ifndef TENSORWEAVE_TRAIN_MONITORED_SESSION_H_
#define TENSORWEAVE_TRAIN_MONITORED_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tensorweave/session.h"
#include "tensorweave/status.h"
#include "tensorweave/summary.h"
#include "tensorweave/train/hooks.h"
#include "tensorweave/train/saver.h"
#include "tensorweave/train/variables.h"

namespace tw::train {

// The parts of the model the monitored session works with.
struct Model {
  Scope scope;                      // the graph: everything is built into it
  const ModelVariables* variables;  // all variables, initializers and checkpoint names
  ops::Variable global_step;
  // Optional: a serialized Summary to save every save_summaries_steps (e.g.
  // ops::MergeSummary of the model's ScalarSummary and HistogramSummary ops).
  Output summary;
};

struct MonitoredTrainingSessionOptions {
  std::string target;  // the session target, e.g. this task's server
  bool is_chief = true;
  std::string checkpoint_dir;  // "": no checkpoints (and no restore)
  int max_checkpoints_to_keep = 5;
  // The chief's checkpoint cadence (a CheckpointSaverHook is added when checkpoint_dir is set
  // and either is non-zero).
  int64_t save_checkpoint_steps = 0;
  absl::Duration save_checkpoint_secs = absl::Seconds(600);
  // Where the chief writes summaries: "" means checkpoint_dir (TensorFlow's default); with
  // both empty there are none. Created when missing.
  std::string summary_dir;
  // Global steps between two saves of Model::summary (a SummarySaverHook); 0 disables.
  int64_t save_summaries_steps = 100;
  // Local steps between two "global_step/sec" summaries and log lines (a StepCounterHook);
  // 0 disables.
  int64_t log_step_count_steps = 100;
  absl::Duration wait_for_model_timeout = absl::Minutes(5);
  absl::Duration recovery_timeout = absl::Minutes(5);
  SessionOptions session_options;  // its target is replaced by `target`
};

// Not thread-safe: one training loop drives it.
class MonitoredTrainingSession {
 public:
  static StatusOr<std::unique_ptr<MonitoredTrainingSession>> Create(
      const Model& model, MonitoredTrainingSessionOptions options,
      std::vector<std::unique_ptr<SessionRunHook>> hooks = {});
  ~MonitoredTrainingSession();

  // Runs one step (recovering as described above) and the hooks around it. The hooks'
  // fetches and feeds (SessionRunHook::BeforeRunArgs) join the step; only `fetches`' values
  // are returned. A tensor fed by two hooks, or by a hook and `feeds`, fails the step with
  // InvalidArgument before it runs (messages: see SessionRunArgs).
  StatusOr<std::vector<Tensor>> Run(const ClientSession::FeedList& feeds,
                                    const std::vector<Output>& fetches,
                                    const std::vector<Operation>& targets = {});
  // True once a hook requested stop.
  bool ShouldStop() const { return stop_requested_; }
  // Runs the hooks' End (the final checkpoint) and closes the session.
  Status Close();

  // How many times the session was remade after a failure.
  int recoveries() const { return recoveries_; }
  // The underlying session, for steps outside the hooks (e.g. evaluation).
  ClientSession* raw_session() { return session_.get(); }
  // The chief's event file writer (see "Summaries" above), for summaries of the caller's
  // own (e.g. an evaluation); null on other workers and without a summary directory.
  // Closed by Close().
  EventFileWriter* summary_writer() { return summary_writer_.get(); }

 private:
  MonitoredTrainingSession(const Model& model, MonitoredTrainingSessionOptions options,
                           std::vector<std::unique_ptr<SessionRunHook>> hooks);
  Status Init();
  // Closes the current session, if any, and makes a new one on options_.target.
  void ReplaceSession();
  // Makes a session and prepares the model in it (chief: restore or init; others: wait).
  Status CreateSession(absl::Time deadline);
  Status PrepareAsChief();
  Status WaitForModel(absl::Time deadline);
  // Names of the variables not initialized yet.
  StatusOr<std::vector<std::string>> Uninitialized();
  // Remakes the session after `cause`, giving up at `deadline`.
  Status Recover(const Status& cause, absl::Time deadline);

  Model model_;
  MonitoredTrainingSessionOptions options_;
  std::vector<std::unique_ptr<SessionRunHook>> hooks_;
  std::unique_ptr<Saver> saver_;
  std::shared_ptr<EventFileWriter> summary_writer_;  // shared with the summary hooks
  Operation init_op_;
  Output initialized_;
  Output global_step_value_;
  std::unique_ptr<ClientSession> session_;
  bool stop_requested_ = false;
  bool closed_ = false;
  int recoveries_ = 0;
};

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_MONITORED_SESSION_H_
