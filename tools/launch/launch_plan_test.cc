#include "tools/launch/launch_plan.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/cluster/tf_config.h"

namespace tw::launch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ClusterSpec LocalCluster(std::string_view shape, std::vector<int> ports) {
  auto counts = ParseJobCounts(shape);
  EXPECT_TRUE(counts.ok()) << counts.status();
  auto cluster = MakeLocalCluster(*counts, ports);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *cluster : ClusterSpec();
}

TEST(LaunchPlanTest, LocalClusterGivesPortsInFlagOrder) {
  const ClusterSpec cluster = LocalCluster("worker=2,ps=1", {5001, 5002, 5003});
  EXPECT_EQ(*cluster.task_address("worker", 0), "localhost:5001");
  EXPECT_EQ(*cluster.task_address("worker", 1), "localhost:5002");
  EXPECT_EQ(*cluster.task_address("ps", 0), "localhost:5003");
}

TEST(LaunchPlanTest, LocalClusterRejectsBadPortsAndCaseTwins) {
  auto counts = ParseJobCounts("worker=2");
  EXPECT_THAT(MakeLocalCluster(*counts, {1}).status().message(), HasSubstr("2 tasks but 1 ports"));
  EXPECT_THAT(MakeLocalCluster(*counts, {1, 70000}).status().message(),
              HasSubstr("port 70000 for worker:1"));
  auto twins = ParseJobCounts("Worker=1,worker=1");
  ASSERT_TRUE(twins.ok());
  EXPECT_THAT(MakeLocalCluster(*twins, {1, 2}).status().message(),
              HasSubstr("differ only in case"));
  // TFJob lower-cases replica types.
  auto upper = ParseJobCounts("PS=1,Worker=1");
  EXPECT_EQ(MakeLocalCluster(*upper, {1, 2})->jobs(), (std::vector<std::string>{"ps", "worker"}));
}

// The exact bytes TFJob's operator writes (its test string, with our hosts).
TEST(LaunchPlanTest, TfConfigIsTfJobsBytes) {
  const ClusterSpec cluster = LocalCluster("worker=2,ps=1,chief=1", {4001, 4002, 4003, 4004});
  EXPECT_EQ(*TfJobTfConfig(cluster, {"worker", 1}),
            R"({"cluster":{"chief":["localhost:4004"],"ps":["localhost:4003"],)"
            R"("worker":["localhost:4001","localhost:4002"]},)"
            R"("task":{"type":"worker","index":1},"environment":"cloud"})");
}

TEST(LaunchPlanTest, TfConfigResolvesToTheTaskItNames) {
  const ClusterSpec cluster = LocalCluster("ps=1,worker=2", {4001, 4002, 4003});
  for (const TaskPlan& task : PlanTasks(cluster)) {
    ASSERT_TRUE(task.tf_config.has_value());
    auto parsed = ParseTfConfig(*task.tf_config);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed->cluster, cluster);
    EXPECT_EQ(*parsed->task_type, task.id.job);
    EXPECT_EQ(*parsed->task_index, task.id.index);
    EXPECT_EQ(parsed->environment, "cloud");
    EXPECT_TRUE(parsed->warnings.empty());
  }
}

TEST(LaunchPlanTest, OneTaskClusterGetsNoTfConfigLikeTfJob) {
  const ClusterSpec cluster = LocalCluster("worker=1", {4001});
  EXPECT_EQ(TfJobTfConfig(cluster, {"worker", 0}), std::nullopt);
  EXPECT_THAT(TaskEnvironment({"PATH=/bin", "TF_CONFIG={}", "HOME=/root"}, std::nullopt, 2),
              ElementsAre("PATH=/bin", "HOME=/root", "TW_NUM_THREADS=2"));
  EXPECT_THAT(TaskEnvironment({"TF_CONFIG=old", "A=1"}, std::string("{\"x\":1}"), 1),
              ElementsAre("A=1", "TF_CONFIG={\"x\":1}", "TW_NUM_THREADS=1"));
}

TEST(LaunchPlanTest, TasksShareTheCoresUnlessTheUserChoseThreads) {
  EXPECT_EQ(ThreadsPerTask(2, 3), 1);
  EXPECT_EQ(ThreadsPerTask(8, 3), 2);
  EXPECT_EQ(ThreadsPerTask(16, 1), 16);
  EXPECT_EQ(ThreadsPerTask(0, 0), 1);
  EXPECT_THAT(TaskEnvironment({"TW_NUM_THREADS=4", "A=1"}, std::nullopt, 1),
              ElementsAre("TW_NUM_THREADS=4", "A=1"));
}

TEST(LaunchPlanTest, PlanOrderFollowsTheFlagThenSortedJobs) {
  const ClusterSpec cluster = LocalCluster("worker=2,ps=1,chief=1", {1, 2, 3, 4});
  std::vector<std::string> names;
  for (const TaskPlan& t : PlanTasks(cluster, {"Worker", "ps"})) {
    names.push_back(t.id.ToString() + "@" + t.address);
  }
  EXPECT_THAT(names, ElementsAre("worker:0@localhost:1", "worker:1@localhost:2", "ps:0@localhost:3",
                                 "chief:0@localhost:4"));
}

