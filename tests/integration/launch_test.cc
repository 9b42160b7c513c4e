// `tw launch` as a user runs it: the real launcher starting small `sh -c` programs as tasks.
// Each task learns its name from its TF_CONFIG; tasks that must wait for each other wait on
// files in a scratch directory with bounded loops, never on sleeps.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/subprocess.h"

namespace tw {
namespace {

namespace fs = std::filesystem;
using testing::BuiltProgram;
using testing::ChildProcess;
using testing::EnvOverrides;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ProcessResult;
using testing::RunProcess;

// Shell functions every task script starts with:
//   $task      "worker-1", from TF_CONFIG (the launcher writes it compact, type before index)
//   wait_for F waits up to 20 s for file F to exist, else exits 99
//   ready      writes the shell's pid to $D/$task.pid (the pid the launcher started)
//   wait_gone T  waits up to 20 s for task T's process (from its pid file) to have ended and
//              been reaped by the launcher, else exits 99
constexpr char kPrelude[] = R"sh(
task=$(printf '%s' "$TF_CONFIG" | sed -n 's/.*"task":{"type":"\([a-z_]*\)","index":\([0-9]*\)}.*/\1-\2/p')
wait_for() { n=0; while [ ! -e "$1" ]; do n=$((n+1)); [ $n -gt 400 ] && exit 99; sleep 0.05; done; }
ready() { echo $$ > "$D/$task.pid.tmp" && mv "$D/$task.pid.tmp" "$D/$task.pid"; }
wait_gone() { wait_for "$D/$1.pid"; p=$(cat "$D/$1.pid"); n=0
  while kill -0 "$p" 2>/dev/null; do n=$((n+1)); [ $n -gt 400 ] && exit 99; sleep 0.05; done; }
)sh";

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / (std::string("launch_") + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  // Runs `tw launch ARGS -- sh -c PRELUDE+SCRIPT` to its end.
  ProcessResult Launch(std::vector<std::string> args, const std::string& script,
                       EnvOverrides env = {}) {
    std::vector<std::string> argv = {BuiltProgram("tools/tw"), "launch"};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const std::string& s : {std::string("--"), std::string("/bin/sh"), std::string("-c"),
                                 std::string(kPrelude) + script}) {
      argv.push_back(s);
    }
    env["D"] = dir_.string();
    env["NO_COLOR"] = std::nullopt;
    auto result = RunProcess(argv, env, absl::Seconds(90));
    EXPECT_TRUE(result.ok()) << result.status();
    EXPECT_FALSE(result->timed_out) << result->out << result->err;
    return result.ok() ? *result : ProcessResult{};
  }

  // Starts the launcher in the background, its output in dir_/launcher.log.
  std::unique_ptr<ChildProcess> Start(std::vector<std::string> args, const std::string& script) {
    std::vector<std::string> argv = {BuiltProgram("tools/tw"), "launch"};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const std::string& s : {std::string("--"), std::string("/bin/sh"), std::string("-c"),
                                 std::string(kPrelude) + script}) {
      argv.push_back(s);
    }
    auto child = ChildProcess::Start(argv, {{"D", dir_.string()}}, LauncherLog());
    EXPECT_TRUE(child.ok()) << child.status();
    return child.ok() ? std::move(*child) : nullptr;
  }

  std::string LauncherLog() const { return (dir_ / "launcher.log").string(); }

  // Waits (bounded) for $D/<task>.pid and returns the pid in it.
  pid_t WaitForPid(const std::string& task) {
    const fs::path path = dir_ / (task + ".pid");
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!fs::exists(path) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
    return ReadPid(path);
  }

  fs::path dir_;

  static pid_t ReadPid(const fs::path& path) {
    std::ifstream in(path);
    pid_t pid = -1;
    in >> pid;
    EXPECT_GT(pid, 0) << "no pid in " << path;
    return pid;
  }
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// True when `pid` no longer runs. A zombie counts as gone: once the launcher is dead its
// killed children are reaped by this machine's init, whenever that gets to it.
bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

// Bounded wait for `pid` to be gone (a SIGKILLed process is not gone the same instant).
bool WaitGone(pid_t pid, absl::Duration timeout = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!ProcessGone(pid)) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

// The lines "[task] ..." of `text`, by task.
std::map<std::string, std::vector<std::string>> LinesByTask(const std::string& text) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '[') continue;
    const size_t close = line.find("] ");
    if (close == std::string::npos) continue;
    out[line.substr(1, close - 1)].push_back(line.substr(close + 2));
  }
  return out;
}

