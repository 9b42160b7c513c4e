#include "src/framework/rendezvous.h"

#include <cinttypes>
#include <cstdio>

#include "src/base/strings.h"

namespace tw {

std::string RendezvousKey(std::string_view src_device, uint64_t src_incarnation,
                          std::string_view dst_device, std::string_view tensor_name) {
  char incarnation[17];
  std::snprintf(incarnation, sizeof(incarnation), "%016" PRIx64, src_incarnation);
  return internal::StrCatAny(src_device, ";", incarnation, ";", dst_device, ";", tensor_name,
                             ";0:0");
}

StatusOr<ParsedRendezvousKey> ParseRendezvousKey(std::string_view key) {
  const std::vector<std::string_view> parts = Split(key, ';');
  if (parts.size() != 5 || parts[1].size() != 16) {
    return errors::InvalidArgument("invalid rendezvous key \"", key, "\"");
  }
  ParsedRendezvousKey p;
  p.src_device = std::string(parts[0]);
  p.dst_device = std::string(parts[2]);
  p.tensor_name = std::string(parts[3]);
  for (char c : parts[1]) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0)
      return errors::InvalidArgument("invalid incarnation in rendezvous key \"", key, "\"");
    p.src_incarnation = p.src_incarnation * 16 + static_cast<uint64_t>(digit);
  }
  return p;
}

LocalRendezvous::~LocalRendezvous() { StartAbort(errors::Aborted("rendezvous destroyed")); }

Status LocalRendezvous::Send(const std::string& key, const Tensor& value) {
  State& s = *state_;
  Waiter waiter;
  {
    absl::MutexLock lock(&s.mu);
    TW_RETURN_IF_ERROR(s.aborted);
    auto it = s.waiters.find(key);
    if (it == s.waiters.end()) {
      if (!s.values.emplace(key, value).second) {
        return errors::InvalidArgument("tensor ", key, " was sent twice in one step");
      }
      return OkStatus();
    }
    waiter = std::move(it->second);
    s.waiters.erase(it);
  }
  if (waiter.cm != nullptr) waiter.cm->DeregisterCallback(waiter.token);
  waiter.done(OkStatus(), value);
  return OkStatus();
}

void LocalRendezvous::RecvAsync(const std::string& key, CancellationManager* cm,
                                RecvCallback done) {
  State& s = *state_;
  Status immediate_status;
  Tensor immediate_value;
  {
    absl::MutexLock lock(&s.mu);
    if (!s.aborted.ok()) {
      immediate_status = s.aborted;
    } else if (auto it = s.values.find(key); it != s.values.end()) {
      immediate_value = std::move(it->second);
      s.values.erase(it);
    } else if (s.waiters.contains(key)) {
      // A value is sent once per step, so a second receiver could never be answered; and
      // the first waiter's `done` must still be called exactly once.
      immediate_status = errors::InvalidArgument("Recv of ", key, " is already waiting");
    } else {
      // The cancellation callback is registered together with the waiter, under the lock:
      // once the lock is released, a Send may complete the waiter, and its callback may
      // free `cm` and `key` (a server call's state), so neither may be touched after that.
      CancellationManager::Token token = 0;
      bool registered = true;
      if (cm != nullptr) {
        token = cm->NewToken();
        registered =
            cm->RegisterCallback(token, [state = state_, key] { CancelWaiter(*state, key); });
      }
      if (registered) {
        s.waiters[key] = Waiter{std::move(done), cm, token};
        return;
      }
      immediate_status = errors::Cancelled("Recv of ", key, " was cancelled");
    }
  }
  done(immediate_status, immediate_value);
}

StatusOr<Tensor> LocalRendezvous::TryRecv(const std::string& key) {
  State& s = *state_;
  absl::MutexLock lock(&s.mu);
  TW_RETURN_IF_ERROR(s.aborted);
  auto it = s.values.find(key);
  if (it == s.values.end()) return errors::NotFound("no tensor was sent for ", key);
  Tensor value = std::move(it->second);
  s.values.erase(it);
  return value;
}

void LocalRendezvous::CancelWaiter(State& s, const std::string& key) {
  Waiter waiter;
  {
    absl::MutexLock lock(&s.mu);
    auto it = s.waiters.find(key);
    if (it == s.waiters.end()) return;
    waiter = std::move(it->second);
    s.waiters.erase(it);
  }
  waiter.done(errors::Cancelled("Recv of ", key, " was cancelled"), Tensor());
}

void LocalRendezvous::StartAbort(const Status& status) {
  State& s = *state_;
  std::map<std::string, Waiter> waiters;
  {
    absl::MutexLock lock(&s.mu);
    if (s.aborted.ok()) s.aborted = status;
    waiters.swap(s.waiters);
    s.values.clear();
  }
  for (auto& [key, w] : waiters) {
    if (w.cm != nullptr) w.cm->DeregisterCallback(w.token);
    w.done(status, Tensor());
  }
}

}  // namespace tw
