// The rules of `tw launch` that decide a job's fate, as Kubeflow's TFJob applies them:
// which tasks decide success, which exit codes are retried, and the per-job state machine
// that turns task exits into "restart", "job succeeded" or "job failed". Pure functions
// and a value type, no processes, so every rule is unit-tested (launch_policy_test.cc).
#ifndef TENSORWEAVE_TOOLS_LAUNCH_LAUNCH_POLICY_H_
#define TENSORWEAVE_TOOLS_LAUNCH_LAUNCH_POLICY_H_

#include <compare>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/status.h"

namespace tw::launch {

// One task of the cluster, "worker:1".
struct TaskId {
  std::string job;
  int index = 0;

  std::string ToString() const { return job + ":" + std::to_string(index); }
  friend auto operator<=>(const TaskId&, const TaskId&) = default;
};

// TFJob's restartPolicy: Never, OnFailure, ExitCode (Always is left out: a launcher whose
// tasks restart after exiting 0 never ends).
enum class RestartPolicy {
  kNever,      // no task is restarted
  kOnFailure,  // every non-zero exit is retried
  kExitCode,   // 1-127 are permanent failures, 128-255 (signals, transient) are retried
};

// TFJob's successPolicy, and one of tw launch's own for clusters without a chief.
enum class SuccessPolicy {
  kDefault,     // chief:0 (or the legacy master:0) exits 0; worker:0 when there is neither
  kAllWorkers,  // every worker exits 0 (and the chief, when there is one)
  kTask,        // one named task exits 0 (the word count's reduce:0, which prints the total)
};

// A success policy and, for kTask, its task. Made implicitly from a SuccessPolicy.
struct SuccessRule {
  SuccessRule(SuccessPolicy p = SuccessPolicy::kDefault) : policy(p) {}  // NOLINT: implicit
  explicit SuccessRule(TaskId t) : policy(SuccessPolicy::kTask), task(std::move(t)) {}
  friend bool operator==(const SuccessRule&, const SuccessRule&) = default;

  SuccessPolicy policy;
  TaskId task;  // kTask only
};

// "never", "on-failure", "exit-code". InvalidArgument listing the choices otherwise.
StatusOr<RestartPolicy> ParseRestartPolicy(std::string_view text);
std::string_view RestartPolicyName(RestartPolicy policy);
// "default", "all-workers", or a task "JOB:INDEX" (kTask). InvalidArgument otherwise.
StatusOr<SuccessRule> ParseSuccessPolicy(std::string_view text);
// InvalidArgument when `rule` names a task that `tasks` lacks.
Status CheckSuccessRule(const SuccessRule& rule, const std::vector<TaskId>& tasks);

// Whether `policy` retries a task that exited with `exit_code` (128 + N for a task killed by
// signal N, as Kubernetes reports it), ignoring any restart limit. Never true for 0.
bool IsRetryable(RestartPolicy policy, int exit_code);

// The tasks whose exit 0 makes the job succeed, in the order of `tasks`:
//  - kDefault: chief:0 when a `chief` job exists, else master:0 when a `master` job exists,
//    else worker:0 when a `worker` job exists;
//  - kAllWorkers: every task of `worker`, plus chief:0/master:0 when there is one (TFJob
//    ignores successPolicy when a chief exists; we honour the explicit request instead);
//  - a cluster with neither chief, master nor worker jobs (the word count's files, reduce,
//    map): every task;
//  - kTask: that task alone (every task, if `tasks` lacks it: CheckSuccessRule refuses that).
std::vector<TaskId> DecidingTasks(const std::vector<TaskId>& tasks, const SuccessRule& rule);

// What the supervisor does after one task exits.
enum class ExitAction {
  kNone,          // the task stays exited (0, not deciding, or not every deciding task yet)
  kRestart,       // start the task again; one restart of the limit is used
  kJobSucceeded,  // every deciding task has exited 0: stop the others, exit 0
  kJobFailed,     // a non-zero exit that will not be retried: stop the others, fail
};

// Why a failing exit is not retried, for the launcher's message.
enum class NoRestartReason { kNone, kPolicy, kLimit };

// The job's state machine: fed each task's exit, it says what to do. A value type;
// thread-compatible.
class JobPolicy {
 public:
  // `tasks` in launch order; `max_restarts` bounds restarts over the whole job, like TFJob's
  // runPolicy.backoffLimit (0: none).
  JobPolicy(std::vector<TaskId> tasks, const SuccessRule& success, RestartPolicy restart,
            int max_restarts);

  // Records that tasks()[task] exited with `exit_code`. Once the job has succeeded or
  // failed, further exits return kNone (they are the stopped tasks).
  ExitAction OnExit(size_t task, int exit_code);

  const std::vector<TaskId>& tasks() const { return tasks_; }
  const std::vector<TaskId>& deciding_tasks() const { return deciding_; }
  int restarts_used() const { return restarts_used_; }
  int max_restarts() const { return max_restarts_; }
  RestartPolicy restart_policy() const { return restart_; }
  // Why the last kJobFailed exit was not retried.
  NoRestartReason last_no_restart_reason() const { return no_restart_reason_; }
  bool decided() const { return decided_; }

 private:
  std::vector<TaskId> tasks_;
  std::vector<TaskId> deciding_;
  std::vector<bool> is_deciding_;
  std::vector<bool> succeeded_;
  // Deciding tasks whose last exit was not 0: the job succeeds when it reaches 0. Kept so
  // that each exit costs O(1), not a pass over every task (quadratic in a launch's end).
  size_t deciding_not_succeeded_ = 0;
  RestartPolicy restart_;
  int max_restarts_;
  int restarts_used_ = 0;
  bool decided_ = false;
  NoRestartReason no_restart_reason_ = NoRestartReason::kNone;
};

}  // namespace tw::launch

#endif  // TENSORWEAVE_TOOLS_LAUNCH_LAUNCH_POLICY_H_
