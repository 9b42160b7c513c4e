#include "tensorweave/train/step_timer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

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

// The first trigger starts the clock; later triggers give the global steps per second
// over the steps between them and the local steps this hook saw.
TEST(StepRateCounterTest, RatesAtTriggeredStepsOnlyAfterTheFirst) {
  StepRateCounter counter(SecondOrStepTimer::EverySteps(10));
  EXPECT_FALSE(counter.Record(1).has_value());  // starts the clock
  for (int64_t step = 2; step < 11; ++step) EXPECT_FALSE(counter.Record(step).has_value());
  absl::SleepFor(absl::Milliseconds(20));
  // Other workers advanced the global step: 30 global steps in 10 local ones.
  std::optional<StepRateCounter::Rate> rate = counter.Record(31);
  ASSERT_TRUE(rate.has_value());
  EXPECT_EQ(rate->local_steps, 10);
  EXPECT_GE(rate->secs, 0.02);
  EXPECT_NEAR(rate->global_steps_per_sec, 30 / rate->secs, 1e-9);
  EXPECT_FALSE(counter.Record(32).has_value());
}

// TF's SummarySaverHook: the first step fetches and writes with a START, then the summary is
// fetched for the step expected next when the timer would trigger for it.
TEST(SummaryScheduleTest, FirstStepThenEveryNStepsWithTheExactStep) {
  SummarySchedule schedule(SecondOrStepTimer::EverySteps(5));
  ASSERT_TRUE(schedule.RequestSummary());
  EXPECT_TRUE(schedule.NeedsExactStep());
  SummarySchedule::Actions first = schedule.Record(1);
  EXPECT_TRUE(first.session_start);
  EXPECT_TRUE(first.summary);
  std::vector<int64_t> written;
  for (int64_t step = 2; step <= 12; ++step) {
    const bool requested = schedule.RequestSummary();
    EXPECT_EQ(schedule.NeedsExactStep(), requested);
    SummarySchedule::Actions actions = schedule.Record(step);
    EXPECT_FALSE(actions.session_start);
    EXPECT_EQ(actions.summary, requested);
    if (actions.summary) written.push_back(step);
  }
  EXPECT_EQ(written, (std::vector<int64_t>{6, 11}));
}

}  // namespace
}  // namespace tw::train
