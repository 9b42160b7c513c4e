#include "tools/launch/line_splitter.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw::launch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

struct Collector {
  std::vector<std::string> lines;
  LineSplitter::Emit emit() {
    return [this](std::string_view line) { lines.emplace_back(line); };
  }
};

TEST(LineSplitterTest, SplitsWholeLinesAndKeepsEmptyOnes) {
  LineSplitter s;
  Collector c;
  s.Feed("a\nbb\n\nccc\n", c.emit());
  EXPECT_THAT(c.lines, ElementsAre("a", "bb", "", "ccc"));
  EXPECT_FALSE(s.has_partial());
}

TEST(LineSplitterTest, JoinsLinesSplitAcrossReads) {
  LineSplitter s;
  Collector c;
  s.Feed("hel", c.emit());
  EXPECT_THAT(c.lines, IsEmpty());
  EXPECT_TRUE(s.has_partial());
  s.Feed("lo\nwor", c.emit());
  s.Feed("ld", c.emit());
  s.Feed("\n", c.emit());
  EXPECT_THAT(c.lines, ElementsAre("hello", "world"));
}

TEST(LineSplitterTest, FinishEmitsALastLineWithoutNewline) {
  LineSplitter s;
  Collector c;
  s.Feed("one\ntwo", c.emit());
  s.Finish(c.emit());
  s.Finish(c.emit());  // nothing left the second time
  EXPECT_THAT(c.lines, ElementsAre("one", "two"));
}

TEST(LineSplitterTest, CutsOverlongLinesWithoutLosingBytes) {
  LineSplitter s(4);
  Collector c;
  s.Feed("abcdefghij\nxy", c.emit());
  EXPECT_THAT(c.lines, ElementsAre("abcd", "efgh", "ij"));
  s.Feed("zw", c.emit());  // exactly full: kept until we know whether '\n' follows
  EXPECT_THAT(c.lines, ElementsAre("abcd", "efgh", "ij"));
  s.Feed("\n", c.emit());
  EXPECT_THAT(c.lines, ElementsAre("abcd", "efgh", "ij", "xyzw"));
  s.Feed("1234", c.emit());
  s.Feed("5\n", c.emit());
  EXPECT_THAT(c.lines, ElementsAre("abcd", "efgh", "ij", "xyzw", "1234", "5"));
}

}  // namespace
}  // namespace tw::launch
