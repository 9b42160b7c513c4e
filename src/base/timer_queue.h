// TimerQueue: runs callbacks at given times on one background thread, so code that waits
// asynchronously (a step with a timeout) holds no thread of its own while it waits.
#ifndef TENSORWEAVE_SRC_BASE_TIMER_QUEUE_H_
#define TENSORWEAVE_SRC_BASE_TIMER_QUEUE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tw {

// Thread-safe. Callbacks run on the queue's thread, one at a time, and must be short (hand
// real work to another thread). The destructor drops callbacks that have not run.
class TimerQueue {
 public:
  using Id = uint64_t;
  TimerQueue();
  ~TimerQueue();
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // Runs `fn` at `when` (at once if that has passed).
  Id Schedule(absl::Time when, std::function<void()> fn);
  // True when the callback was removed before it started; false when it has run, is
  // running, or never existed.
  bool Cancel(Id id);

  // A queue shared by the whole process, created on first use and never destroyed.
  static TimerQueue* Default();

 private:
  void Loop();

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Id next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Ordered by (time, id): the front is the next to run.
  std::map<std::pair<absl::Time, Id>, std::function<void()>> timers_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_BASE_TIMER_QUEUE_H_
