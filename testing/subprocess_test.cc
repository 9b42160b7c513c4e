#include "testing/subprocess.h"

#include <signal.h>

#include <thread>

#include "gtest/gtest.h"

namespace tw::testing {
namespace {

TEST(SubprocessTest, RunProcessCapturesOutputAndExitCode) {
  auto result = RunProcess({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(result->out, "out\n");
  EXPECT_EQ(result->err, "err\n");
  EXPECT_FALSE(RunProcess({"/no/such/program"}).ok());
}

// A child dies with the test that started it (here: the thread that started it ends), so a
// killed test binary leaves no server running.
TEST(SubprocessTest, AChildDiesWithTheThreadThatStartedIt) {
  std::unique_ptr<ChildProcess> child;
  std::thread starter([&] {
    auto started = ChildProcess::Start({"/bin/sleep", "600"}, {}, "/dev/null");
    ASSERT_TRUE(started.ok()) << started.status();
    child = *std::move(started);
  });
  starter.join();
  ASSERT_NE(child, nullptr);
  auto code = child->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 128 + SIGKILL);
}

}  // namespace
}  // namespace tw::testing
