#include "tools/launch/launch_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw::launch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<TaskId> Tasks(std::initializer_list<std::pair<const char*, int>> jobs) {
  std::vector<TaskId> out;
  for (const auto& [job, n] : jobs) {
    for (int i = 0; i < n; ++i) out.push_back({job, i});
  }
  return out;
}

TEST(LaunchPolicyTest, ParsesFlagValues) {
  EXPECT_EQ(*ParseRestartPolicy("never"), RestartPolicy::kNever);
  EXPECT_EQ(*ParseRestartPolicy("on-failure"), RestartPolicy::kOnFailure);
  EXPECT_EQ(*ParseRestartPolicy("exit-code"), RestartPolicy::kExitCode);
  EXPECT_THAT(ParseRestartPolicy("always").status().message(),
              HasSubstr("\"always\" is not one of never, on-failure, exit-code"));
  EXPECT_EQ(RestartPolicyName(RestartPolicy::kExitCode), "exit-code");
  EXPECT_EQ(*ParseSuccessPolicy("default"), SuccessPolicy::kDefault);
  EXPECT_EQ(*ParseSuccessPolicy("all-workers"), SuccessPolicy::kAllWorkers);
  EXPECT_TRUE(IsInvalidArgument(ParseSuccessPolicy("AllWorkers").status()));
  EXPECT_EQ(*ParseSuccessPolicy("reduce:0"), SuccessRule(TaskId{"reduce", 0}));
  EXPECT_EQ(*ParseSuccessPolicy("a:b:12"), SuccessRule(TaskId{"a:b", 12}));
  for (const char* bad : {"reduce", "reduce:", ":0", "reduce:-1", "reduce:x", "reduce:99999999"}) {
    EXPECT_THAT(ParseSuccessPolicy(bad).status().message(),
                HasSubstr("is not one of default, all-workers, or a task JOB:INDEX"))
        << bad;
  }
}

TEST(LaunchPolicyTest, ANamedDecidingTaskMustBeInTheCluster) {
  const std::vector<TaskId> tasks = Tasks({{"files", 1}, {"reduce", 1}, {"map", 2}});
  EXPECT_TRUE(CheckSuccessRule(SuccessRule(TaskId{"reduce", 0}), tasks).ok());
  EXPECT_TRUE(CheckSuccessRule(SuccessPolicy::kDefault, tasks).ok());
  Status missing = CheckSuccessRule(SuccessRule(TaskId{"reduce", 1}), tasks);
  EXPECT_TRUE(IsInvalidArgument(missing));
  EXPECT_THAT(missing.message(), HasSubstr("reduce:1 is not a task of the cluster"));
  EXPECT_THAT(DecidingTasks(tasks, SuccessRule(TaskId{"reduce", 0})),
              ElementsAre(TaskId{"reduce", 0}));
}

TEST(LaunchPolicyTest, RetryableExitCodesFollowTfJob) {
  for (int code : {1, 2, 127, 128, 130, 137, 143, 255}) {
    EXPECT_FALSE(IsRetryable(RestartPolicy::kNever, code)) << code;
    EXPECT_TRUE(IsRetryable(RestartPolicy::kOnFailure, code)) << code;
    EXPECT_EQ(IsRetryable(RestartPolicy::kExitCode, code), code >= 128) << code;
  }
  for (RestartPolicy p :
       {RestartPolicy::kNever, RestartPolicy::kOnFailure, RestartPolicy::kExitCode}) {
    EXPECT_FALSE(IsRetryable(p, 0));
  }
}

TEST(LaunchPolicyTest, ChiefDecidesThenMasterThenWorkerZero) {
  EXPECT_THAT(
      DecidingTasks(Tasks({{"chief", 1}, {"ps", 1}, {"worker", 2}}), SuccessPolicy::kDefault),
      ElementsAre(TaskId{"chief", 0}));
  EXPECT_THAT(DecidingTasks(Tasks({{"master", 1}, {"worker", 2}}), SuccessPolicy::kDefault),
              ElementsAre(TaskId{"master", 0}));
  EXPECT_THAT(
      DecidingTasks(Tasks({{"ps", 2}, {"worker", 3}, {"evaluator", 1}}), SuccessPolicy::kDefault),
      ElementsAre(TaskId{"worker", 0}));
}

TEST(LaunchPolicyTest, WithoutChiefOrWorkerEveryTaskDecides) {
  const auto tasks = Tasks({{"files", 1}, {"reduce", 1}, {"map", 2}});
  EXPECT_EQ(DecidingTasks(tasks, SuccessPolicy::kDefault), tasks);
  EXPECT_EQ(DecidingTasks(tasks, SuccessPolicy::kAllWorkers), tasks);
  // A sparse worker job without task 0 cannot have worker:0 decide.
  const std::vector<TaskId> sparse = {{"ps", 0}, {"worker", 1}};
  EXPECT_EQ(DecidingTasks(sparse, SuccessPolicy::kDefault), sparse);
}

TEST(LaunchPolicyTest, AllWorkersAddsEveryWorkerAndTheChief) {
  EXPECT_THAT(DecidingTasks(Tasks({{"ps", 1}, {"worker", 3}}), SuccessPolicy::kAllWorkers),
              ElementsAre(TaskId{"worker", 0}, TaskId{"worker", 1}, TaskId{"worker", 2}));
  EXPECT_THAT(
      DecidingTasks(Tasks({{"chief", 1}, {"ps", 1}, {"worker", 2}}), SuccessPolicy::kAllWorkers),
      ElementsAre(TaskId{"chief", 0}, TaskId{"worker", 0}, TaskId{"worker", 1}));
}

