#include "testing/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace tw::testing {
namespace {

std::vector<std::string> MergedEnvironment(const EnvOverrides& overrides) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : overrides) {
    if (value) {
      vars[name] = *value;
    } else {
      vars.erase(name);
    }
  }
  std::vector<std::string> out;
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts argv[0] with the merged environment, its stdin from /dev/null and its stdout and
// stderr on `out_fd` and `err_fd`; returns 0 or the errno of what failed. The child dies
// with the thread that started it (PR_SET_PDEATHSIG): a test killed or crashed leaves no
// server behind. Tests start children from their own thread, which lives as long as they.
int Spawn(const std::vector<std::string>& argv, const EnvOverrides& env, int out_fd, int err_fd,
          pid_t* pid) {
  std::vector<std::string> args = argv;
  std::vector<std::string> vars = MergedEnvironment(env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_vars = CStrings(vars);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) return errno;
  int report[2];  // the child writes exec's errno here; closed on exec when it succeeds
  if (pipe2(report, O_CLOEXEC) != 0) {
    const int e = errno;
    close(null_fd);
    return e;
  }
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child == 0) {
    // Only async-signal-safe calls from here to exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execve(c_args[0], c_args.data(), c_vars.data());
    const int e = errno;
    (void)!write(report[1], &e, sizeof(e));
    _exit(127);
  }
  const int fork_errno = errno;
  close(null_fd);
  close(report[1]);
  if (child < 0) {
    close(report[0]);
    return fork_errno;
  }
  int exec_errno = 0;
  ssize_t n;
  while ((n = read(report[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n == sizeof(exec_errno)) {
    waitpid(child, nullptr, 0);
    return exec_errno;
  }
  *pid = child;
  return 0;
}

}  // namespace

StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv, const EnvOverrides& env,
                                   absl::Duration timeout) {
  if (argv.empty()) return errors::InvalidArgument("RunProcess needs a program");
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return errors::Internal("pipe: ", std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return errors::Internal("pipe: ", std::strerror(errno));
  }
  pid_t pid = -1;
  const int rc = Spawn(argv, env, out_pipe[1], err_pipe[1], &pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return errors::Internal("cannot start ", argv[0], ": ", std::strerror(rc));
  }

  ProcessResult result;
  const absl::Time deadline = absl::Now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      result.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(left_ms)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(const std::vector<std::string>& argv,
                                                            const EnvOverrides& env,
                                                            const std::string& log_path) {
  if (argv.empty()) return errors::InvalidArgument("ChildProcess needs a program");
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) return errors::Internal("cannot open ", log_path, ": ", std::strerror(errno));
  pid_t pid = -1;
  const int rc = Spawn(argv, env, log, log, &pid);
  close(log);
  if (rc != 0) return errors::Internal("cannot start ", argv[0], ": ", std::strerror(rc));
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid));
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void ChildProcess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

StatusOr<int> ChildProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (absl::Now() >= deadline) return errors::DeadlineExceeded("process ", pid_, " still runs");
    absl::SleepFor(absl::Milliseconds(10));
  }
}

std::string BuiltProgram(const std::string& relative_path) {
  const char* dir = std::getenv("TW_BINARY_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/" + relative_path;
}

}  // namespace tw::testing
