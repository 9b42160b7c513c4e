#include "src/base/timer_queue.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

TEST(TimerQueueTest, RunsCallbacksInTimeOrder) {
  TimerQueue queue;
  absl::Mutex mu;
  std::vector<int> order;
  absl::Notification last;
  const absl::Time now = absl::Now();
  queue.Schedule(now + absl::Milliseconds(60), [&] {
    absl::MutexLock lock(&mu);
    order.push_back(3);
    last.Notify();
  });
  queue.Schedule(now + absl::Milliseconds(20), [&] {
    absl::MutexLock lock(&mu);
    order.push_back(2);
  });
  queue.Schedule(now - absl::Seconds(1), [&] {
    absl::MutexLock lock(&mu);
    order.push_back(1);
  });
  ASSERT_TRUE(last.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_GE(absl::Now(), now + absl::Milliseconds(60));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(TimerQueueTest, CancelledCallbackNeverRuns) {
  TimerQueue queue;
  std::atomic<bool> ran{false};
  const TimerQueue::Id id =
      queue.Schedule(absl::Now() + absl::Milliseconds(50), [&] { ran = true; });
  EXPECT_TRUE(queue.Cancel(id));
  EXPECT_FALSE(queue.Cancel(id));
  absl::Notification later;
  queue.Schedule(absl::Now() + absl::Milliseconds(100), [&] { later.Notify(); });
  ASSERT_TRUE(later.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(ran);
}

TEST(TimerQueueTest, CancelAfterRunReportsFalse) {
  TimerQueue queue;
  absl::Notification ran;
  const TimerQueue::Id id = queue.Schedule(absl::Now(), [&] { ran.Notify(); });
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(queue.Cancel(id));
}

TEST(TimerQueueTest, DestructorDropsPendingCallbacks) {
  std::atomic<bool> ran{false};
  {
    TimerQueue queue;
    queue.Schedule(absl::Now() + absl::Hours(1), [&] { ran = true; });
  }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace tw
