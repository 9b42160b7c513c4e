#include "testing/in_process_cluster.h"

#include "tensorweave/device_name.h"

namespace tw::testing {
namespace {

// A task that is down: every call fails at once, like a refused connection.
class UnreachableWorker final : public WorkerInterface {
 public:
  void GetStatusAsync(const proto::GetStatusRequest*, proto::GetStatusResponse*,
                      StatusCallback done) override {
    done(Down());
  }
  void RegisterGraphAsync(const proto::RegisterGraphRequest*, proto::RegisterGraphResponse*,
                          StatusCallback done) override {
    done(Down());
  }
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest*, proto::DeregisterGraphResponse*,
                            StatusCallback done) override {
    done(Down());
  }
  void RunGraphAsync(const RunGraphArgs*, RunGraphResult*, CancellationManager*,
                     StatusCallback done) override {
    done(Down());
  }
  void RecvTensorAsync(const RecvTensorArgs*, RecvTensorResult*, CancellationManager*,
                       StatusCallback done) override {
    done(Down());
  }
  void CleanupGraphAsync(const proto::CleanupGraphRequest*, proto::CleanupGraphResponse*,
                         StatusCallback done) override {
    done(Down());
  }
  void CleanupAllAsync(const proto::CleanupAllRequest*, proto::CleanupAllResponse*,
                       StatusCallback done) override {
    done(Down());
  }

 private:
  static Status Down() { return errors::Unavailable("the task is down"); }
};

// A task that hangs: it answers what needs no work, but a RunGraph ends only when its call
// is cancelled, and CleanupGraph does not reach the partition.
class HungWorker final : public WorkerInterface {
 public:
  void GetStatusAsync(const proto::GetStatusRequest*, proto::GetStatusResponse*,
                      StatusCallback done) override {
    done(OkStatus());
  }
  void RegisterGraphAsync(const proto::RegisterGraphRequest*, proto::RegisterGraphResponse*,
                          StatusCallback done) override {
    done(errors::Unavailable("the task hangs"));
  }
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest*, proto::DeregisterGraphResponse*,
                            StatusCallback done) override {
    done(OkStatus());
  }
  void RunGraphAsync(const RunGraphArgs*, RunGraphResult*, CancellationManager* cm,
                     StatusCallback done) override {
    WaitForCancellation(cm, std::move(done));
  }
  void RecvTensorAsync(const RecvTensorArgs*, RecvTensorResult*, CancellationManager* cm,
                       StatusCallback done) override {
    WaitForCancellation(cm, std::move(done));
  }
  void CleanupGraphAsync(const proto::CleanupGraphRequest*, proto::CleanupGraphResponse*,
                         StatusCallback done) override {
    done(OkStatus());
  }
  void CleanupAllAsync(const proto::CleanupAllRequest*, proto::CleanupAllResponse*,
                       StatusCallback done) override {
    done(OkStatus());
  }

 private:
  // Precondition: `cm` is not null (a call without one would never end).
  static void WaitForCancellation(CancellationManager* cm, StatusCallback done) {
    auto shared = std::make_shared<StatusCallback>(std::move(done));
    if (!cm->RegisterCallback(
            cm->NewToken(), [shared] { (*shared)(errors::Cancelled("the call was cancelled")); })) {
      (*shared)(errors::Cancelled("the call was cancelled"));
    }
  }
};

}  // namespace

std::unique_ptr<WorkerInterface> NewUnreachableWorker() {
  return std::make_unique<UnreachableWorker>();
}

StatusOr<std::unique_ptr<InProcessCluster>> InProcessCluster::Create(
    const std::vector<std::string>& tasks, int threads) {
  std::unique_ptr<InProcessCluster> cluster(new InProcessCluster());
  cluster->tasks_ = tasks;
  cluster->unreachable_ = std::make_unique<UnreachableWorker>();
  cluster->hung_ = std::make_unique<HungWorker>();
  for (const std::string& task : tasks) {
    TW_ASSIGN_OR_RETURN(DeviceName name, DeviceName::Parse(task + "/device:CPU:0"));
    TW_ASSIGN_OR_RETURN(cluster->devices_[task], CpuDevice::Create(name, {.num_threads = threads}));
    cluster->workers_[task] =
        std::make_unique<Worker>(cluster->devices_[task].get(), cluster.get());
  }
  return cluster;
}

InProcessCluster::~InProcessCluster() {
  // Workers first: they may still call each other (through this cache) while they stop.
  workers_.clear();
  devices_.clear();
}

StatusOr<WorkerInterface*> InProcessCluster::GetWorker(const std::string& task) {
  auto it = workers_.find(task);
  if (it == workers_.end()) return errors::NotFound("no task ", task, " in the cluster");
  absl::MutexLock lock(&mu_);
  ++lookups_[task];
  switch (states_[task]) {
    case TaskState::kDown:
      return unreachable_.get();
    case TaskState::kHung:
      return hung_.get();
    case TaskState::kUp:
      break;
  }
  return it->second.get();
}

void InProcessCluster::SetState(const std::string& task, TaskState state) {
  absl::MutexLock lock(&mu_);
  states_[task] = state;
}

int InProcessCluster::lookups(const std::string& task) {
  absl::MutexLock lock(&mu_);
  return lookups_[task];
}

std::unique_ptr<Master> InProcessCluster::NewMaster(const std::string& task,
                                                    MasterOptions options) {
  options.local_device = devices_.at(task)->name();
  options.tasks = tasks_;
  return std::make_unique<Master>(std::move(options), this);
}

}  // namespace tw::testing
