// Test helper: the tasks of a cluster in this process, each a CPU device and its Worker,
// reachable through one WorkerCache, with Masters on any of them. No network: what the
// master and workers say to each other goes by direct call, so their logic is tested
// without gRPC (tests/integration/ covers the transport).
#ifndef TENSORWEAVE_TESTING_IN_PROCESS_CLUSTER_H_
#define TENSORWEAVE_TESTING_IN_PROCESS_CLUSTER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/distributed/master.h"
#include "src/distributed/worker.h"
#include "src/runtime/cpu_device.h"

namespace tw::testing {

// A worker of a task that is down: every call fails at once with Unavailable, as a task
// whose process is gone answers over the network. Thread-safe.
std::unique_ptr<WorkerInterface> NewUnreachableWorker();

// Thread-safe. Masters made by NewMaster must be destroyed before the cluster.
class InProcessCluster final : public WorkerCache {
 public:
  // `tasks`: "/job:ps/replica:0/task:0", ...; each gets a device of `threads` threads.
  static StatusOr<std::unique_ptr<InProcessCluster>> Create(const std::vector<std::string>& tasks,
                                                            int threads = 2);
  ~InProcessCluster() override;

  // The worker of `task`; while the task is down, one that answers every call Unavailable
  // (as a task whose process is gone answers over the network); while it hangs, one whose
  // RunGraph never ends unless its call is cancelled and which ignores CleanupGraph (as a
  // task that is stuck, or that a partition of the network hides).
  StatusOr<WorkerInterface*> GetWorker(const std::string& task) override;
  enum class TaskState { kUp, kDown, kHung };
  // A task stays in its state until set again; its worker keeps its state meanwhile.
  void SetState(const std::string& task, TaskState state);
  void SetDown(const std::string& task, bool down) {
    SetState(task, down ? TaskState::kDown : TaskState::kUp);
  }
  // How many times a task's worker was looked up, for tests of call counts.
  int lookups(const std::string& task);

  Worker* worker(const std::string& task) { return workers_.at(task).get(); }
  CpuDevice* device(const std::string& task) { return devices_.at(task).get(); }
  // A master on `task` whose session may use every task of the cluster. `options` may set
  // the waits; its task list and local device are filled in.
  std::unique_ptr<Master> NewMaster(const std::string& task, MasterOptions options = {});

 private:
  InProcessCluster() = default;

  std::vector<std::string> tasks_;
  std::map<std::string, std::unique_ptr<CpuDevice>> devices_;
  std::map<std::string, std::unique_ptr<Worker>> workers_;
  std::unique_ptr<WorkerInterface> unreachable_, hung_;
  absl::Mutex mu_;
  std::map<std::string, TaskState> states_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> lookups_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw::testing

#endif  // TENSORWEAVE_TESTING_IN_PROCESS_CLUSTER_H_
