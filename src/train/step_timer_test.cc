#include "tensorweave/train/step_timer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tw::train {
namespace {

using ::testing::HasSubstr;

TEST(SecondOrStepTimerTest, NeedsExactlyOneCadenceWithTensorFlowsMessages) {
  auto neither = SecondOrStepTimer::Create(std::nullopt, std::nullopt);
  EXPECT_TRUE(IsInvalidArgument(neither.status()));
  EXPECT_THAT(neither.status().message(),
              HasSubstr("Either every_secs or every_steps should be provided."));
  auto both = SecondOrStepTimer::Create(absl::Seconds(1), 10);
  EXPECT_THAT(both.status().message(),
              HasSubstr("Can not provide both every_secs and every_steps."));
  EXPECT_TRUE(SecondOrStepTimer::Create(std::nullopt, 10).ok());
}

TEST(SecondOrStepTimerTest, TriggersFirstThenEveryNStepsNeverTwiceForAStep) {
  SecondOrStepTimer timer = SecondOrStepTimer::EverySteps(3);
  EXPECT_TRUE(timer.ShouldTriggerForStep(5));
  EXPECT_FALSE(timer.UpdateLastTriggeredStep(5).has_value());
  EXPECT_EQ(timer.last_triggered_step(), 5);
  EXPECT_FALSE(timer.ShouldTriggerForStep(5));
  EXPECT_FALSE(timer.ShouldTriggerForStep(7));
  EXPECT_TRUE(timer.ShouldTriggerForStep(8));
  EXPECT_TRUE(timer.ShouldTriggerForStep(20));
  auto elapsed = timer.UpdateLastTriggeredStep(9);
  ASSERT_TRUE(elapsed.has_value());
  EXPECT_EQ(elapsed->steps, 4);
  EXPECT_GE(elapsed->time, absl::ZeroDuration());
  timer.Reset();
  EXPECT_FALSE(timer.last_triggered_step().has_value());
  EXPECT_TRUE(timer.ShouldTriggerForStep(9));
}

TEST(SecondOrStepTimerTest, BySecondsTriggersOnceTheTimeHasPassed) {
  SecondOrStepTimer hour = SecondOrStepTimer::EverySecs(absl::Hours(1));
  hour.UpdateLastTriggeredStep(1);
  EXPECT_FALSE(hour.ShouldTriggerForStep(1000000));
  SecondOrStepTimer none = SecondOrStepTimer::EverySecs(absl::ZeroDuration());
  none.UpdateLastTriggeredStep(1);
  EXPECT_FALSE(none.ShouldTriggerForStep(1));
  EXPECT_TRUE(none.ShouldTriggerForStep(2));
}

}  // namespace
}  // namespace tw::train
