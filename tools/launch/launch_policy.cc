#include "tools/launch/launch_policy.h"

#include <algorithm>
#include <utility>

namespace tw::launch {

StatusOr<RestartPolicy> ParseRestartPolicy(std::string_view text) {
  if (text == "never") return RestartPolicy::kNever;
  if (text == "on-failure") return RestartPolicy::kOnFailure;
  if (text == "exit-code") return RestartPolicy::kExitCode;
  return errors::InvalidArgument("\"", text, "\" is not one of never, on-failure, exit-code");
}

std::string_view RestartPolicyName(RestartPolicy policy) {
  switch (policy) {
    case RestartPolicy::kNever:
      return "never";
    case RestartPolicy::kOnFailure:
      return "on-failure";
    case RestartPolicy::kExitCode:
      return "exit-code";
  }
  return "never";
}

StatusOr<SuccessRule> ParseSuccessPolicy(std::string_view text) {
  if (text == "default") return SuccessRule(SuccessPolicy::kDefault);
  if (text == "all-workers") return SuccessRule(SuccessPolicy::kAllWorkers);
  const size_t colon = text.rfind(':');
  int index = -1;
  if (colon != std::string_view::npos && colon > 0 && colon + 1 < text.size() &&
      colon + 7 >= text.size()) {
    const std::string_view digits = text.substr(colon + 1);
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      index = std::stoi(std::string(digits));
    }
  }
  if (index < 0) {
    return errors::InvalidArgument("\"", text,
                                   "\" is not one of default, all-workers, or a task JOB:INDEX");
  }
  return SuccessRule(TaskId{std::string(text.substr(0, colon)), index});
}

Status CheckSuccessRule(const SuccessRule& rule, const std::vector<TaskId>& tasks) {
  if (rule.policy != SuccessPolicy::kTask ||
      std::find(tasks.begin(), tasks.end(), rule.task) != tasks.end()) {
    return OkStatus();
  }
  return errors::InvalidArgument(rule.task.ToString(), " is not a task of the cluster");
}

bool IsRetryable(RestartPolicy policy, int exit_code) {
  if (exit_code == 0) return false;
  switch (policy) {
    case RestartPolicy::kNever:
      return false;
    case RestartPolicy::kOnFailure:
      return true;
    case RestartPolicy::kExitCode:
      // TFJob's rule (kubeflow/common IsRetryableExitCode): 128 and above are signals and
      // other transient failures; 1-127 are the program's own verdict.
      return exit_code >= 128;
  }
  return false;
}

std::vector<TaskId> DecidingTasks(const std::vector<TaskId>& tasks, const SuccessRule& rule) {
  if (rule.policy == SuccessPolicy::kTask) {
    if (std::find(tasks.begin(), tasks.end(), rule.task) != tasks.end()) return {rule.task};
    return tasks;
  }
  const SuccessPolicy policy = rule.policy;
  auto has_job = [&](std::string_view job) {
    return std::any_of(tasks.begin(), tasks.end(), [&](const TaskId& t) { return t.job == job; });
  };
  std::string chief_job;
  if (has_job("chief")) {
    chief_job = "chief";
  } else if (has_job("master")) {
    chief_job = "master";
  }
  std::vector<TaskId> out;
  if (policy == SuccessPolicy::kAllWorkers && has_job("worker")) {
    for (const TaskId& t : tasks) {
      if (t.job == "worker" || (t.job == chief_job && t.index == 0)) out.push_back(t);
    }
    return out;
  }
  const std::string decider = !chief_job.empty() ? chief_job : has_job("worker") ? "worker" : "";
  for (const TaskId& t : tasks) {
    if (decider.empty() || (t.job == decider && t.index == 0)) out.push_back(t);
  }
  // A sparse chief or worker job without task 0 has no decider; then every task decides,
  // rather than a job that can never succeed.
  if (out.empty()) out = tasks;
  return out;
}

JobPolicy::JobPolicy(std::vector<TaskId> tasks, const SuccessRule& success, RestartPolicy restart,
                     int max_restarts)
    : tasks_(std::move(tasks)),
      deciding_(DecidingTasks(tasks_, success)),
      is_deciding_(tasks_.size()),
      succeeded_(tasks_.size()),
      restart_(restart),
      max_restarts_(std::max(0, max_restarts)) {
  // Deciding tasks are a subsequence of tasks_ (DecidingTasks keeps the order), so one merge
  // pass marks them; a search per task was quadratic with every worker deciding.
  for (size_t i = 0, d = 0; i < tasks_.size() && d < deciding_.size(); ++i) {
    if (tasks_[i] == deciding_[d]) {
      is_deciding_[i] = true;
      ++d;
    }
  }
  deciding_not_succeeded_ = deciding_.size();
}

ExitAction JobPolicy::OnExit(size_t task, int exit_code) {
  if (decided_ || task >= tasks_.size()) return ExitAction::kNone;
  if (exit_code != 0) {
    if (is_deciding_[task] && succeeded_[task]) ++deciding_not_succeeded_;
    succeeded_[task] = false;
    if (!IsRetryable(restart_, exit_code)) {
      no_restart_reason_ = NoRestartReason::kPolicy;
    } else if (restarts_used_ >= max_restarts_) {
      no_restart_reason_ = NoRestartReason::kLimit;
    } else {
      ++restarts_used_;
      return ExitAction::kRestart;
    }
    decided_ = true;
    return ExitAction::kJobFailed;
  }
  if (is_deciding_[task] && !succeeded_[task]) --deciding_not_succeeded_;
  succeeded_[task] = true;
  if (deciding_not_succeeded_ > 0) return ExitAction::kNone;
  decided_ = true;
  return ExitAction::kJobSucceeded;
}

}  // namespace tw::launch
