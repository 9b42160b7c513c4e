#include "src/distributed/local_master.h"

#include <map>

#include "absl/synchronization/notification.h"

namespace tw {
namespace {

absl::Mutex registry_mu(absl::kConstInit);
std::map<std::string, std::shared_ptr<LocalMaster>>& Registry()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mu) {
  static auto* registry = new std::map<std::string, std::shared_ptr<LocalMaster>>();
  return *registry;
}

}  // namespace

Status LocalMaster::RunStep(const RunStepArgs& args, RunStepResult* result,
                            CancellationManager* cm) {
  Master* master = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (master_ == nullptr) return errors::Unavailable("the server of this session has stopped");
    master = master_;
    ++calls_;
  }
  absl::Notification finished;
  Status status;
  master->RunStepAsync(&args, result, cm, [&](const Status& s) {
    status = s;
    finished.Notify();
  });
  finished.WaitForNotification();
  absl::MutexLock lock(&mu_);
  --calls_;
  return status;
}

void LocalMaster::Detach() {
  absl::MutexLock lock(&mu_);
  master_ = nullptr;
  mu_.Await(absl::Condition(
      +[](int* calls) { return *calls == 0; }, &calls_));
}

void LocalMaster::Register(const std::vector<std::string>& addresses,
                           std::shared_ptr<LocalMaster> master) {
  absl::MutexLock lock(&registry_mu);
  for (const std::string& a : addresses) Registry()[a] = master;
}

void LocalMaster::Unregister(const std::vector<std::string>& addresses) {
  absl::MutexLock lock(&registry_mu);
  for (const std::string& a : addresses) Registry().erase(a);
}

std::shared_ptr<LocalMaster> LocalMaster::Find(const std::string& address) {
  absl::MutexLock lock(&registry_mu);
  auto it = Registry().find(address);
  return it == Registry().end() ? nullptr : it->second;
}

}  // namespace tw