TEST_F(LaunchTest, EveryTaskGetsTfJobsTfConfigAndPrefixedLines) {
  ProcessResult r = Launch({"--cluster", "chief=1,ps=1,worker=2"}, R"sh(
echo "$TF_CONFIG"
echo "stderr of $task" >&2
ready
case $task in
  chief-0) wait_for "$D/ps-0.pid"; wait_for "$D/worker-0.pid"; wait_for "$D/worker-1.pid"; exit 0;;
  *) exec sleep 60;;
esac)sh");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = LinesByTask(r.out);
  const auto err = LinesByTask(r.err);
  std::set<std::string> addresses;
  nlohmann::json first_cluster;
  for (const auto& [job, index] : std::vector<std::pair<std::string, int>>{
           {"chief", 0}, {"ps", 0}, {"worker", 0}, {"worker", 1}}) {
    const std::string name = job + ":" + std::to_string(index);
    ASSERT_TRUE(out.count(name)) << name << " printed nothing:\n" << r.out;
    ASSERT_EQ(out.at(name).size(), 1u) << r.out;
    const std::string& raw = out.at(name)[0];
    // TFJob's key order and compact form, byte for byte at the edges.
    EXPECT_EQ(raw.rfind("{\"cluster\":{\"chief\":[\"localhost:", 0), 0u) << raw;
    EXPECT_THAT(raw, HasSubstr("},\"task\":{\"type\":\"" + job + "\",\"index\":" +
                               std::to_string(index) + "},\"environment\":\"cloud\"}"));
    auto config = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(config.is_discarded()) << raw;
    EXPECT_EQ(config["task"]["type"], job);
    EXPECT_EQ(config["task"]["index"], index);
    EXPECT_EQ(config["environment"], "cloud");
    if (first_cluster.is_null()) first_cluster = config["cluster"];
    EXPECT_EQ(config["cluster"], first_cluster) << "every task sees the same cluster";
    EXPECT_THAT(err.at(name),
                ::testing::ElementsAre("stderr of " + job + "-" + std::to_string(index)));
  }
  ASSERT_EQ(first_cluster.size(), 3u);
  for (const char* job : {"chief", "ps", "worker"}) {
    for (const auto& address : first_cluster[job]) {
      const std::string a = address.get<std::string>();
      EXPECT_EQ(a.rfind("localhost:", 0), 0u) << a;
      EXPECT_GT(std::stoi(a.substr(10)), 0) << a;
      addresses.insert(a);
    }
  }
  EXPECT_EQ(addresses.size(), 4u) << "every task has its own port";
  EXPECT_THAT(r.err, HasSubstr("job succeeded: chief:0 exited 0"));
  EXPECT_THAT(r.err, HasSubstr("ps:0      stopped by SIGTERM"));
  EXPECT_THAT(r.err, HasSubstr("worker:1  stopped by SIGTERM"));
  for (const char* task : {"chief-0", "ps-0", "worker-0", "worker-1"}) {
    const pid_t pid = ReadPid(dir_ / (std::string(task) + ".pid"));
    EXPECT_EQ(kill(pid, 0), -1) << task << " outlived the launcher";
    EXPECT_EQ(errno, ESRCH) << task << " not reaped";
  }
}

TEST_F(LaunchTest, WorkerZeroDecidesWithoutChiefAndTheOthersGetSigterm) {
  ProcessResult r = Launch({"--cluster", "ps=1,worker=2"}, R"sh(
case $task in
  worker-0) wait_for "$D/ps-0.pid"; wait_for "$D/worker-1.pid"; echo done; exit 0;;
  *) trap 'echo "got SIGTERM"; exit 0' TERM; ready; while :; do sleep 0.1; done;;
esac)sh");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = LinesByTask(r.out);
  EXPECT_THAT(out.at("worker:0"), ::testing::ElementsAre("done"));
  EXPECT_THAT(out.at("ps:0"), ::testing::Contains("got SIGTERM"));
  EXPECT_THAT(out.at("worker:1"), ::testing::Contains("got SIGTERM"));
  EXPECT_THAT(r.err, HasSubstr("job succeeded: worker:0 exited 0"));
  EXPECT_THAT(r.err, HasSubstr("worker:1  stopped after SIGTERM: exited 0"));
}

TEST_F(LaunchTest, WithoutChiefOrWorkerEveryTaskMustExitZero) {
  // The word count's shape: files and maps finish first, reduce last; the job is not done
  // until reduce is. Reduce waits until the others' processes are gone, so it is the last.
  ProcessResult r = Launch({"--cluster", "files=1,reduce=1,map=2"}, R"sh(
ready
case $task in
  reduce-0) wait_gone map-0; wait_gone map-1; wait_gone files-0; echo reduced;;
  map-*) echo mapped;;
  *) echo listed;;
