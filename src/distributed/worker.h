// Worker: the worker service of one task, transport-agnostic. It runs the graph partitions
// masters register with it, keeps a rendezvous per step, and serves RecvTensor to the tasks
// that receive tensors its steps produce.
#ifndef TENSORWEAVE_SRC_DISTRIBUTED_WORKER_H_
#define TENSORWEAVE_SRC_DISTRIBUTED_WORKER_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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
  // A step ends on this worker when its partition has run and peers have pulled every
  // tensor it sends them, or with CleanupGraph (a failed or cancelled step).
  // The partition is cancelled by `cm`, by a CleanupGraph of its step, and by the request's
  // timeout_ms (then DeadlineExceeded); a step already ended by CleanupGraph is refused
  // (Cancelled) instead of run.
  void RunGraphAsync(const RunGraphArgs* request, RunGraphResult* response, CancellationManager* cm,
                     StatusCallback done) override;
  // Aborted when the key names another incarnation of this task's device; InvalidArgument
  // for a pushed tensor that is not for this task's device or was sent already.
  void RecvTensorAsync(const RecvTensorArgs* request, RecvTensorResult* response,
                       CancellationManager* cm, StatusCallback done) override;
  // Ends a step on this worker: its running partitions are cancelled, pending receives
  // fail, its tensors are dropped, and a RunGraph of the step arriving later is refused.
  // This is how a master cancels a step: unlike cancelling the RunGraph call, which ends the
  // call at the caller at once while the task may still be running the partition, the
  // RunGraph reply then comes after the partition has stopped, so the caller's next step
  // cannot overtake the cancelled one (a dequeue still waiting would take its element).
  void CleanupGraphAsync(const proto::CleanupGraphRequest* request,
                         proto::CleanupGraphResponse* response, StatusCallback done) override;
  void CleanupAllAsync(const proto::CleanupAllRequest* request, proto::CleanupAllResponse* response,
                       StatusCallback done) override;

  // How many steps this worker holds tensors or waits for (tests and diagnostics).
  size_t ActiveSteps();
  // How many graph partitions are registered here (diagnostics, metrics).
  size_t NumGraphs();
  // Cancels every partition running here; they end with Cancelled. For a server that
  // stops: a partition waiting on a queue would otherwise keep its RunGraph call, and so
  // the server's shutdown, waiting until gRPC's grace period ends.
  void CancelRunningPartitions();

 private:
  struct GraphItem {
    std::string session_handle;
    // For a session that asked for isolation: the device view holding its resources
    // (declared before the executor, which uses it, so it is destroyed after it).
    std::shared_ptr<IsolatedDevice> isolated;
    std::unique_ptr<Executor> executor;
    // How many of the partition's _Send nodes feed other tasks (which pull with RecvTensor).
    int peer_sends = 0;
    // One per source device of _Recv nodes marked prefetch and not pushed: each step pulls
    // `keys` with one RecvTensor call to `task`, after its _Send nodes marked push to that
    // device have sent `push`, which the call carries.
    struct PrefetchBatch {
      std::string task;
      std::vector<std::string> keys, push;
    };
    std::vector<PrefetchBatch> prefetch;
  };
  struct RunState;
  // The end of a partition's run: collects its fetches, forgets the step when nothing more
  // is owed to peers, calls `done`.
  void FinishRun(const std::shared_ptr<RunState>& state,
                 const std::shared_ptr<StepRendezvous>& step, const RunGraphArgs* request,
                 RunGraphResult* response, const Status& status, StatusCallback done);
  // How long a CleanupGraph'd step is remembered, to refuse a RunGraph that arrives after it.
  static constexpr absl::Duration kEndedStepMemory = absl::Minutes(5);

  // nullptr when CleanupGraph ended the step.
  std::shared_ptr<StepRendezvous> FindOrCreateStep(int64_t step_id);
  std::shared_ptr<StepRendezvous> FindOrCreateStepLocked(int64_t step_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the step if `step` is still its rendezvous, and then fails the receives still
  // waiting on it (Cancelled).
  void EraseStep(int64_t step_id, StepRendezvous* step);
  // A RecvTensor call for `step_id` begins: its rendezvous (nullptr when CleanupGraph ended
  // the step), counted in serving_.
  std::shared_ptr<StepRendezvous> BeginServing(int64_t step_id);
  // A RecvTensor call begun with BeginServing has ended. A call that failed (the peer gave
  // up, the step aborted) on a step that nothing else uses here (no other call, no
  // partition running or owing sends) forgets the step: otherwise every RecvTensor for a
  // step that never runs here would leave its rendezvous behind for good.
  void EndServing(int64_t step_id, StepRendezvous* step, bool failed);
  // A RunGraphAsync call whose partition was cancelled by `cm` has called its `done`.
  void RunEnded(int64_t step_id, const CancellationManager* cm);
  // Whether CleanupGraph ended `step_id` (forgetting what is older than kEndedStepMemory).
  bool StepEnded(int64_t step_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  DeviceBase* const device_;
  WorkerCache* const peers_;
  absl::Mutex mu_;
  int64_t next_graph_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, std::shared_ptr<GraphItem>> graphs_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::shared_ptr<StepRendezvous>> steps_ ABSL_GUARDED_BY(mu_);
  // The cancellation of each RunGraphAsync call that has not called `done` yet, by step id:
  // CleanupGraph cancels them, the destructor cancels them and waits for them.
  std::multimap<int64_t, std::shared_ptr<CancellationManager>> running_ ABSL_GUARDED_BY(mu_);
  // RecvTensor calls in progress, by step id.
  std::map<int64_t, int> serving_ ABSL_GUARDED_BY(mu_);
  // Steps CleanupGraph ended, oldest first.
  absl::flat_hash_set<int64_t> ended_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<absl::Time, int64_t>> ended_order_ ABSL_GUARDED_BY(mu_);
  // Isolated sessions' devices, by session handle, while the session has graphs here.
  std::map<std::string, std::shared_ptr<IsolatedDevice>> isolated_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_DISTRIBUTED_WORKER_H_
