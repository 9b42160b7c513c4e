#include "tools/top/top_view.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw::top {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(TopViewTest, OneLinePerTaskWithRatesOrWhyItIsDown) {
  TaskRow ps{.address = "127.0.0.1:9100",
             .totals = {.task = "ps:0", .resident_bytes = 41.9e6, .variable_bytes = 1.6e6},
             .rates = TaskRates{
                 .steps = 0, .rpcs = 1234, .bytes_in = 12.3e6, .bytes_out = 45.6e6, .cpu = 0.53}};
  TaskRow starting{.address = "127.0.0.1:9101", .totals = {.task = "worker:0"}};
  TaskRow down{.address = "127.0.0.1:9102", .error = "Connection"};
  const auto lines = RenderTable({ps, starting, down}, 1.0, 0);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_THAT(lines[0], StartsWith("tw top: 2 of 3 tasks answering, every 1.0 s"));
  EXPECT_THAT(lines[1], StartsWith("TASK "));
  EXPECT_THAT(lines[2], StartsWith("ps:0 "));
  EXPECT_THAT(lines[2], HasSubstr(" 1234.0 "));
  EXPECT_THAT(lines[2], HasSubstr(" 12.30 "));
  EXPECT_THAT(lines[2], HasSubstr(" 45.60 "));
  EXPECT_THAT(lines[3], StartsWith("worker:0 "));  // one scrape so far: no rates yet
  EXPECT_THAT(lines[4], StartsWith("?            127.0.0.1:9102        down: Connection"));
}

TEST(TopViewTest, LinesAreCutToTheTerminalsWidth) {
  TaskRow row{.address = "127.0.0.1:9100", .totals = {.task = "ps:0"}, .rates = TaskRates{}};
  for (const std::string& line : RenderTable({row}, 1.0, 40)) EXPECT_LE(line.size(), 40u);
}

}  // namespace
}  // namespace tw::top
