#include "src/rpc/grpc_worker_cache.h"

#include "src/cluster/host_port.h"
#include "src/rpc/grpc_remote_worker.h"
#include "src/rpc/grpc_util.h"
#include "src/rpc/tensor_chunks.h"
#include "tensorweave/device_name.h"

namespace tw {

GrpcWorkerCache::GrpcWorkerCache(ClusterSpec cluster, std::string local_task, TlsOptions tls)
    : cluster_(std::move(cluster)), local_task_(std::move(local_task)), tls_(std::move(tls)) {}

GrpcWorkerCache::~GrpcWorkerCache() = default;

StatusOr<WorkerInterface*> GrpcWorkerCache::GetWorker(const std::string& task) {
  if (task == local_task_) return local_worker_;
  absl::MutexLock lock(&mu_);
  if (auto it = remote_.find(task); it != remote_.end()) return it->second.get();
  auto name = DeviceName::Parse(task);
  if (!name.ok() || !name->job || !name->task) {
    return errors::InvalidArgument("\"", task, "\" does not name a task");
  }
  TW_ASSIGN_OR_RETURN(std::string address, cluster_.task_address(*name->job, *name->task));
  std::vector<std::shared_ptr<grpc::Channel>> chunk_channels;
  for (int i = 1; i <= kChunkConnections; ++i) {
    chunk_channels.push_back(NewChannel(address, tls_, i));
  }
  // Chunk sockets carry no TLS: a TLS task never uses one (nor does its peer open one).
  TW_ASSIGN_OR_RETURN(HostPort host_port, ParseHostPort(address));
  std::unique_ptr<WorkerInterface> worker =
      NewGrpcRemoteWorker(NewChannel(address, tls_), std::move(chunk_channels),
                          tls_.enabled() ? "" : std::move(host_port.host));
  WorkerInterface* raw = worker.get();
  remote_[task] = std::move(worker);
  return raw;
}

}  // namespace tw
