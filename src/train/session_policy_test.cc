#include "tensorweave/train/session_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tw::train {
namespace {

using ::testing::HasSubstr;

TEST(SessionPolicyTest, OnlyAbortedAndUnavailableAreRecoverable) {
  EXPECT_TRUE(IsRecoverable(errors::Aborted("ps restarted")));
  EXPECT_TRUE(IsRecoverable(errors::Unavailable("ps gone")));
  EXPECT_FALSE(IsRecoverable(OkStatus()));
  EXPECT_FALSE(IsRecoverable(errors::InvalidArgument("bad feed")));
  EXPECT_FALSE(IsRecoverable(errors::DeadlineExceeded("slow")));
  EXPECT_FALSE(IsRecoverable(errors::Cancelled("interrupted")));
}

TEST(SessionPolicyTest, ChiefKeepsAReadyModelThenRestoresThenInitializes) {
  EXPECT_EQ(ChooseChiefPreparation(true, true), ChiefPreparation::kKeepModel);
  EXPECT_EQ(ChooseChiefPreparation(true, false), ChiefPreparation::kKeepModel);
  EXPECT_EQ(ChooseChiefPreparation(false, true), ChiefPreparation::kRestoreCheckpoint);
  EXPECT_EQ(ChooseChiefPreparation(false, false), ChiefPreparation::kInitialize);
  // A checkpoint with input positions is restored over a ready model: they must agree.
  EXPECT_EQ(ChooseChiefPreparation(true, true, true), ChiefPreparation::kRestoreCheckpoint);
  EXPECT_EQ(ChooseChiefPreparation(true, false, true), ChiefPreparation::kKeepModel);
  EXPECT_EQ(ChooseChiefPreparation(false, false, true), ChiefPreparation::kInitialize);
}

TEST(SessionPolicyTest, WaitReturnsOnceTheProbeReportsNothingMissing) {
  int polls = 0;
  Status s = WaitForModelReady(
      [&]() -> StatusOr<std::vector<std::string>> {
        if (++polls < 3) return std::vector<std::string>{"w"};
        return std::vector<std::string>{};
      },
      absl::Now(), absl::Now() + absl::Minutes(1), {}, absl::Milliseconds(1));
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(polls, 3);
}

TEST(SessionPolicyTest, WaitStopsAtTheFirstErrorThatIsNotRecoverable) {
  int polls = 0;
  Status s = WaitForModelReady(
      [&]() -> StatusOr<std::vector<std::string>> {
        ++polls;
        return errors::InvalidArgument("no such op");
      },
      absl::Now(), absl::Now() + absl::Minutes(1), {}, absl::Milliseconds(1));
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_EQ(polls, 1);
}

TEST(SessionPolicyTest, WaitRemakesTheSessionAfterARecoverableError) {
  int polls = 0, remakes = 0;
  Status s = WaitForModelReady(
      [&]() -> StatusOr<std::vector<std::string>> {
        if (++polls == 1) return errors::Unavailable("ps restarting");
        return std::vector<std::string>{};
      },
      absl::Now(), absl::Now() + absl::Minutes(1), [&] { ++remakes; }, absl::Milliseconds(1));
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(remakes, 1);
}

TEST(SessionPolicyTest, WaitGivesUpAtTheDeadlineNamingWhatIsMissing) {
  const absl::Time start = absl::Now();
  Status s = WaitForModelReady(
      []() -> StatusOr<std::vector<std::string>> {
        return std::vector<std::string>{"w", "b"};
      },
      start - absl::Seconds(3), start + absl::Milliseconds(20), {}, absl::Milliseconds(1));
  EXPECT_TRUE(IsDeadlineExceeded(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("Session was not ready after waiting 3 secs"));
  EXPECT_THAT(s.message(), HasSubstr("variables not initialized: w, b"));
}

TEST(SessionPolicyTest, RetryRepeatsRecoverableFailuresUntilSuccess) {
  int attempts = 0;
  Status s = RetryWhileRecoverable(
      [&] { return ++attempts < 3 ? errors::Aborted("restarted") : OkStatus(); },
      absl::Now() + absl::Minutes(1), absl::Minutes(1));
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(attempts, 3);
}

TEST(SessionPolicyTest, RetryReturnsOtherErrorsAtOnce) {
  int attempts = 0;
  Status s = RetryWhileRecoverable(
      [&] {
        ++attempts;
        return errors::NotFound("checkpoint");
      },
      absl::Now() + absl::Minutes(1), absl::Minutes(1));
  EXPECT_TRUE(IsNotFound(s)) << s;
  EXPECT_EQ(attempts, 1);
}

TEST(SessionPolicyTest, RetryGivesUpAtTheDeadlineWithTheLastError) {
  int attempts = 0;
  Status s = RetryWhileRecoverable(
      [&] {
        ++attempts;
        return errors::Unavailable("ps gone");
      },
      absl::Now() + absl::Milliseconds(250), absl::Milliseconds(250));
  EXPECT_TRUE(IsUnavailable(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("could not recover the training session within 250ms"));
  EXPECT_THAT(s.message(), HasSubstr("ps gone"));
  EXPECT_GE(attempts, 2);
}

// TF's wait_for_checkpoint: NotFound means "not yet", anything else is an answer.
TEST(SessionPolicyTest, WaitForCheckpointAsksAgainUntilOneAppears) {
  int asked = 0;
  StatusOr<std::string> path = WaitForCheckpoint(
      [&]() -> StatusOr<std::string> {
        if (++asked < 3) return errors::NotFound("no checkpoint yet");
        return std::string("/ckpt/model.ckpt-3");
      },
      absl::InfiniteFuture(), absl::Milliseconds(1));
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, "/ckpt/model.ckpt-3");
  EXPECT_EQ(asked, 3);
}

TEST(SessionPolicyTest, WaitForCheckpointGivesUpAtTheDeadlineOrAtAnotherError) {
  int asked = 0;
  StatusOr<std::string> none = WaitForCheckpoint(
      [&]() -> StatusOr<std::string> {
        ++asked;
        return errors::NotFound("no checkpoint yet");
      },
      absl::Now() + absl::Milliseconds(50), absl::Milliseconds(5));
  EXPECT_TRUE(IsNotFound(none.status()));
  EXPECT_GE(asked, 2);
  asked = 0;
  StatusOr<std::string> bad = WaitForCheckpoint(
      [&]() -> StatusOr<std::string> {
        ++asked;
        return errors::DataLoss("unreadable state file");
      },
      absl::InfiniteFuture(), absl::Milliseconds(1));
  EXPECT_TRUE(IsDataLoss(bad.status()));
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace tw::train
