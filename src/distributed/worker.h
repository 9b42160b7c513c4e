// Worker: the worker service of one task, transport-agnostic. It runs the graph partitions
// masters register with it, keeps a rendezvous per step, and serves RecvTensor to the tasks
// that receive tensors its steps produce.
#ifndef TENSORWEAVE_SRC_DISTRIBUTED_WORKER_H_
#define TENSORWEAVE_SRC_DISTRIBUTED_WORKER_H_

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "src/distributed/worker_interface.h"
#include "src/framework/device_base.h"
#include "src/framework/rendezvous.h"
#include "src/runtime/executor.h"

namespace tw {

class StepRendezvous;
class IsolatedDevice;

// Thread-safe. `device` and `peers` must outlive the worker.
class Worker final : public WorkerInterface {
 public:
  Worker(DeviceBase* device, WorkerCache* peers);
  ~Worker() override;

  void GetStatusAsync(const proto::GetStatusRequest* request, proto::GetStatusResponse* response,
                      StatusCallback done) override;
  // Aborted when the graph's _Send/_Recv nodes expect another incarnation of this task
  // (the master planned for a task that has since restarted).
  void RegisterGraphAsync(const proto::RegisterGraphRequest* request,
                          proto::RegisterGraphResponse* response, StatusCallback done) override;
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest* request,
                            proto::DeregisterGraphResponse* response, StatusCallback done) override;
  // Aborted for a graph handle this process never issued (the task restarted).
  // A step of a partition that sends no tensors to other tasks ends with its RunGraph;
  // otherwise it ends with CleanupGraph (peers may still pull its tensors).
  void RunGraphAsync(const RunGraphArgs* request, RunGraphResult* response, CancellationManager* cm,
                     StatusCallback done) override;
  // Aborted when the key names another incarnation of this task's device.
  void RecvTensorAsync(const proto::RecvTensorRequest* request, RecvTensorResult* response,
                       CancellationManager* cm, StatusCallback done) override;
  // Ends a step on this worker: pending receives fail, its tensors are dropped.
  void CleanupGraphAsync(const proto::CleanupGraphRequest* request,
                         proto::CleanupGraphResponse* response, StatusCallback done) override;
  void CleanupAllAsync(const proto::CleanupAllRequest* request, proto::CleanupAllResponse* response,
                       StatusCallback done) override;

 private:
  struct GraphItem {
    std::string session_handle;
    // For a session that asked for isolation: the device view holding its resources
    // (declared before the executor, which uses it, so it is destroyed after it).
    std::shared_ptr<IsolatedDevice> isolated;
    std::unique_ptr<Executor> executor;
    // Whether a _Send of the partition feeds another task (which pulls with RecvTensor).
    bool sends_to_peers = false;
  };
  std::shared_ptr<StepRendezvous> FindOrCreateStep(int64_t step_id);
  // Forgets the step if `step` is still its rendezvous.
  void EraseStep(int64_t step_id, const StepRendezvous* step);

  DeviceBase* const device_;
  WorkerCache* const peers_;
  absl::Mutex mu_;
  int64_t next_graph_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, std::shared_ptr<GraphItem>> graphs_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::shared_ptr<StepRendezvous>> steps_ ABSL_GUARDED_BY(mu_);
  // Isolated sessions' devices, by session handle, while the session has graphs here.
  std::map<std::string, std::shared_ptr<IsolatedDevice>> isolated_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_DISTRIBUTED_WORKER_H_
