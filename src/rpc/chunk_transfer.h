// ChunkTransfer: the chunked pushes and pulls of large RunGraph tensors to and from one peer
// task (src/rpc/tensor_chunks.h), for its GrpcRemoteWorker. Each chunk travels on the peer's
// chunk socket (src/rpc/chunk_socket.h) when the peer's replies name one and it can be
// reached; otherwise, and for a chunk the socket could not deliver, in a PutChunk or
// RecvChunk call that the worker makes for it (the fallback), on the chunk channels in turn.
//
// The worker reports what it learns from its calls: the chunk port its RegisterGraph and
// RunGraph replies name (LearnPort), and a failed call that may mean the peer moved
// (ForgetPort). Chunk sockets carry no TLS: with no host (a TLS cluster) every chunk goes in
// a call.
#ifndef TENSORWEAVE_SRC_RPC_CHUNK_TRANSFER_H_
#define TENSORWEAVE_SRC_RPC_CHUNK_TRANSFER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grpcpp/channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "src/distributed/messages.h"
#include "src/framework/cancellation.h"
#include "src/rpc/chunk_socket.h"
#include "src/rpc/tensor_wire.h"
#include "tensorweave/status.h"

namespace tw {

// Owned by its GrpcRemoteWorker. Thread-safe. Push and Pull call `done` exactly once, on any
// thread, with the first error of any chunk.
class ChunkTransfer {
 public:
  using StatusCallback = std::function<void(const Status&)>;
  // Reads a call's reply into the chunk's destination.
  using Decode = std::function<Status(const grpc::ByteBuffer& reply)>;
  // The fallback: one unary call of `method` carrying `request` on `stub` (the worker's own
  // channel when null), whose reply `decode` reads; `done` exactly once, on any thread; a
  // cancellation of `cm` cancels it. The worker's calls, which it ends when it goes.
  using CallFn =
      std::function<void(const char* method, grpc::ByteBuffer request, Decode decode,
                         CancellationManager* cm, StatusCallback done, grpc::GenericStub* stub)>;

  // `host`: where the peer's chunk socket is, the host of its gRPC address ("": never use
  // one, as with TLS). Fallback calls take turns on `chunk_channels` (the worker's own
  // channel when there are none). `call` must stay usable until Close has returned.
  ChunkTransfer(std::string host, const std::vector<std::shared_ptr<grpc::Channel>>& chunk_channels,
                CallFn call);
  // Close().
  ~ChunkTransfer();

  ChunkTransfer(const ChunkTransfer&) = delete;
  ChunkTransfer& operator=(const ChunkTransfer&) = delete;

  // Puts every chunk of `tensors` (all at once) for step `step`, before the RunGraph call
  // that marks them chunked. The tensors stay valid until `done` runs.
  void Push(int64_t step, const std::vector<const NamedTensor*>& tensors, CancellationManager* cm,
            StatusCallback done);
  // Fetches the `chunked` fetches of a RunGraph reply (step `step`) straight into newly
  // allocated tensors of `result->recv`, which stays valid until `done` runs.
  // InvalidArgument when a chunked fetch's meta names no tensor that can be allocated.
  void Pull(int64_t step, const std::vector<ChunkedTensor>& chunked, RunGraphResult* result,
            CancellationManager* cm, StatusCallback done);

  // The peer's chunk socket port, as its last RegisterGraph or RunGraph reply named it (0:
  // none). A new port (the peer restarted) gets new connections; chunks still queued for the
  // old one go in calls instead (a reply naming another port may be a late one).
  void LearnPort(int port);
  // A call to the peer failed: it may be gone or restarted elsewhere. Chunks go in calls
  // until its next reply names its chunk socket again.
  void ForgetPort();

  // Closes the chunk sockets and joins their threads: every chunk that went on a socket has
  // completed (or started its fallback call) when it returns. Later chunks go in calls.
  // Idempotent; must not run on a chunk socket's thread.
  void Close();

 private:
  // The socket to use now; null when the reply named none (TLS, turned off), a call failed
  // since, or it cannot be reached for now (ChunkSocketClient::Usable).
  std::shared_ptr<ChunkSocketClient> Socket();
  // A chunk that could not reach the chunk socket went in a call: say so once per port (a
  // firewall that lets only the gRPC port through, say).
  void SocketUnreachable(int port, const Status& why);
  // The stub for the next fallback call (null: the worker's own channel).
  grpc::GenericStub* NextStub();

  const std::string host_;  // the peer's, where its chunk socket is too; "" with TLS
  const CallFn call_;
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;  // fixed after the constructor
  std::atomic<size_t> next_stub_{0};
  absl::Mutex mu_;
  std::shared_ptr<ChunkSocketClient> socket_ ABSL_GUARDED_BY(mu_);
  // Clients of earlier ports: closed, kept until their threads are joined.
  std::vector<std::shared_ptr<ChunkSocketClient>> retired_ ABSL_GUARDED_BY(mu_);
  int port_ ABSL_GUARDED_BY(mu_) = 0;  // as the last reply named it
  int logged_port_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_CHUNK_TRANSFER_H_
