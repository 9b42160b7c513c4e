// GrpcRemoteWorker: the WorkerInterface of another task, over gRPC. Each call is one unary
// RPC with gRPC's callback API (RunGraph and RecvTensor as raw byte buffers,
// src/rpc/tensor_wire.h); tensors go through shared memory when the peer is on this host
// (src/rpc/shared_memory.h). The chunks of large RunGraph tensors are a ChunkTransfer's
// (src/rpc/chunk_transfer.h), which the worker tells what its replies say of the peer's
// chunk socket and which makes its fallback calls through the worker.
#ifndef TENSORWEAVE_SRC_RPC_GRPC_REMOTE_WORKER_H_
#define TENSORWEAVE_SRC_RPC_GRPC_REMOTE_WORKER_H_

#include <memory>
#include <string>
#include <vector>

#include "grpcpp/channel.h"
#include "src/distributed/worker_interface.h"

namespace tw {

// A worker reached through `channel`. The chunks of large transfers go to the server's
// chunk socket (src/rpc/chunk_socket.h) at `host` when its replies name one ("": never,
// as for a TLS channel), and otherwise in PutChunk and RecvChunk calls that take turns on
// `chunk_channels` (or `channel` when there are none). Thread-safe; its calls follow
// WorkerInterface's contract (done exactly once, on any thread). Until the peer has answered once,
// calls other than GetStatus wait for the connection to come up rather than fail with Unavailable
// at the first connection error (cancelling them ends the wait); afterwards they fail fast.
// Destroying it cancels the calls still in flight and waits until each has completed.
std::unique_ptr<WorkerInterface> NewGrpcRemoteWorker(
    std::shared_ptr<grpc::Channel> channel,
    std::vector<std::shared_ptr<grpc::Channel>> chunk_channels = {}, std::string host = "");

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_GRPC_REMOTE_WORKER_H_