esac)sh");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[reduce:0] reduced\n"));
  EXPECT_THAT(r.out, HasSubstr("[map:1] mapped\n"));
  EXPECT_THAT(r.err, HasSubstr("job succeeded: reduce:0 exited 0"));
  for (const char* line :
       {"files:0   exited 0", "reduce:0  exited 0", "map:0     exited 0", "map:1     exited 0"}) {
    EXPECT_THAT(r.err, HasSubstr(line));
  }
}

TEST_F(LaunchTest, AllWorkersPolicyWaitsForEveryWorker) {
  ProcessResult r = Launch({"--cluster", "ps=1,worker=2", "--success", "all-workers"}, R"sh(
ready
case $task in
  worker-0) exit 0;;
  worker-1) wait_gone worker-0; echo "finishing after worker-0"; exit 0;;
  *) exec sleep 60;;
esac)sh");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[worker:1] finishing after worker-0\n"));
  EXPECT_THAT(r.err, HasSubstr("job succeeded: worker:1 exited 0"));
  EXPECT_THAT(r.err, HasSubstr("worker:0  exited 0"));
  EXPECT_THAT(r.err, HasSubstr("ps:0      stopped by SIGTERM"));
}

TEST_F(LaunchTest, AFailingTaskFailsTheJobAndStopsTheOthers) {
  ProcessResult r = Launch({"--cluster", "ps=1,worker=2"}, R"sh(
ready
case $task in
  worker-1) wait_for "$D/ps-0.pid"; wait_for "$D/worker-0.pid"; echo "giving up" >&2; exit 3;;
  *) exec sleep 60;;
esac)sh");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("[worker:1] giving up\n"));
  EXPECT_THAT(r.err, HasSubstr("job failed: worker:1 exited with code 3"));
  EXPECT_THAT(r.err, HasSubstr("ps:0      stopped by SIGTERM"));
  EXPECT_THAT(r.err, HasSubstr("worker:0  stopped by SIGTERM"));
  // The verdict is the last line.
  EXPECT_THAT(r.err.substr(r.err.rfind('\n', r.err.size() - 2)),
              HasSubstr("job failed: worker:1 exited with code 3"));
  for (const char* task : {"ps-0", "worker-0", "worker-1"}) {
    EXPECT_TRUE(ProcessGone(ReadPid(dir_ / (std::string(task) + ".pid")))) << task;
  }
}

// Each run is told how many restarts came before it (TW_RESTART_COUNT), whatever the
// launcher's own environment says.
TEST_F(LaunchTest, OnFailureRestartsATaskThatThenSucceeds) {
  ProcessResult r =
      Launch({"--cluster", "ps=1,worker=1", "--restart", "on-failure", "--restart-delay", "0.1"},
             R"sh(
case $task in
  worker-0) echo "run $TW_RESTART_COUNT" >> "$D/runs"
            if [ ! -e "$D/failed-once" ]; then touch "$D/failed-once"; echo "first run fails"; exit 1; fi
            echo "second run works"; exit 0;;
  *) echo "$TW_RESTART_COUNT" > "$D/ps-count"; exec sleep 60;;
esac)sh",
             {{"TW_RESTART_COUNT", "7"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(dir_ / "runs"), "run 0\nrun 1\n");
  EXPECT_EQ(ReadFile(dir_ / "ps-count"), "0\n");
  EXPECT_THAT(r.out, HasSubstr("[worker:0] first run fails\n[worker:0] second run works\n"));
  EXPECT_THAT(r.err, HasSubstr("worker:0 exited 1; restarting it in 0.1s (restart 1 of 3, "
                               "--restart on-failure)"));
  EXPECT_THAT(r.err, HasSubstr("worker:0  exited 0, restarted 1 time"));
}

TEST_F(LaunchTest, RestartLimitEndsTheRetries) {
  ProcessResult r = Launch({"--cluster", "worker=2", "--restart", "on-failure", "--max-restarts",
                            "2", "--restart-delay", "0"},
                           R"sh(
case $task in
  worker-0) echo run >> "$D/runs"; exit 1;;
  *) exec sleep 60;;
esac)sh");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(CountLines(ReadFile(dir_ / "runs")), 3) << "one run and two restarts";
  EXPECT_THAT(r.err, HasSubstr("worker:0 exited with code 1 (the restart limit of 2 is used up)"));
  EXPECT_THAT(r.err, HasSubstr("job failed: worker:0 exited with code 1"));
}

