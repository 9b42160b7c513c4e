// A plain-TCP data plane for the chunks of large RunGraph tensors (src/rpc/tensor_chunks.h),
// beside gRPC. gRPC receives into buffers of its own, so every chunk it carries is copied once
// more in user space after the kernel's copy, and is framed as HTTP/2; on loopback that is
// as many cycles as the kernel's receive copy (docs/performance.md, "Between hosts"). A
// chunk socket receives a pushed chunk straight into the tensor's memory and sends a
// fetched one straight from it: the kernel's copies are the only ones.
//
// Only in insecure clusters: a TLS cluster keeps its chunks on gRPC, whose channels carry
// the task's certificate. A server advertises its chunk socket's port in every RunGraph
// reply (RunGraphResponse.chunk_port, 0 for none); the caller reaches it at the host it
// reaches the server's gRPC port at, and falls back to gRPC for a chunk when it cannot
// connect. Control (RunGraph, its cancellation and errors) stays on gRPC; a chunk socket
// carries only bytes the ChunkStore validates, exactly what PutChunk and RecvChunk accept.
//
// Wire (little-endian): a request is {u32 magic "TWC1", u32 op (1 put, 2 fetch), u32 n},
// n bytes of a TensorChunk, then for a put its `length` bytes. A reply is {u32 magic, u32
// code (absl::StatusCode), u32 m}, m bytes of the error message, then for a fetch that
// succeeded the chunk's `length` bytes. After an error reply the server closes the
// connection (the rest of a refused put would be in the way).
#ifndef TENSORWEAVE_SRC_RPC_CHUNK_SOCKET_H_
#define TENSORWEAVE_SRC_RPC_CHUNK_SOCKET_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/framework/cancellation.h"
#include "src/rpc/tensor_chunks.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw {

// Serves a ChunkStore on a TCP port: a thread accepts, one thread per connection reads its
// requests in turn. Connections beyond kMaxConnections are closed at once. A request whose
// bytes stop arriving for kIdleTimeout fails and closes its connection; an idle connection
// between requests stays open.
class ChunkSocketServer {
 public:
  static constexpr int kMaxConnections = 256;
  static constexpr int kIdleTimeoutSeconds = 60;

  // Listens on `host` (the gRPC server's bind host; "" or a wildcard for every address) at
  // a port the OS chooses. Unavailable when it cannot.
  static StatusOr<std::unique_ptr<ChunkSocketServer>> Start(const std::string& host,
                                                            ChunkStore* store);
  // Stops: closes the listener and every connection (a transfer in progress fails on its
  // caller's side) and joins the threads.
  ~ChunkSocketServer();

  int port() const { return port_; }

 private:
  struct Connection {
    int fd;  // -1 once its thread has closed it
    std::thread thread;
    bool finished = false;
  };
  ChunkSocketServer(int listen_fd, int port, ChunkStore* store)
      : listen_fd_(listen_fd), port_(port), store_(store) {}
  void AcceptLoop();
  // Answers the requests of one connection until it closes or fails.
  void Serve(Connection* connection, const std::string& peer);
  // Joins the threads of connections that have ended (called by the accept thread).
  void ReapFinished();

  const int listen_fd_;
  const int port_;
  ChunkStore* const store_;
  std::thread acceptor_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
};

// The chunk socket of one peer task, reached over `connections` TCP connections, each with
// a thread that carries one chunk at a time; chunks queue for the first free one. A
// connection is opened at its first chunk and again after an error; once a connection
// could not be made, every later chunk fails at once as unreached. Thread-safe.
class ChunkSocketClient {
 public:
  // `reached`: false when the chunk never reached the server (no connection could be made):
  // the caller may send it another way. Runs on a connection thread.
  using Done = std::function<void(const Status& s, bool reached)>;

  ChunkSocketClient(std::string host, int port, int connections);
  // Fails the chunks still queued (Cancelled, not reached), interrupts those in progress
  // and joins the threads; every Done has run when it returns.
  ~ChunkSocketClient();

  int port() const { return port_; }

  // Sends bytes [chunk.offset, +chunk.length) of `tensor` as `chunk`.
  void Put(proto::TensorChunk chunk, Tensor tensor, CancellationManager* cm, Done done);
  // Receives `chunk` into `dst`, which stays valid until `done` runs.
  void Fetch(proto::TensorChunk chunk, void* dst, CancellationManager* cm, Done done);

 private:
  struct Job;
  struct Worker {
    int fd = -1;
    std::thread thread;
  };
  void Enqueue(std::shared_ptr<Job> job);
  bool HasWorkOrClosing() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closing_ || !queue_.empty();
  }
  void Run(Worker* worker);
  // Carries `job` over `worker`'s connection (opening it first when needed).
  Status Carry(Worker* worker, Job* job, bool* reached);

  const std::string host_;
  const int port_;
  absl::Mutex mu_;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  Status unreachable_ ABSL_GUARDED_BY(mu_);  // why the last connect failed, if one did
  std::deque<std::shared_ptr<Job>> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_CHUNK_SOCKET_H_
