// Test helper: run a program to completion with a bounded time, capturing its output.
#ifndef TENSORWEAVE_TESTING_SUBPROCESS_H_
#define TENSORWEAVE_TESTING_SUBPROCESS_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tensorweave/status.h"

namespace tw::testing {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal when killed by a signal
  std::string out;
  std::string err;
  bool timed_out = false;  // killed with SIGKILL after the timeout
};

// Environment changes: a value sets the variable, nullopt removes it.
using EnvOverrides = std::map<std::string, std::optional<std::string>>;

// Runs argv[0] (a path) with this process's environment changed by `env`, stdin from
// /dev/null. Never takes longer than `timeout` (then the child is killed); dies with the
// calling thread.
StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                   const EnvOverrides& env = {},
                                   absl::Duration timeout = absl::Seconds(30));

// A program running in the background; killed (SIGKILL) if still running when destroyed,
// and when the thread that started it ends (the test died).
class ChildProcess {
 public:
  // Starts argv[0] with the environment changed by `env`; its output goes to `log_path`.
  static StatusOr<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                       const EnvOverrides& env,
                                                       const std::string& log_path);
  ~ChildProcess();
  void Signal(int sig);
  // The exit code (128 + signal when killed), or DeadlineExceeded if still running.
  StatusOr<int> Wait(absl::Duration timeout);
  int pid() const { return pid_; }

 private:
  explicit ChildProcess(int pid) : pid_(pid) {}
  int pid_;
  bool reaped_ = false;
};

// Path of a program built in this build tree, e.g. BuiltProgram("tools/tw"); found through
// the TW_BINARY_DIR variable that ctest sets.
std::string BuiltProgram(const std::string& relative_path);

}  // namespace tw::testing

#endif  // TENSORWEAVE_TESTING_SUBPROCESS_H_