TEST_F(LaunchTest, ExitCodePolicyFailsOnLowCodesAndRetriesHighOnes) {
  const std::string script = R"sh(
case $task in
  worker-0) echo run >> "$D/runs-$CODE"
            if [ ! -e "$D/ran-$CODE" ]; then touch "$D/ran-$CODE"; exit $CODE; fi
            exit 0;;
  *) exec sleep 60;;
esac)sh";
  const std::vector<std::string> flags = {"--cluster", "worker=2",        "--restart",
                                          "exit-code", "--restart-delay", "0"};
  ProcessResult permanent = Launch(flags, script, {{"CODE", "2"}});
  EXPECT_EQ(permanent.exit_code, 2) << permanent.err;
  EXPECT_EQ(CountLines(ReadFile(dir_ / "runs-2")), 1);
  EXPECT_THAT(permanent.err, HasSubstr("worker:0 exited with code 2 (codes 1-127 are permanent "
                                       "under --restart exit-code)"));

  ProcessResult retried = Launch(flags, script, {{"CODE", "130"}});
  EXPECT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(CountLines(ReadFile(dir_ / "runs-130")), 2);
  EXPECT_THAT(retried.err, HasSubstr("worker:0 exited 130; restarting it"));
}

class LaunchSignalTest : public LaunchTest, public ::testing::WithParamInterface<int> {};

TEST_P(LaunchSignalTest, StopsEveryTaskAndItsChildren) {
  const int sig = GetParam();
  // Each task's shell has a child of its own: it must go too (the process group is killed).
  auto launcher = Start({"--cluster", "ps=1,worker=2", "--grace", "5"}, R"sh(
sleep 60 & echo $! > "$D/$task.child"
ready
wait)sh");
  ASSERT_NE(launcher, nullptr);
  std::vector<pid_t> pids;
  for (const char* task : {"ps-0", "worker-0", "worker-1"}) {
    pids.push_back(WaitForPid(task));
    pids.push_back(ReadPid(dir_ / (std::string(task) + ".child")));
  }
  launcher->Signal(sig);
  auto code = launcher->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok()) << code.status() << ReadFile(LauncherLog());
  EXPECT_EQ(*code, 128 + sig) << ReadFile(LauncherLog());
  for (pid_t pid : pids) EXPECT_TRUE(WaitGone(pid)) << "pid " << pid << " outlived the launcher";
  const std::string log = ReadFile(LauncherLog());
  EXPECT_THAT(log, HasSubstr(std::string("got ") + (sig == SIGINT ? "SIGINT" : "SIGTERM")));
  EXPECT_THAT(log, HasSubstr(std::string("stopped by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM")));
  EXPECT_THAT(log, HasSubstr("worker:1  stopped by SIGTERM"));
}

INSTANTIATE_TEST_SUITE_P(CtrlCAndSigterm, LaunchSignalTest, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& param_info) {
                           return std::string(param_info.param == SIGINT ? "Sigint" : "Sigterm");
                         });

TEST_F(LaunchTest, ATaskIgnoringSigtermIsKilledAfterTheGracePeriod) {
  ProcessResult r = Launch({"--cluster", "chief=1,worker=1", "--grace", "0.3"}, R"sh(
case $task in
  chief-0) wait_for "$D/worker-0.pid"; exit 0;;
  *) trap '' TERM; ready; while :; do sleep 0.1; done;;
esac)sh");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("worker:0 still running 0.3s after SIGTERM; sending SIGKILL"));
  EXPECT_THAT(r.err, HasSubstr("worker:0  killed with SIGKILL (still running 0.3s after SIGTERM)"));
  EXPECT_TRUE(ProcessGone(ReadPid(dir_ / "worker-0.pid")));
}

TEST_F(LaunchTest, TasksDieWithAKilledLauncher) {
  // PR_SET_PDEATHSIG: even SIGKILL, which the launcher cannot catch, leaves no task behind.
  auto launcher = Start({"--cluster", "ps=1,worker=2"}, R"sh(
ready
exec sleep 60)sh");
  ASSERT_NE(launcher, nullptr);
  std::vector<pid_t> pids;
  for (const char* task : {"ps-0", "worker-0", "worker-1"}) pids.push_back(WaitForPid(task));
  launcher->Signal(SIGKILL);
  auto code = launcher->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + SIGKILL);
  for (pid_t pid : pids) EXPECT_TRUE(WaitGone(pid)) << "pid " << pid << " outlived the launcher";
}

