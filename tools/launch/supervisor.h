// The process side of `tw launch`: starts one process per task, relays and prefixes its
// output, applies the job's restart and success policy (JobPolicy) to the exits, and stops
// every task (SIGTERM, SIGKILL after a grace period) when the job ends or the launcher is
// told to stop.
//
// Each task runs in its own process group with stdin from /dev/null, its stdout and stderr
// on pipes, and PR_SET_PDEATHSIG(SIGKILL), so it dies even if the launcher is SIGKILLed.
// When a task's main process exits, the rest of its process group is killed, as when a
// container's main process exits. One thread, one poll() loop; signals (SIGCHLD, SIGINT,
// SIGTERM, SIGHUP) arrive through a signalfd while Run() blocks them.
#ifndef TENSORWEAVE_TOOLS_LAUNCH_SUPERVISOR_H_
#define TENSORWEAVE_TOOLS_LAUNCH_SUPERVISOR_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tensorweave/status.h"
#include "tools/launch/console.h"
#include "tools/launch/launch_policy.h"

namespace tw::launch {

struct SupervisorOptions {
  std::string program_path;       // what is executed (no PATH search), e.g. "/bin/sh"
  std::vector<std::string> argv;  // argv[0] as the user wrote it, then the arguments
  RestartPolicy restart = RestartPolicy::kNever;
  int max_restarts = 3;  // restarts allowed over the whole job (TFJob's backoffLimit)
  SuccessRule success;
  std::chrono::milliseconds grace{10000};         // SIGTERM -> SIGKILL
  std::chrono::milliseconds restart_delay{1000};  // between a task's exit and its restart
  std::string log_dir;  // when set, <log_dir>/<job>-<index>.log keeps each task's output
  ConsoleOptions console;
};

// Set in every run's environment to the number of restarts of its task before it: 0 at the
// first start, N at the Nth restart (RuntimeSettings::restart_count reads it).
inline constexpr char kRestartCountVar[] = "TW_RESTART_COUNT";

// One task to run.
struct TaskLaunch {
  TaskId id;
  std::string address;  // shown in the start-up message
  // Its whole environment, "NAME=value"; kRestartCountVar is replaced by the launcher's.
  std::vector<std::string> env;
  std::string metrics_address;  // "127.0.0.1:PORT" when it serves metrics (shown at start)
};

enum class JobOutcome { kSucceeded, kFailed, kInterrupted };

struct TaskSummary {
  TaskId id;
  std::string state;   // "exited 0", "stopped (exited 143, SIGTERM)", ...
  int exit_code = -1;  // of the last run; 128 + N when killed by signal N; -1 never ran
  int restarts = 0;
};

struct LaunchResult {
  JobOutcome outcome = JobOutcome::kFailed;
  // What `tw launch` exits with: 0 on success; the exit code of the task that failed the
  // job (1-255), or 1 when a task could not be started; 128 + N when stopped by signal N.
  int exit_code = 1;
  std::string verdict;  // "job succeeded: chief:0 exited 0", "job failed: worker:1 exited ..."
  std::vector<TaskSummary> tasks;
};

// Runs one job once. Not thread-safe; Run() is called once.
class Supervisor {
 public:
  // Opens the log files (InvalidArgument/PermissionDenied naming the file). `tasks` must
  // not be empty.
  static StatusOr<std::unique_ptr<Supervisor>> Create(SupervisorOptions options,
                                                      std::vector<TaskLaunch> tasks);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts every task and returns when the job has ended and every task process has been
  // reaped. Prints the tasks' lines, the launcher's messages and a summary per task.
  // Internal when the signalfd cannot be set up (before any task starts).
  StatusOr<LaunchResult> Run();

 private:
  struct Task;
  enum class Phase { kRunning, kStopping };

  Supervisor(SupervisorOptions options, std::vector<TaskLaunch> tasks);

  Status Spawn(size_t task);
  void EmitLine(Task& task, bool is_stderr, std::string_view line);
  void ReadOutput(Task& task, bool is_stderr, bool drain);
  void ReadExecStatus(Task& task);
  void ReapChildren();
  void OnTaskExit(size_t task, int wait_status);
  void OnStopSignal(int signal);
  void BeginStop(JobOutcome outcome, int exit_code, std::string verdict);
  void KillLiveTasks(int signal);
  void HandleTimers();
  bool AnyTaskAlive() const;
  int PollTimeoutMs() const;
  std::string StateText(const Task& task) const;
  void ShowStatus();
  void PrintSummary();
  void CloseTaskFds(Task& task);

  SupervisorOptions options_;
  std::vector<Task> tasks_;
  // The running tasks by pid: each reaped child is found in O(1), not by a pass over every
  // task (which made the end of a large launch quadratic).
  std::unordered_map<int, size_t> task_of_pid_;
  JobPolicy policy_;
  Console console_;
  Phase phase_ = Phase::kRunning;
  LaunchResult result_;
  int signal_fd_ = -1;
  int null_fd_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point kill_at_;     // SIGKILL the stragglers
  std::chrono::steady_clock::time_point give_up_at_;  // stop waiting for unkillable ones
  bool killed_all_ = false;
  bool grace_expired_ = false;  // SIGKILL came because the grace period ran out
  // Prepared before fork: the child only calls async-signal-safe functions.
  std::vector<char*> argv_ptrs_;
};

}  // namespace tw::launch

#endif  // TENSORWEAVE_TOOLS_LAUNCH_SUPERVISOR_H_
