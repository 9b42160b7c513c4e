#include "tools/launch/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "tools/launch/line_splitter.h"

namespace tw::launch {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
// After SIGKILL, how long to wait for a process to be reaped before giving up on it (one in
// uninterruptible sleep cannot be hurried).
constexpr std::chrono::seconds kReapTimeout{10};
// Bytes read from a task's pipes after it exits: what it wrote before dying. A process that
// escaped the task's process group could write forever.
constexpr size_t kDrainLimit = 4 << 20;

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// "exited 3" or "killed by SIGSEGV (exit code 139)".
std::string DescribeExit(int exit_code, int term_signal) {
  if (term_signal != 0) {
    return "killed by " + SignalName(term_signal) + " (exit code " + std::to_string(exit_code) +
           ")";
  }
  return "exited " + std::to_string(exit_code);
}

std::string FormatSeconds(Clock::duration d) {
  const double s = std::chrono::duration<double>(d).count();
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), s < 10 ? "%.1fs" : "%.0fs", s);
  return buffer;
}

std::string Plural(int n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Descriptors 0-2 must be open, or a pipe created later could land on one of them and then
// be dup2'ed onto itself in the child, keeping its close-on-exec flag.
void EnsureStandardFds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int null_fd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null_fd >= 0 && null_fd != fd) {
        dup2(null_fd, fd);
        close(null_fd);
      }
    }
  }
}

}  // namespace

enum class TaskState { kPending, kStarting, kRunning, kExited, kRestarting, kStopping, kStopped };

struct Supervisor::Task {
  TaskLaunch launch;
  std::string name;
  std::string_view color;
  std::vector<char*> env_ptrs;   // into launch.env
  size_t restart_count_var = 0;  // launch.env's TW_RESTART_COUNT, rewritten before each run
  TaskState state = TaskState::kPending;
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  int exec_fd = -1;  // closes on a successful exec; carries errno when exec fails
  LineSplitter out_lines;
  LineSplitter err_lines;
  int log_fd = -1;
  int runs = 0;
  int restarts = 0;
  int exit_code = -1;
  int term_signal = 0;
  bool term_sent = false;
  bool kill_sent = false;
  Clock::time_point restart_at;
};

Supervisor::Supervisor(SupervisorOptions options, std::vector<TaskLaunch> tasks)
    : options_(std::move(options)),
      policy_(
          [&] {
            std::vector<TaskId> ids;
            for (const TaskLaunch& t : tasks) ids.push_back(t.id);
            return ids;
          }(),
          options_.success, options_.restart, options_.max_restarts),
      console_(options_.console) {
  tasks_.resize(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    Task& t = tasks_[i];
    t.launch = std::move(tasks[i]);
    t.name = t.launch.id.ToString();
    t.color = TaskColor(i);
    // Each run is told how many restarts came before it (docs/launch.md, "A restarted
    // task"); one of the launcher's own is not passed on.
    std::erase_if(t.launch.env, [](const std::string& var) {
      return var.rfind(kRestartCountVar, 0) == 0 && var[std::strlen(kRestartCountVar)] == '=';
    });
    t.restart_count_var = t.launch.env.size();
    t.launch.env.push_back(std::string(kRestartCountVar) + "=0");
    for (std::string& var : t.launch.env) t.env_ptrs.push_back(var.data());
    t.env_ptrs.push_back(nullptr);
  }
  for (std::string& arg : options_.argv) argv_ptrs_.push_back(arg.data());
  argv_ptrs_.push_back(nullptr);
}

StatusOr<std::unique_ptr<Supervisor>> Supervisor::Create(SupervisorOptions options,
                                                         std::vector<TaskLaunch> tasks) {
  if (tasks.empty()) return errors::InvalidArgument("the cluster has no tasks to start");
  if (options.argv.empty()) return errors::InvalidArgument("no program to run");
  std::unique_ptr<Supervisor> s(new Supervisor(std::move(options), std::move(tasks)));
  if (!s->options_.log_dir.empty()) {
    for (Task& t : s->tasks_) {
      const std::string path = s->options_.log_dir + "/" + t.launch.id.job + "-" +
                               std::to_string(t.launch.id.index) + ".log";
      t.log_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
      if (t.log_fd < 0) {
        return errors::PermissionDenied("--logs: cannot write ", path, ": ", std::strerror(errno));
      }
    }
  }
  return s;
}