TEST(LaunchPlanTest, ClusterJsonAcceptsAClusterOrAWholeTfConfig) {
  auto bare = ParseLaunchClusterJson(R"({"PS": ["localhost:0"], "worker": {"1": "h:7"}})", "f");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->jobs(), (std::vector<std::string>{"ps", "worker"}));
  EXPECT_EQ(*bare->task_address("worker", 1), "h:7");
  auto whole = ParseLaunchClusterJson(
      R"({"cluster": {"worker": ["a:1", "a:2"]}, "task": {"type": "worker", "index": 0}})", "f");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->CountTasks("worker"), 2);
  // A job that happens to be called "cluster".
  auto job_named_cluster = ParseLaunchClusterJson(R"({"cluster": ["a:1"]})", "f");
  ASSERT_TRUE(job_named_cluster.ok()) << job_named_cluster.status();
  EXPECT_TRUE(job_named_cluster->HasJob("cluster"));
}

// Every task is a process here and every TF_CONFIG lists every task: a launch is capped.
TEST(LaunchPlanTest, ClusterJsonHasAtMostTheTaskCap) {
  auto cluster_of = [](int tasks) {
    std::string json = R"({"worker": [)";
    for (int i = 0; i < tasks; ++i) json += std::string(i == 0 ? "" : ",") + R"("localhost:0")";
    return json + "]}";
  };
  auto at_cap = ParseLaunchClusterJson(cluster_of(kMaxLaunchTasks), "c.json");
  ASSERT_TRUE(at_cap.ok()) << at_cap.status();
  EXPECT_EQ(at_cap->CountTasks("worker"), kMaxLaunchTasks);
  auto over = ParseLaunchClusterJson(cluster_of(kMaxLaunchTasks + 1), "--cluster-json c.json");
  EXPECT_TRUE(IsInvalidArgument(over.status())) << over.status();
  EXPECT_THAT(std::string(over.status().message()),
              HasSubstr("--cluster-json c.json has 1001 tasks; tw launch starts at most 1000"));
}

// The plan serializes the cluster once for all tasks; each TF_CONFIG is still exactly the
// one TfJobTfConfig makes for its task alone.
TEST(LaunchPlanTest, PlannedTfConfigsAreEachTasksOwn) {
  auto cluster = ParseLaunchClusterJson(
      R"({"chief": ["h:1"], "ps": {"0": "h:2", "3": "h:3"}, "worker": ["h:4", "h:5"]})", "f");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::vector<TaskPlan> plan = PlanTasks(*cluster);
  ASSERT_EQ(plan.size(), 5u);
  for (const TaskPlan& task : plan) {
    ASSERT_TRUE(task.tf_config.has_value()) << task.id.ToString();
    EXPECT_EQ(*task.tf_config, *TfJobTfConfig(*cluster, task.id)) << task.id.ToString();
  }
  EXPECT_EQ(*plan[2].tf_config,
            R"({"cluster":{"chief":["h:1"],"ps":{"0":"h:2","3":"h:3"},"worker":["h:4","h:5"]},)"
            R"("task":{"type":"ps","index":3},"environment":"cloud"})");
}

TEST(LaunchPlanTest, ClusterJsonErrorsNameTheFile) {
  EXPECT_THAT(ParseLaunchClusterJson("{\"ps\": [", "--cluster-json c.json").status().message(),
              HasSubstr("--cluster-json c.json"));
  EXPECT_THAT(ParseLaunchClusterJson(R"({"ps": ["nope"]})", "c.json").status().message(),
              HasSubstr("nope"));
  EXPECT_THAT(ParseLaunchClusterJson(R"({"ps": []})", "c.json").status().message(),
              HasSubstr("no tasks"));
  EXPECT_THAT(ParseLaunchClusterJson(R"({"task": {"type": "ps"}})", "c.json").status().message(),
              HasSubstr("no \"cluster\""));
}

TEST(LaunchPlanTest, ZeroPortsAreFilledInOrderAndOthersKept) {
  auto cluster = ParseLaunchClusterJson(
      R"({"ps": ["localhost:0"], "worker": ["localhost:2300", "[::1]:0"]})", "f");
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(NumZeroPorts(*cluster), 2);
  auto filled = FillZeroPorts(*cluster, {6001, 6002});
  ASSERT_TRUE(filled.ok()) << filled.status();
  EXPECT_EQ(*filled->task_address("ps", 0), "localhost:6001");
  EXPECT_EQ(*filled->task_address("worker", 0), "localhost:2300");
  EXPECT_EQ(*filled->task_address("worker", 1), "[::1]:6002");
  EXPECT_TRUE(filled->IsDense("worker"));
  EXPECT_FALSE(FillZeroPorts(*cluster, {6001}).ok());
}

TEST(LaunchPlanTest, PicksDistinctFreePorts) {
  auto ports = PickFreeLoopbackPorts(8);
  ASSERT_TRUE(ports.ok()) << ports.status();
  ASSERT_EQ(ports->size(), 8u);
  EXPECT_EQ(std::set<int>(ports->begin(), ports->end()).size(), 8u);
  for (int p : *ports) EXPECT_GT(p, 0);
}

TEST(LaunchPlanTest, FindsProgramsOnThePath) {
  EXPECT_EQ(*FindProgram("sh", "/nonexistent:/bin:/usr/bin"), "/bin/sh");
  EXPECT_EQ(*FindProgram("/bin/sh", ""), "/bin/sh");
  EXPECT_THAT(FindProgram("no-such-program-tw", "/bin").status().message(),
              HasSubstr("no-such-program-tw: command not found"));
  EXPECT_TRUE(IsNotFound(FindProgram("/etc/passwd", "/bin").status()));  // not executable
  EXPECT_TRUE(IsNotFound(FindProgram("/bin", "").status()));             // a directory
}

}  // namespace
}  // namespace tw::launch
