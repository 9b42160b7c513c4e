// The trainer (examples/mnist_ps) as separate processes: its ps task is killed with SIGKILL
// in the middle of training and started again; the chief recovers by itself (a new session,
// restoring the latest checkpoint), training finishes, and the global step never goes back
// past the checkpoint it restored.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/ports.h"
#include "testing/subprocess.h"

namespace tw {
namespace {

namespace fs = std::filesystem;
using testing::BuiltProgram;
using testing::ChildProcess;

// The highest global step among the finished checkpoints in `dir` (-1 when none): a
// checkpoint is finished once its index exists.
int64_t LatestCheckpointStep(const fs::path& dir) {
  int64_t latest = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, std::regex(R"(model\.ckpt-([0-9]+)\.index)"))) {
      latest = std::max<int64_t>(latest, std::stoll(m[1]));
    }
  }
  return latest;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Trains with `ps_tasks` ps tasks and one worker (the chief) given `trainer_flags`, kills ps
// task `victim` after the second checkpoint, restarts it, and checks that training finishes
// from a checkpoint at least as recent, never reporting a step before it.
void KillAndRestartPsDuringTraining(int ps_tasks, int victim,
                                    const std::vector<std::string>& trainer_flags) {
  // Files of their own per test: ctest may run the tests of this file at the same time.
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  // And of their own per process: other checkouts on this machine run the same tests in
  // the same temporary directory.
  const std::string files = ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid());
  std::vector<std::string> ps;
  for (int i = 0; i < ps_tasks; ++i) {
    ps.push_back("127.0.0.1:" + std::to_string(testing::PickUnusedPort()));
  }
  const std::string worker = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const fs::path dir = files + "_checkpoints";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string ps_hosts = "--ps_hosts=";
  for (int i = 0; i < ps_tasks; ++i) ps_hosts += (i > 0 ? "," : "") + ps[i];
  const std::vector<std::string> cluster = {ps_hosts, "--worker_hosts=" + worker};
  auto start = [&](const std::string& job, int index, const std::string& log,
                   std::vector<std::string> extra) {
    std::vector<std::string> argv = {BuiltProgram("examples/mnist_ps")};
    argv.insert(argv.end(), cluster.begin(), cluster.end());
    argv.push_back("--job_name=" + job);
    argv.push_back("--task_index=" + std::to_string(index));
    argv.insert(argv.end(), extra.begin(), extra.end());
    return ChildProcess::Start(argv, {{"TF_CONFIG", std::nullopt}}, log);
  };
  // The ps tasks write their shards of each checkpoint: their servers must allow the
  // directory, as under tw launch, where every task gets the trainer's flags.
  const std::vector<std::string> ps_flags = {"--checkpoint_dir=" + dir.string()};
  std::vector<std::unique_ptr<ChildProcess>> ps_processes;
  for (int i = 0; i < ps_tasks; ++i) {
    auto p = start("ps", i, files + "_ps" + std::to_string(i) + ".log", ps_flags);
    ASSERT_TRUE(p.ok()) << p.status();
    ps_processes.push_back(*std::move(p));
  }
  const std::string worker_log = files + "_worker.log";
  std::vector<std::string> flags = {"--max_steps=3000", "--batch_size=50",
                                    "--save_every=300", "--log_every=100",
                                    "--seed=1",         "--checkpoint_dir=" + dir.string()};
  flags.insert(flags.end(), trainer_flags.begin(), trainer_flags.end());
  auto chief = start("worker", 0, worker_log, flags);
  ASSERT_TRUE(chief.ok()) << chief.status();

  // Wait (bounded) for a checkpoint past the first one, then kill the ps task.
  int64_t before_kill = -1;
  for (int i = 0; i < 1200 && before_kill < 600; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    before_kill = LatestCheckpointStep(dir);
  }
  ASSERT_GE(before_kill, 600) << ReadFile(worker_log);
  ps_processes[victim]->Signal(SIGKILL);
  ASSERT_TRUE(ps_processes[victim]->Wait(absl::Seconds(10)).ok());
  absl::SleepFor(absl::Milliseconds(500));  // the chief's steps now fail: Unavailable
  auto again = start("ps", victim, files + "_ps_again.log", ps_flags);
  ASSERT_TRUE(again.ok()) << again.status();
  ps_processes[victim] = *std::move(again);

  auto code = (*chief)->Wait(absl::Seconds(240));
  const std::string log = ReadFile(worker_log);
  ASSERT_TRUE(code.ok()) << code.status() << "\n" << log;
  ASSERT_EQ(*code, 0) << log;

  // The chief restored a checkpoint at least as recent as the one seen before the kill...
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(log, m, std::regex(R"(restored the model from \S*model\.ckpt-([0-9]+))")))
      << log;
  const int64_t restored = std::stoll(m[1]);
  EXPECT_GE(restored, before_kill);
  // ... and every step it reported after that is past it.
  const std::string after = log.substr(static_cast<size_t>(m.position(0)));
  std::regex step_line(R"(step ([0-9]+): loss)");
  int reported = 0;
  for (auto it = std::sregex_iterator(after.begin(), after.end(), step_line);
       it != std::sregex_iterator(); ++it) {
    EXPECT_GE(std::stoll((*it)[1]), restored) << (*it)[0];
    ++reported;
  }
  EXPECT_GT(reported, 0) << log;
  EXPECT_THAT(log, ::testing::ContainsRegex(R"(test accuracy: 0\.[0-9]{4})"));
  EXPECT_EQ(LatestCheckpointStep(dir), 3000);
  // Every ps task, the restarted one too, ends with the cluster.
  for (auto& p : ps_processes) {
    auto ps_code = p->Wait(absl::Seconds(30));
    ASSERT_TRUE(ps_code.ok()) << ps_code.status();
    EXPECT_EQ(*ps_code, 0);
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);  // kept to look at when failed
}

TEST(TrainingRecoveryTest, KilledPsIsRestartedAndTrainingResumesFromTheLatestCheckpoint) {
  KillAndRestartPsDuringTraining(1, 0, {});
}

// Synchronous replicas, and the ps task holding the global step survives: its accumulators
// have seen steps past the checkpoint the chief restores, so without their reset every
// fresh gradient would look stale to them and training would wait forever.
TEST(TrainingRecoveryTest, SyncTrainingRecoversWhileAnotherPsTaskKeepsItsNewerState) {
  KillAndRestartPsDuringTraining(2, 1, {"--sync"});
}

}  // namespace
}  // namespace tw
