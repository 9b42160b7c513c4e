#include "src/cluster/job_counts.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(JobCountsTest, KeepsTheOrderGiven) {
  auto counts = ParseJobCounts("files=1, reduce=1,map=2");
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_THAT(*counts,
              ElementsAre(JobCount{"files", 1}, JobCount{"reduce", 1}, JobCount{"map", 2}));
}

TEST(JobCountsTest, RejectsMalformedEntries) {
  EXPECT_THAT(ParseJobCounts("").status().message(), HasSubstr("empty"));
  EXPECT_THAT(ParseJobCounts("ps").status().message(), HasSubstr("\"ps\" is not JOB=N"));
  EXPECT_THAT(ParseJobCounts("ps=0").status().message(), HasSubstr("from 1 to 1000"));
  EXPECT_THAT(ParseJobCounts("ps=x").status().message(), HasSubstr("task count \"x\""));
  EXPECT_THAT(ParseJobCounts("p s=1").status().message(), HasSubstr("job name \"p s\""));
  EXPECT_THAT(ParseJobCounts("ps=1,ps=2").status().message(), HasSubstr("names job \"ps\" twice"));
}

TEST(JobCountsTest, MakesConsecutivePortsLikeTheSeedsScript) {
  auto cluster = MakeClusterOnHost(*ParseJobCounts("files=1,reduce=1,map=2"), "localhost", 2222);
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(
      cluster->ToJson(),
      R"({"files":["localhost:2222"],"map":["localhost:2224","localhost:2225"],"reduce":["localhost:2223"]})");
  EXPECT_EQ(*MakeClusterOnHost({{"w", 1}}, "::1", 80)->task_address("w", 0), "[::1]:80");
  EXPECT_THAT(MakeClusterOnHost({{"w", 3}}, "h", 65534).status().message(),
              HasSubstr("port 65536 for w:2"));
}

}  // namespace
}  // namespace tw