Supervisor::~Supervisor() {
  for (Task& t : tasks_) {
    if (t.pid > 0) {  // only when Run() was cut short; never leave a task behind
      kill(-t.pid, SIGKILL);
      kill(t.pid, SIGKILL);
      int status = 0;
      waitpid(t.pid, &status, WNOHANG);  // Run() gave up on it: do not hang here either
    }
    CloseTaskFds(t);
    if (t.log_fd >= 0) close(t.log_fd);
  }
  if (signal_fd_ >= 0) close(signal_fd_);
  if (null_fd_ >= 0) close(null_fd_);
}

void Supervisor::CloseTaskFds(Task& t) {
  for (int* fd : {&t.out_fd, &t.err_fd, &t.exec_fd}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

StatusOr<LaunchResult> Supervisor::Run() {
  start_ = Clock::now();
  EnsureStandardFds();
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  for (int sig : kStopSignals) sigaddset(&mask, sig);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &mask, &old_mask);
  signal_fd_ = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  null_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (signal_fd_ < 0 || null_fd_ < 0) {
    const std::string error = std::strerror(errno);
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return errors::Internal("cannot set up signal handling: ", error);
  }
  // A closed stdout (`tw launch ... | head`) must not kill the launcher before it stops the
  // tasks; Console notices EPIPE instead.
  struct sigaction ignore = {};
  struct sigaction old_pipe = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);

  std::string plan;
  for (const Task& t : tasks_) {
    plan += (plan.empty() ? "" : ", ") + t.name + " " + t.launch.address;
  }
  std::string deciders;
  for (const TaskId& id : policy_.deciding_tasks()) {
    deciders += (deciders.empty() ? "" : ", ") + id.ToString();
  }
  console_.Message(Plural(static_cast<int>(tasks_.size()), "task") + ": " + plan);
  std::string metrics;
  for (const Task& t : tasks_) {
    if (t.launch.metrics_address.empty()) continue;
    metrics +=
        (metrics.empty() ? "" : ", ") + t.name + " http://" + t.launch.metrics_address + "/metrics";
  }
  if (!metrics.empty()) console_.Message("metrics: " + metrics);
  console_.Message("the job succeeds when " + deciders +
                   (policy_.deciding_tasks().size() == 1 ? " exits 0" : " all exit 0") +
                   "; --restart " + std::string(RestartPolicyName(options_.restart)) +
                   (options_.restart == RestartPolicy::kNever
                        ? ""
                        : ", at most " + Plural(options_.max_restarts, "restart")));

  for (size_t i = 0; i < tasks_.size() && phase_ == Phase::kRunning; ++i) {
    if (Status s = Spawn(i); !s.ok()) BeginStop(JobOutcome::kFailed, 1, std::string(s.message()));
  }

  enum Source { kSignal, kOut, kErr, kExec };
  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, Source>> owners;
  while (phase_ == Phase::kRunning || AnyTaskAlive()) {
    if (phase_ == Phase::kStopping && killed_all_ && Clock::now() >= give_up_at_) {
      console_.Message("some tasks could not be reaped " + std::to_string(kReapTimeout.count()) +
                       "s after SIGKILL; giving up");
      break;
    }
    fds.clear();
    owners.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    owners.emplace_back(0, kSignal);
    for (size_t i = 0; i < tasks_.size(); ++i) {
      const Task& t = tasks_[i];
      for (auto [fd, source] : {std::pair{t.out_fd, kOut}, {t.err_fd, kErr}, {t.exec_fd, kExec}}) {
        if (fd < 0) continue;
        fds.push_back({fd, POLLIN, 0});
        owners.emplace_back(i, source);
      }
    }
    const int ready = poll(fds.data(), fds.size(), PollTimeoutMs());
    if (ready < 0 && errno != EINTR) {
      BeginStop(JobOutcome::kFailed, 1, std::string("poll: ") + std::strerror(errno));
      KillLiveTasks(SIGKILL);
    }
    for (size_t k = 1; ready > 0 && k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      Task& t = tasks_[owners[k].first];
      if (owners[k].second == kExec) {
        ReadExecStatus(t);
      } else {
        ReadOutput(t, owners[k].second == kErr, /*drain=*/false);
      }
    }
    if (ready > 0 && fds[0].revents != 0) {
      bool child_exited = false;
      signalfd_siginfo info;
      while (read(signal_fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        if (static_cast<int>(info.ssi_signo) == SIGCHLD) {
          child_exited = true;
        } else {
          OnStopSignal(static_cast<int>(info.ssi_signo));
        }
      }
      if (child_exited) ReapChildren();
    }
    HandleTimers();
    ShowStatus();
    console_.Flush();
  }
  console_.ClearStatus();
  PrintSummary();

  sigaction(SIGPIPE, &old_pipe, nullptr);
  close(signal_fd_);
  signal_fd_ = -1;
  // Signals that arrived after the last read stay pending; drop the ones we handle so they
  // do not hit the caller once unblocked (a SIGCHLD is harmless, a second SIGINT is not).
  timespec zero{};
  siginfo_t ignored;
  while (sigtimedwait(&mask, &ignored, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return result_;
}

Status Supervisor::Spawn(size_t index) {
  Task& t = tasks_[index];
  int out[2] = {-1, -1}, err[2] = {-1, -1}, exec_status[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {out[0], out[1], err[0], err[1], exec_status[0], exec_status[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      pipe2(exec_status, O_CLOEXEC) != 0) {
    const std::string error = std::strerror(errno);
    close_all();
    return errors::Unavailable("cannot start ", t.name, ": pipe: ", error);
  }
  std::string& restart_count = t.launch.env[t.restart_count_var];
  restart_count = std::string(kRestartCountVar) + "=" + std::to_string(t.restarts);
  t.env_ptrs[t.restart_count_var] = restart_count.data();
  if (t.log_fd >= 0 && t.runs > 0) {
    const std::string mark = "--- tw launch: restart " + std::to_string(t.restarts) + " ---\n";
    [[maybe_unused]] ssize_t n = write(t.log_fd, mark.data(), mark.size());
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const std::string error = std::strerror(errno);
    close_all();
    return errors::Unavailable("cannot start ", t.name, ": fork: ", error);
  }
  if (pid == 0) {
    // The child: only async-signal-safe calls from here to execve.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(128 + SIGKILL);  // the launcher died before prctl
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) {
      sigaction(sig, &dfl, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(null_fd_, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execve(options_.program_path.c_str(), argv_ptrs_.data(), t.env_ptrs.data());
    const int error = errno;
    [[maybe_unused]] ssize_t n = write(exec_status[1], &error, sizeof(error));
    _exit(127);
  }
  // Also from the parent, so the group exists before anyone signals it.
  setpgid(pid, pid);
  close(out[1]);
  close(err[1]);
  close(exec_status[1]);
  t.out_fd = out[0];
  t.err_fd = err[0];
  t.exec_fd = exec_status[0];
  SetNonBlocking(t.out_fd);
  SetNonBlocking(t.err_fd);
  t.pid = pid;
  task_of_pid_[pid] = index;
  t.state = TaskState::kStarting;
  t.term_sent = t.kill_sent = false;
  ++t.runs;
  return OkStatus();
}

void Supervisor::EmitLine(Task& t, bool is_stderr, std::string_view line) {
  console_.TaskLine(t.name, t.color, is_stderr, line);
  if (t.log_fd >= 0) {
    std::string text(line);
    text += '\n';
    [[maybe_unused]] ssize_t n = write(t.log_fd, text.data(), text.size());
  }
}

void Supervisor::ReadOutput(Task& t, bool is_stderr, bool drain) {
  int& fd = is_stderr ? t.err_fd : t.out_fd;
  LineSplitter& lines = is_stderr ? t.err_lines : t.out_lines;
  auto emit = [&](std::string_view line) { EmitLine(t, is_stderr, line); };
  char buffer[65536];
  size_t total = 0;
  while (fd >= 0) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      lines.Feed(std::string_view(buffer, static_cast<size_t>(n)), emit);
      total += static_cast<size_t>(n);
      // Outside a drain, one read per wake-up keeps a chatty task from starving the others.
      if (!drain || total >= kDrainLimit) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    lines.Finish(emit);  // end of the stream: a last line without '\n' is still a line
    close(fd);
    fd = -1;
  }
}

void Supervisor::ReadExecStatus(Task& t) {
  if (t.exec_fd < 0) return;
  int error = 0;
  ssize_t n;
  do {
    n = read(t.exec_fd, &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof(error))) {
    console_.Message(t.name + ": cannot execute " + options_.program_path + ": " +
                     std::strerror(error));
  } else if (n == 0 && t.state == TaskState::kStarting) {
    t.state = TaskState::kRunning;  // the exec succeeded (close-on-exec closed the pipe)
  }
  close(t.exec_fd);
  t.exec_fd = -1;
}

void Supervisor::ReapChildren() {
  // Reap every exited task first, then judge them: a task that died in the same instant as
  // the one that ends the job is reported with its own exit, not as stopped by us.
  std::vector<std::pair<size_t, int>> exits;
  while (true) {
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
    const pid_t pid = info.si_pid;
    auto it = task_of_pid_.find(pid);
    // While the exited process is a zombie its pid cannot be reused, so the group id is
    // still ours: kill what is left of the task's process group, as a container's end does.
    if (it != task_of_pid_.end()) kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (it != task_of_pid_.end()) {
      tasks_[it->second].pid = -1;
      exits.emplace_back(it->second, status);
      task_of_pid_.erase(it);
    }
  }
  for (const auto& [index, status] : exits) OnTaskExit(index, status);
}

void Supervisor::OnTaskExit(size_t index, int wait_status) {
  Task& t = tasks_[index];
  // Whatever the task wrote before it died is still in the pipes: show it before its exit.
  if (t.exec_fd >= 0) {
    // The child is gone, so this read cannot block.
    fcntl(t.exec_fd, F_SETFL, fcntl(t.exec_fd, F_GETFL) & ~O_NONBLOCK);
    ReadExecStatus(t);
  }
  ReadOutput(t, false, /*drain=*/true);
  ReadOutput(t, true, /*drain=*/true);
  // A stream not at its end yet (a process outside the group still holds it) loses what
  // comes later, but not the partial line it has.
  t.out_lines.Finish([&](std::string_view line) { EmitLine(t, false, line); });
  t.err_lines.Finish([&](std::string_view line) { EmitLine(t, true, line); });
  CloseTaskFds(t);
  t.term_signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
  t.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + t.term_signal;
  const std::string exit_text = DescribeExit(t.exit_code, t.term_signal);

  if (phase_ == Phase::kStopping) {
    t.state = t.term_sent ? TaskState::kStopped : TaskState::kExited;
    return;
  }
  t.state = TaskState::kExited;
  switch (policy_.OnExit(index, t.exit_code)) {
    case ExitAction::kNone:
      console_.Message(t.name + " " + exit_text);
      break;
    case ExitAction::kRestart:
      t.state = TaskState::kRestarting;
      ++t.restarts;
      t.restart_at = Clock::now() + options_.restart_delay;
      console_.Message(t.name + " " + exit_text + "; restarting it in " +
                       FormatSeconds(options_.restart_delay) + " (restart " +
                       std::to_string(policy_.restarts_used()) + " of " +
                       std::to_string(policy_.max_restarts()) + ", --restart " +
                       std::string(RestartPolicyName(options_.restart)) + ")");
      break;
    case ExitAction::kJobSucceeded:
      console_.Message(t.name + " " + exit_text);
      BeginStop(JobOutcome::kSucceeded, 0, "job succeeded: " + t.name + " " + exit_text);
      break;
    case ExitAction::kJobFailed: {
      std::string why;
      if (policy_.last_no_restart_reason() == NoRestartReason::kLimit) {
        why = " (the restart limit of " + std::to_string(policy_.max_restarts()) + " is used up)";
      } else if (options_.restart == RestartPolicy::kExitCode) {
        why = " (codes 1-127 are permanent under --restart exit-code)";
      }
      const std::string what = t.term_signal != 0
                                   ? t.name + " " + exit_text
                                   : t.name + " exited with code " + std::to_string(t.exit_code);
      console_.Message(what + why);
      BeginStop(JobOutcome::kFailed, t.exit_code, "job failed: " + what);
      break;
    }
  }
}

void Supervisor::BeginStop(JobOutcome outcome, int exit_code, std::string verdict) {
  if (phase_ == Phase::kStopping) return;
  phase_ = Phase::kStopping;
  result_.outcome = outcome;
  result_.exit_code = exit_code;
  result_.verdict = std::move(verdict);
  for (Task& t : tasks_) {
    if (t.state == TaskState::kRestarting) t.state = TaskState::kExited;  // its last exit stands
  }
  const bool any_alive = AnyTaskAlive();
  console_.Message(result_.verdict +
                   (any_alive ? "; stopping the tasks still running (SIGTERM, SIGKILL after " +
                                    FormatSeconds(options_.grace) + ")"
                              : ""));
  kill_at_ = Clock::now() + options_.grace;
  KillLiveTasks(options_.grace.count() > 0 ? SIGTERM : SIGKILL);
}

void Supervisor::KillLiveTasks(int signal) {
  for (Task& t : tasks_) {
    if (t.pid <= 0) continue;
    if (signal == SIGKILL) {
      if (t.kill_sent) continue;
      t.kill_sent = true;
    }
    t.term_sent = true;
    t.state = TaskState::kStopping;
    // The whole process group: a shell's children too. The pid itself as well, in case the
    // task moved to another group.
    kill(-t.pid, signal);
    kill(t.pid, signal);
  }
  if (signal == SIGKILL && !killed_all_) {
    killed_all_ = true;
    give_up_at_ = Clock::now() + kReapTimeout;
  }
}

void Supervisor::OnStopSignal(int signal) {
  if (phase_ == Phase::kRunning) {
    console_.Message("got " + SignalName(signal) + "; " + SignalName(signal) +
                     " again kills every task at once");
    BeginStop(JobOutcome::kInterrupted, 128 + signal, "stopped by " + SignalName(signal));
    return;
  }
  if (!killed_all_ && AnyTaskAlive()) {
    console_.Message("got " + SignalName(signal) + " again; killing every task");
    KillLiveTasks(SIGKILL);
  }
}

void Supervisor::HandleTimers() {
  const Clock::time_point now = Clock::now();
  if (phase_ == Phase::kRunning) {
    for (size_t i = 0; i < tasks_.size() && phase_ == Phase::kRunning; ++i) {
      Task& t = tasks_[i];
      if (t.state != TaskState::kRestarting || now < t.restart_at) continue;
      if (Status s = Spawn(i); !s.ok()) {
        t.state = TaskState::kExited;
        BeginStop(JobOutcome::kFailed, 1, std::string(s.message()));
      }
    }
    return;
  }
  if (!killed_all_ && now >= kill_at_ && AnyTaskAlive()) {
    std::string names;
    for (const Task& t : tasks_) {
      if (t.pid > 0) names += (names.empty() ? "" : ", ") + t.name;
    }
    console_.Message(names + " still running " + FormatSeconds(options_.grace) +
                     " after SIGTERM; sending SIGKILL");
    grace_expired_ = true;
    KillLiveTasks(SIGKILL);
  }
}

bool Supervisor::AnyTaskAlive() const {
  return std::any_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.pid > 0; });
}

int Supervisor::PollTimeoutMs() const {
  const Clock::time_point now = Clock::now();
  // The status line's clock ticks each second; without one, wake at least every 5 s anyway.
  Clock::time_point next =
      now + (options_.console.status_line ? std::chrono::seconds(1) : std::chrono::seconds(5));
  if (phase_ == Phase::kRunning) {
    for (const Task& t : tasks_) {
      if (t.state == TaskState::kRestarting) next = std::min(next, t.restart_at);
    }
  } else if (!killed_all_) {
    next = std::min(next, kill_at_);
  } else {
    next = std::min(next, give_up_at_);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::clamp<long long>(ms + 1, 0, 5000));
}

std::string Supervisor::StateText(const Task& t) const {
  switch (t.state) {
    case TaskState::kPending:
      return "not started";
    case TaskState::kStarting:
      return "starting";
    case TaskState::kRunning:
      return "running";
    case TaskState::kExited:
      return "exited " + std::to_string(t.exit_code);
    case TaskState::kRestarting:
      return "restarting";
    case TaskState::kStopping:
      return "stopping";
    case TaskState::kStopped:
      return "stopped";
  }
  return "";
}

void Supervisor::ShowStatus() {
  if (!options_.console.status_line) return;
  std::vector<TaskStatusView> views;
  for (const Task& t : tasks_) views.push_back({t.name, StateText(t)});
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start_).count();
  console_.ShowStatus(views, static_cast<long>(elapsed));
}

void Supervisor::PrintSummary() {
  size_t width = 0;
  for (const Task& t : tasks_) width = std::max(width, t.name.size());
  console_.Message("summary after " + FormatSeconds(Clock::now() - start_) + ":");
  for (const Task& t : tasks_) {
    std::string state;
    switch (t.state) {
      case TaskState::kPending:
        state = "not started";
        break;
      case TaskState::kStopped:
        if (t.kill_sent && t.term_signal == SIGKILL) {
          state = "killed with SIGKILL";
          if (grace_expired_) {
            state += " (still running " + FormatSeconds(options_.grace) + " after SIGTERM)";
          }
        } else if (t.term_signal == SIGTERM) {
          state = "stopped by SIGTERM";
        } else {
          state = "stopped after SIGTERM: " + DescribeExit(t.exit_code, t.term_signal);
        }
        break;
      case TaskState::kStarting:
      case TaskState::kRunning:
      case TaskState::kStopping:
        state = "still running (pid " + std::to_string(t.pid) + ")";
        break;
      default:
        state = DescribeExit(t.exit_code, t.term_signal);
        break;
    }
    if (t.restarts > 0) state += ", restarted " + Plural(t.restarts, "time");
    result_.tasks.push_back({t.launch.id, state, t.exit_code, t.restarts});
    console_.Message("  " + t.name + std::string(width - t.name.size(), ' ') + "  " + state);
  }
  console_.Message(result_.verdict);
}

}  // namespace tw::launch
