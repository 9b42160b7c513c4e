// CancellationManager: lets a step be cancelled while kernels wait (queue dequeue, Recv).
#ifndef TENSORWEAVE_SRC_FRAMEWORK_CANCELLATION_H_
#define TENSORWEAVE_SRC_FRAMEWORK_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>

#include "absl/synchronization/mutex.h"

namespace tw {

// Thread-safe. Callbacks run once, outside the lock, on the thread that calls
// StartCancel(); a callback registered after cancellation is refused.
class CancellationManager {
 public:
  using Token = int64_t;
  using Callback = std::function<void()>;

  CancellationManager() = default;
  CancellationManager(const CancellationManager&) = delete;
  CancellationManager& operator=(const CancellationManager&) = delete;

  // Runs every registered callback (once) and refuses new registrations.
  void StartCancel();
  // Lock-free, so the executor can check it before every node.
  bool IsCancelled() const { return cancelled_flag_.load(std::memory_order_acquire); }

  Token NewToken();
  // False when already cancelled (then `callback` is not kept and the caller must act on
  // the cancellation itself).
  bool RegisterCallback(Token token, Callback callback);
  // True when the callback was removed before running; false when it ran, is running, or
  // was never registered. After false, the callback may still be running on another thread.
  bool DeregisterCallback(Token token);

 private:
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> cancelled_flag_{false};
  Token next_token_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<Token, Callback> callbacks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_FRAMEWORK_CANCELLATION_H_
