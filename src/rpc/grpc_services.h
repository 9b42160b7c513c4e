// The gRPC services of a server: thin adapters from gRPC's callback API to the
// transport-agnostic Master and Worker. Handlers never block: worker calls and prepared
// steps complete asynchronously; other master calls (which wait for workers) run on the
// service's own threads.
#ifndef TENSORWEAVE_SRC_RPC_GRPC_SERVICES_H_
#define TENSORWEAVE_SRC_RPC_GRPC_SERVICES_H_

#include <functional>
#include <memory>
#include <string>

#include "src/distributed/master.h"
#include "src/distributed/worker.h"
#include "src/rpc/tensor_chunks.h"
#include "tensorweave/protobuf/service.grpc.pb.h"

namespace tw {

// `chunks` holds the large tensors of RunGraph calls in flight (PutChunk, RecvChunk, and
// the server's chunk socket when it has one: `chunk_port`, 0 for none); it outlives the
// service. `on_shutdown(requested_by)` runs for a Shutdown call after its reply is on its
// way; it must not block (the server stops on a thread of its own).
std::unique_ptr<grpc::Service> NewGrpcWorkerService(
    Worker* worker, ChunkStore* chunks, int chunk_port,
    std::function<void(const std::string&)> on_shutdown);
// `threads` bounds how many master calls (each waits for its workers) run at once.
std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master, int threads);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_GRPC_SERVICES_H_
