// A plain-TCP data plane for the chunks of large RunGraph tensors (src/rpc/tensor_chunks.h),
// beside gRPC. gRPC receives into buffers of its own, so every chunk it carries is copied once
// more in user space after the kernel's copy, and is framed as HTTP/2; on loopback that is
// as many cycles as the kernel's receive copy (docs/performance.md, "Between hosts"). A
// chunk socket receives a pushed chunk straight into the tensor's memory and sends a
// fetched one straight from it: the kernel's copies are the only ones.
//
// Only in insecure clusters: a TLS cluster keeps its chunks on gRPC, whose channels carry
// the task's certificate. A chunk socket shares the task's one port with gRPC (the port
// tells them apart by their first bytes, src/rpc/task_port.h). A server names that port in
// its RegisterGraph and RunGraph replies when it serves chunks there (`chunk_port`, 0 for
// not); the caller reaches it at the host it reaches the server's gRPC port at, and falls
// back to gRPC for a chunk when it cannot connect. Control (RunGraph, its cancellation and
// errors) stays on gRPC; a chunk socket carries only bytes the ChunkStore validates,
// exactly what PutChunk and RecvChunk accept.
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
#include "absl/time/time.h"
#include "src/framework/cancellation.h"
#include "src/rpc/tensor_chunks.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw {

// The first bytes of every connection a chunk socket client opens: how the task's port tells
// it from gRPC's (src/rpc/task_port.h).
inline constexpr char kChunkSocketMagic[4] = {'T', 'W', 'C', '1'};

// Serves a ChunkStore on the connections the task's port hands it (TaskPort): one thread per
// connection reads its requests in turn. At most kMaxConnections are open: a new one beyond
// closes the oldest idle one (its client opens another when it needs one), or is closed
// itself when all are busy. A request fails and closes its connection when its bytes stop
// for kIdleTimeoutSeconds or it takes longer than kRequestTimeoutSeconds in all; an idle
// connection stays open until TCP keepalive finds its peer gone.
class ChunkSocketServer {
 public:
  static constexpr int kMaxConnections = 256;
  static constexpr int kIdleTimeoutSeconds = 60;
  static constexpr int kRequestTimeoutSeconds = 120;

  explicit ChunkSocketServer(ChunkStore* store) : store_(store) {}
  // Stops: closes every connection (a transfer in progress fails on its caller's side) and
  // joins the threads.
  ~ChunkSocketServer();

  // Serves connection `fd` (blocking; nothing read from it yet) from `peer`; takes it over.
  void Adopt(int fd, std::string peer);
  // Connections whose threads have not ended yet.
  int OpenConnections();

 private:
  // Fields but `thread` guarded by mu_.
  struct Connection {
    int fd;  // -1 once its thread has closed it
    std::thread thread;
    bool busy = false;     // within a request
    bool evicted = false;  // shut down to make room
    bool finished = false;
  };
  // Answers the requests of one connection until it closes or fails.
  void Serve(Connection* connection, const std::string& peer);
  // Joins the threads of connections that have ended.
  void ReapFinished();
  // Whether a new connection may open, after shutting the oldest idle one down if that
  // makes room.
  bool MakeRoomLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ChunkStore* const store_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
};

// The chunk socket of one peer task, reached over `connections` TCP connections, each with
// a thread that carries one chunk at a time; chunks queue for the first free one. A
// connection is opened at its first chunk and again after an error. Thread-safe.
//
// When a connection cannot be made, or a new one closes before any answer, the chunk is
// reported unreached, and so is every chunk for kRetryConnectSeconds after (Usable() is
// false meanwhile): a firewall that drops SYNs costs one connect timeout, not one per chunk. A
// connection the server closed while it was idle (its keepalive, or room made for another
// connection) is replaced once per chunk: a chunk whose reused connection fails before any reply
// byte is tried again on a new one, and one whose new connection fails that way is reported
// unreached. (Only when the connection was closed or reset: after a timeout the server may have
// read the chunk, and a second copy would be refused.)
class ChunkSocketClient {
 public:
  static constexpr int kConnectTimeoutSeconds = 10;
  static constexpr int kRetryConnectSeconds = 60;

  // `unreachable`: the chunk did not reach the server (`s` says why); the caller may send
  // it another way. Runs on a connection thread, or on the caller's when the chunk is
  // refused at once (its step was cancelled, or the client is closing).
  using Done = std::function<void(const Status& s, bool unreachable)>;

  ChunkSocketClient(std::string host, int port, int connections);
  // Close(), then frees. Must not run on one of the client's threads.
  ~ChunkSocketClient();

  int port() const { return port_; }
  // False while connecting is not worth trying (see above) or once closing.
  bool Usable();

  // Sends bytes [chunk.offset, +chunk.length) of `tensor` as `chunk`.
  void Put(proto::TensorChunk chunk, Tensor tensor, CancellationManager* cm, Done done);
  // Receives `chunk` into `dst`, which stays valid until `done` runs.
  void Fetch(proto::TensorChunk chunk, void* dst, CancellationManager* cm, Done done);

  // Stops taking chunks: those queued fail with Cancelled (reported unreachable with
  // `queued_unreachable`, so that their callers send them another way), those in progress
  // are interrupted, the connections close. Does not wait.
  void BeginClose(bool queued_unreachable = false);
  // BeginClose(), then joins the threads: every Done has run when it returns. Must not run
  // on one of the client's threads.
  void Close();

 private:
  struct Job;
  struct Worker {
    int fd = -1;  // written by its thread under mu_ (the closing side reads it there)
    std::thread thread;
  };
  void Enqueue(std::shared_ptr<Job> job);
  bool HasWorkOrClosing() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closing_ || !queue_.empty();
  }
  void Run(Worker* worker);
  // Carries `job` over `worker`'s connection (opening it first when needed).
  Status Carry(Worker* worker, Job* job, bool* unreachable);
  // A new connection, or why not. Gives up early when the client closes or `job` is
  // cancelled.
  StatusOr<int> Connect(Job* job);
  void CloseConnection(Worker* worker);

  const std::string host_;
  const int port_;
  const std::string peer_;  // host:port, for messages
  absl::Mutex mu_;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  // Why the last connect failed, until when no other is tried.
  Status unreachable_ ABSL_GUARDED_BY(mu_);
  absl::Time retry_connect_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::deque<std::shared_ptr<Job>> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Worker>> workers_;  // fixed after the constructor
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_CHUNK_SOCKET_H_
