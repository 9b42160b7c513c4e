#include "tools/launch/console.h"

#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw::launch {
namespace {

using ::testing::HasSubstr;

std::vector<TaskStatusView> Views() {
  return {{"chief:0", "running"},
          {"ps:0", "running"},
          {"worker:0", "exited 0"},
          {"worker:1", "restarting"}};
}

TEST(StatusLineTest, ListsEveryTaskWhenItFits) {
  EXPECT_EQ(FormatStatusLine(Views(), 12, 200),
            "tw launch 12s | chief:0 running | ps:0 running | worker:0 exited 0 | worker:1 "
            "restarting");
}

TEST(StatusLineTest, CountsStatesWhenTooLong) {
  EXPECT_EQ(FormatStatusLine(Views(), 3, 60),
            "tw launch 3s | 2 running | 1 exited 0 | 1 restarting");
}

TEST(StatusLineTest, CutsToTheWidth) {
  const std::string line = FormatStatusLine(Views(), 3, 20);
  EXPECT_EQ(line, "tw launch 3s | 2 ...");
  EXPECT_EQ(line.size(), 20u);
}

// Reads what a Console wrote into a pipe.
std::string Drain(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

TEST(ConsoleTest, PrefixesLinesAndColoursOnlyWhenAsked) {
  int out[2], err[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_EQ(pipe(err), 0);
  {
    Console plain({.out_fd = out[1], .err_fd = err[1]});
    plain.TaskLine("map:1", TaskColor(1), false, "counted 3 words");
    plain.TaskLine("map:1", TaskColor(1), true, "warning");
    plain.Message("job succeeded");
    Console colored({.out_fd = out[1], .err_fd = err[1], .color_out = true});
    colored.TaskLine("ps:0", TaskColor(0), false, "up");
  }
  close(out[1]);
  close(err[1]);
  EXPECT_EQ(Drain(out[0]), "[map:1] counted 3 words\n\x1b[36m[ps:0]\x1b[0m up\n");
  EXPECT_EQ(Drain(err[0]), "[map:1] warning\ntw launch: job succeeded\n");
  close(out[0]);
  close(err[0]);
}

TEST(ConsoleTest, StatusLineIsErasedBeforeOtherOutput) {
  int err[2];
  ASSERT_EQ(pipe(err), 0);
  {
    Console c({.out_fd = err[1], .err_fd = err[1], .status_line = true});
    c.ShowStatus({{"worker:0", "running"}}, 1);
    c.TaskLine("worker:0", TaskColor(0), false, "hi");
    c.ClearStatus();  // already erased: writes nothing
  }
  close(err[1]);
  const std::string text = Drain(err[0]);
  EXPECT_EQ(text, "\r\x1b[Ktw launch 1s | worker:0 running\r\x1b[K[worker:0] hi\n");
  close(err[0]);
}

}  // namespace
}  // namespace tw::launch
