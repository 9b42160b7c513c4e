// The workers of a cluster as seen from one task: gRPC clients for the other tasks
// (src/rpc/grpc_remote_worker.h), the task's own Worker called directly.
#ifndef TENSORWEAVE_SRC_RPC_GRPC_WORKER_CACHE_H_
#define TENSORWEAVE_SRC_RPC_GRPC_WORKER_CACHE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "src/distributed/worker_interface.h"
#include "tensorweave/cluster_spec.h"
#include "tensorweave/tls.h"

namespace tw {

// Thread-safe. Channels are created on first use and kept.
class GrpcWorkerCache final : public WorkerCache {
 public:
  // Every channel to another task is secured by `tls` (insecure when it is not enabled):
  // in a TLS cluster the task presents its own certificate to its peers.
  // Precondition: tls.Validate().ok().
  GrpcWorkerCache(ClusterSpec cluster, std::string local_task, TlsOptions tls = {});
  ~GrpcWorkerCache() override;
  // The task's own worker, called directly; set once, before the first GetWorker of it.
  void SetLocalWorker(WorkerInterface* worker) { local_worker_ = worker; }
  StatusOr<WorkerInterface*> GetWorker(const std::string& task) override;

 private:
  const ClusterSpec cluster_;
  const std::string local_task_;
  const TlsOptions tls_;
  WorkerInterface* local_worker_ = nullptr;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<WorkerInterface>> remote_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_GRPC_WORKER_CACHE_H_
