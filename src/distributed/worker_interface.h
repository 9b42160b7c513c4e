// WorkerInterface: one task's worker service as its callers see it, wherever it runs. The
// gRPC client (src/rpc) and the in-process Worker both implement it, so the master and the
// remote rendezvous are written once and tested without a network.
#ifndef TENSORWEAVE_SRC_DISTRIBUTED_WORKER_INTERFACE_H_
#define TENSORWEAVE_SRC_DISTRIBUTED_WORKER_INTERFACE_H_

#include <functional>
#include <string>

#include "src/distributed/messages.h"
#include "src/framework/cancellation.h"
#include "tensorweave/protobuf/worker.pb.h"
#include "tensorweave/status.h"

namespace tw {

// Thread-safe. Every call completes by calling `done` exactly once, on any thread; request
// and response must stay alive until then.
class WorkerInterface {
 public:
  using StatusCallback = std::function<void(const Status&)>;
  virtual ~WorkerInterface() = default;

  virtual void GetStatusAsync(const proto::GetStatusRequest* request,
                              proto::GetStatusResponse* response, StatusCallback done) = 0;
  virtual void RegisterGraphAsync(const proto::RegisterGraphRequest* request,
                                  proto::RegisterGraphResponse* response, StatusCallback done) = 0;
  virtual void DeregisterGraphAsync(const proto::DeregisterGraphRequest* request,
                                    proto::DeregisterGraphResponse* response,
                                    StatusCallback done) = 0;
  // `cm` (may be null) cancels the step on this worker.
  virtual void RunGraphAsync(const RunGraphArgs* request, RunGraphResult* response,
                             CancellationManager* cm, StatusCallback done) = 0;
  // Delivers the request's pushed tensors to the step on this worker, then waits until it
  // has produced the requested tensors; `cm` cancels the wait.
  virtual void RecvTensorAsync(const RecvTensorArgs* request, RecvTensorResult* response,
                               CancellationManager* cm, StatusCallback done) = 0;
  virtual void CleanupGraphAsync(const proto::CleanupGraphRequest* request,
                                 proto::CleanupGraphResponse* response, StatusCallback done) = 0;
  virtual void CleanupAllAsync(const proto::CleanupAllRequest* request,
                               proto::CleanupAllResponse* response, StatusCallback done) = 0;
};

// Finds the worker of a task, "/job:ps/replica:0/task:0". Thread-safe.
class WorkerCache {
 public:
  virtual ~WorkerCache() = default;
  // NotFound when the task is not in the cluster. The pointer stays valid while the cache
  // lives.
  virtual StatusOr<WorkerInterface*> GetWorker(const std::string& task) = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_DISTRIBUTED_WORKER_INTERFACE_H_
