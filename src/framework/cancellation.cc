#include "src/framework/cancellation.h"

namespace tw {

void CancellationManager::StartCancel() {
  std::map<Token, Callback> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_) return;
    cancelled_ = true;
    cancelled_flag_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  for (auto& [token, callback] : callbacks) callback();
}

CancellationManager::Token CancellationManager::NewToken() {
  absl::MutexLock lock(&mu_);
  return next_token_++;
}

bool CancellationManager::RegisterCallback(Token token, Callback callback) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  callbacks_.emplace(token, std::move(callback));
  return true;
}

bool CancellationManager::DeregisterCallback(Token token) {
  absl::MutexLock lock(&mu_);
  return callbacks_.erase(token) > 0;
}

}  // namespace tw
