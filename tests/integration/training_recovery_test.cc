// The trainer (examples/mnist_ps) as separate processes: its ps task is killed with SIGKILL
// in the middle of training and started again; the chief recovers by itself (a new session,
// restoring the latest checkpoint), training finishes, and the global step never goes back
// past the checkpoint it restored.
#include <signal.h>

#include <filesystem>
#include <fstream>
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

TEST(TrainingRecoveryTest, KilledPsIsRestartedAndTrainingResumesFromTheLatestCheckpoint) {
  const std::string ps = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string worker = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const fs::path dir = fs::path(::testing::TempDir()) / "recovery_checkpoints";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<std::string> cluster = {"--ps_hosts=" + ps, "--worker_hosts=" + worker};
  auto start = [&](const std::string& job, const std::string& log, std::vector<std::string> extra) {
    std::vector<std::string> argv = {BuiltProgram("examples/mnist_ps")};
    argv.insert(argv.end(), cluster.begin(), cluster.end());
    argv.push_back("--job_name=" + job);
    argv.push_back("--task_index=0");
    argv.insert(argv.end(), extra.begin(), extra.end());
    return ChildProcess::Start(argv, {{"TF_CONFIG", std::nullopt}}, log);
  };
  const std::string ps_log = ::testing::TempDir() + "/recovery_ps.log";
  const std::string worker_log = ::testing::TempDir() + "/recovery_worker.log";
  auto ps_process = start("ps", ps_log, {});
  ASSERT_TRUE(ps_process.ok()) << ps_process.status();
  auto chief = start("worker", worker_log,
                     {"--max_steps=3000", "--batch_size=50", "--save_every=300", "--log_every=100",
                      "--seed=1", "--checkpoint_dir=" + dir.string()});
  ASSERT_TRUE(chief.ok()) << chief.status();

  // Wait (bounded) for a checkpoint past the first one, then kill the ps task.
  int64_t before_kill = -1;
  for (int i = 0; i < 1200 && before_kill < 600; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    before_kill = LatestCheckpointStep(dir);
  }
  ASSERT_GE(before_kill, 600) << ReadFile(worker_log);
  (*ps_process)->Signal(SIGKILL);
  ASSERT_TRUE((*ps_process)->Wait(absl::Seconds(10)).ok());
  absl::SleepFor(absl::Milliseconds(500));  // the chief's steps now fail: Unavailable
  auto again = start("ps", ::testing::TempDir() + "/recovery_ps_again.log", {});
  ASSERT_TRUE(again.ok()) << again.status();

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
  // The restarted ps task ends with the cluster.
  auto ps_code = (*again)->Wait(absl::Seconds(30));
  ASSERT_TRUE(ps_code.ok()) << ps_code.status();
  EXPECT_EQ(*ps_code, 0);
}

}  // namespace
}  // namespace tw