TEST_F(LaunchTest, LogsKeepOneFilePerTaskWithoutPrefixes) {
  const fs::path logs = dir_ / "logs";
  ProcessResult r = Launch({"--cluster", "ps=1,worker=1", "--logs", logs.string()}, R"sh(
echo "out of $task"
echo "err of $task" >&2
ready
case $task in
  worker-0) wait_for "$D/ps-0.pid"; exit 0;;
  *) exec sleep 60;;
esac)sh");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* task : {"ps-0", "worker-0"}) {
    const std::string text = ReadFile(logs / (std::string(task) + ".log"));
    EXPECT_THAT(text, HasSubstr("out of " + std::string(task) + "\n")) << task;
    EXPECT_THAT(text, HasSubstr("err of " + std::string(task) + "\n")) << task;
    EXPECT_EQ(CountLines(text), 2) << text;
    EXPECT_THAT(text, Not(HasSubstr("[")));
  }
}

TEST_F(LaunchTest, PartialLinesAndOneTaskWithoutTfConfig) {
  // A one-task cluster gets no TF_CONFIG, as under TFJob; the launcher's own is not passed on.
  ProcessResult r = Launch({"--cluster", "worker=1"},
                           R"sh(printf 'tf=%s' "${TF_CONFIG-unset}"; printf 'no newline' >&2)sh",
                           {{"TF_CONFIG", R"({"cluster":{"worker":["x:1"]}})"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[worker:0] tf=unset\n");
  EXPECT_THAT(r.err, HasSubstr("[worker:0] no newline\n"));
}

TEST_F(LaunchTest, ClusterJsonKeepsGivenPortsAndFillsZeroOnes) {
  const fs::path file = dir_ / "cluster.json";
  std::ofstream(file)
      << R"({"Chief": ["localhost:0"], "worker": ["localhost:0", "localhost:2999"]})";
  ProcessResult r = Launch({"--cluster-json", file.string()}, R"sh(echo "$TF_CONFIG")sh");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = LinesByTask(r.out);
  ASSERT_TRUE(out.count("chief:0")) << r.out;
  auto config = nlohmann::json::parse(out.at("chief:0")[0], nullptr, false);
  ASSERT_FALSE(config.is_discarded());
  std::set<std::string> addresses = {config["cluster"]["chief"][0], config["cluster"]["worker"][0],
                                     config["cluster"]["worker"][1]};
  EXPECT_EQ(addresses.size(), 3u);
  EXPECT_EQ(addresses.count("localhost:0"), 0u);
  EXPECT_EQ(config["cluster"]["worker"][1], "localhost:2999");
  EXPECT_EQ(config["task"]["type"], "chief");
}

// Bad flags: one line naming the flag, exit 1, nothing started.
TEST_F(LaunchTest, BadFlagsAreOneLineAndExitOne) {
  const std::string tw = BuiltProgram("tools/tw");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--", "true"}, "exactly one of --cluster"},
      {{"--cluster", "ps=1", "--cluster-json", "c.json", "--", "true"}, "exactly one of --cluster"},
      {{"--cluster", "ps=0", "--", "true"}, "--cluster: "},
      {{"--cluster", "ps=1", "--restart", "always", "--", "true"},
       "--restart: \"always\" is not one of never, on-failure, exit-code"},
      {{"--cluster", "ps=1", "--success", "most", "--", "true"}, "--success: "},
      {{"--cluster", "ps=1", "--grace", "-1", "--", "true"}, "--grace must be"},
      {{"--cluster", "ps=1", "--max-restarts", "-2", "--", "true"}, "--max-restarts must be"},
      {{"--cluster", "ps=1", "--color", "pink", "--", "true"}, "--color: "},
      {{"--cluster", "ps=1", "sh", "-c", "true"}, "put the program after --"},
      {{"--cluster", "ps=1", "--"}, "no program to run"},
      {{"--cluster", "ps=1", "--", "no-such-program-tw"}, "no-such-program-tw: command not found"},
      {{"--cluster-json", (dir_ / "missing.json").string(), "--", "true"}, "cannot read"},
      // Each job within its own limit, the launch over the total one.
      {{"--cluster", "ps=1000,worker=1", "--", "true"},
       "--cluster ps=1000,worker=1 has 1001 tasks; tw launch starts at most 1000"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {tw, "launch"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunProcess(argv);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 1) << message << ": " << r->err;
    EXPECT_THAT(r->err, HasSubstr(message));
    EXPECT_EQ(CountLines(r->err), 1) << r->err;
    EXPECT_TRUE(r->out.empty()) << r->out;
  }
}

}  // namespace
}  // namespace tw