TEST(JobPolicyTest, ChiefExitZeroSucceedsWhileOthersRun) {
  JobPolicy p(Tasks({{"chief", 1}, {"ps", 1}, {"worker", 2}}), SuccessPolicy::kDefault,
              RestartPolicy::kNever, 3);
  EXPECT_EQ(p.OnExit(3, 0), ExitAction::kNone);  // worker:1 done early: fine
  EXPECT_EQ(p.OnExit(0, 0), ExitAction::kJobSucceeded);
  EXPECT_TRUE(p.decided());
  // The tasks stopped afterwards do not change the verdict.
  EXPECT_EQ(p.OnExit(1, 143), ExitAction::kNone);
}

TEST(JobPolicyTest, AnyPermanentFailureFailsTheJob) {
  JobPolicy p(Tasks({{"ps", 1}, {"worker", 2}}), SuccessPolicy::kDefault, RestartPolicy::kNever, 3);
  EXPECT_EQ(p.OnExit(2, 3), ExitAction::kJobFailed);
  EXPECT_EQ(p.last_no_restart_reason(), NoRestartReason::kPolicy);
  EXPECT_EQ(p.OnExit(1, 0), ExitAction::kNone);  // worker:0 exiting 0 later: too late
}

TEST(JobPolicyTest, OnFailureRestartsUntilTheJobWideLimit) {
  JobPolicy p(Tasks({{"ps", 1}, {"worker", 2}}), SuccessPolicy::kDefault, RestartPolicy::kOnFailure,
              2);
  EXPECT_EQ(p.OnExit(1, 1), ExitAction::kRestart);
  EXPECT_EQ(p.OnExit(2, 137), ExitAction::kRestart);
  EXPECT_EQ(p.restarts_used(), 2);
  EXPECT_EQ(p.OnExit(0, 1), ExitAction::kJobFailed);
  EXPECT_EQ(p.last_no_restart_reason(), NoRestartReason::kLimit);
}

TEST(JobPolicyTest, ExitCodePolicyRetriesOnlySignalCodes) {
  JobPolicy p(Tasks({{"worker", 2}}), SuccessPolicy::kDefault, RestartPolicy::kExitCode, 5);
  EXPECT_EQ(p.OnExit(1, 130), ExitAction::kRestart);
  EXPECT_EQ(p.OnExit(1, 255), ExitAction::kRestart);
  EXPECT_EQ(p.OnExit(1, 2), ExitAction::kJobFailed);
  EXPECT_EQ(p.last_no_restart_reason(), NoRestartReason::kPolicy);
  EXPECT_EQ(p.restarts_used(), 2);
}

TEST(JobPolicyTest, ZeroRestartsAllowedMeansNone) {
  JobPolicy p(Tasks({{"worker", 1}}), SuccessPolicy::kDefault, RestartPolicy::kOnFailure, 0);
  EXPECT_EQ(p.OnExit(0, 1), ExitAction::kJobFailed);
  EXPECT_EQ(p.last_no_restart_reason(), NoRestartReason::kLimit);
}

TEST(JobPolicyTest, AllWorkersWaitsForTheLastWorker) {
  JobPolicy p(Tasks({{"ps", 1}, {"worker", 3}}), SuccessPolicy::kAllWorkers, RestartPolicy::kNever,
              0);
  EXPECT_EQ(p.OnExit(1, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(3, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(0, 0), ExitAction::kNone);  // the ps does not count
  EXPECT_EQ(p.OnExit(2, 0), ExitAction::kJobSucceeded);
}

// The count of deciding tasks still to succeed: each counts once, and one that fails after
// exiting 0 is not done again.
TEST(JobPolicyTest, AllWorkersCountsEachWorkerOnceWhateverTheOrder) {
  JobPolicy p(Tasks({{"worker", 3}}), SuccessPolicy::kAllWorkers, RestartPolicy::kOnFailure, 5);
  EXPECT_EQ(p.OnExit(0, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(0, 0), ExitAction::kNone);  // the same worker twice is still one
  EXPECT_EQ(p.OnExit(1, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(1, 137), ExitAction::kRestart);
  EXPECT_EQ(p.OnExit(2, 0), ExitAction::kNone);  // worker 1 is running again
  EXPECT_EQ(p.OnExit(1, 0), ExitAction::kJobSucceeded);
}

TEST(JobPolicyTest, WordCountShapeNeedsEveryTask) {
  JobPolicy p(Tasks({{"files", 1}, {"reduce", 1}, {"map", 2}}), SuccessPolicy::kDefault,
              RestartPolicy::kOnFailure, 1);
  EXPECT_EQ(p.OnExit(2, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(3, 1), ExitAction::kRestart);
  EXPECT_EQ(p.OnExit(3, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(0, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(1, 0), ExitAction::kJobSucceeded);
}

// The word count's reduce:0 prints the total: once it exits 0 the job has succeeded, even
// with a map restarted during the shutdown that would wait for peers that are gone.
TEST(JobPolicyTest, ANamedTaskDecidesAlone) {
  JobPolicy p(Tasks({{"files", 1}, {"reduce", 1}, {"map", 2}}), SuccessRule(TaskId{"reduce", 0}),
              RestartPolicy::kExitCode, 3);
  EXPECT_EQ(p.OnExit(0, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(3, 137), ExitAction::kRestart);
  EXPECT_EQ(p.OnExit(2, 0), ExitAction::kNone);
  EXPECT_EQ(p.OnExit(1, 0), ExitAction::kJobSucceeded);
}

}  // namespace
}  // namespace tw::launch
