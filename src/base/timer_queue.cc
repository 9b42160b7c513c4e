#include "src/base/timer_queue.h"

namespace tw {

TimerQueue::TimerQueue() : thread_([this] { Loop(); }) {}

TimerQueue::~TimerQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

TimerQueue* TimerQueue::Default() {
  static TimerQueue* queue = new TimerQueue();
  return queue;
}

TimerQueue::Id TimerQueue::Schedule(absl::Time when, std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  const Id id = next_id_++;
  timers_.emplace(std::make_pair(when, id), std::move(fn));
  return id;
}

bool TimerQueue::Cancel(Id id) {
  absl::MutexLock lock(&mu_);
  for (auto it = timers_.begin(); it != timers_.end(); ++it) {
    if (it->first.second == id) {
      timers_.erase(it);
      return true;
    }
  }
  return false;
}

void TimerQueue::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (timers_.empty()) {
      const auto ready = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return stopping_ || !timers_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      continue;
    }
    auto first = timers_.begin();
    const absl::Time when = first->first.first;
    if (absl::Now() < when) {
      // Wakes early when a sooner timer arrives or the queue stops.
      const size_t count = timers_.size();
      const auto changed = [this, count, when]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return stopping_ || timers_.size() != count || timers_.begin()->first.first != when;
      };
      mu_.AwaitWithDeadline(absl::Condition(&changed), when);
      continue;
    }
    std::function<void()> fn = std::move(first->second);
    timers_.erase(first);
    mu_.Unlock();
    fn();
    mu_.Lock();
  }
}

}  // namespace tw
