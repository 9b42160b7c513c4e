// A task's one TCP port, shared by gRPC and the chunk socket (src/rpc/chunk_socket.h).
//
// A task is reached at the one address its cluster spec names, as in TensorFlow: firewall
// rules, Kubernetes services and network policies name that port, and a second port that
// the OS picks could take one another program had chosen ahead of binding it. So the task
// listens here itself and sorts each new connection by its first bytes: a chunk socket
// client starts with the chunk socket's magic ("TWC1"); anything else (an HTTP/2 preface, a
// TLS ClientHello) is handed to the gRPC server, through gRPC's external connection
// acceptor, with nothing read from it (the bytes were only peeked at).
//
// A connection that has not sent enough to be sorted within kSortTimeout is closed; at most
// kMaxUnsorted wait at once (the oldest goes to make room), so connections that send nothing
// cannot exhaust the task's descriptors or hold its port.
#ifndef TENSORWEAVE_SRC_RPC_TASK_PORT_H_
#define TENSORWEAVE_SRC_RPC_TASK_PORT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server_builder.h"
#include "tensorweave/status.h"

namespace tw {

class ChunkSocketServer;

class TaskPort {
 public:
  static constexpr int kMaxUnsorted = 256;
  static constexpr absl::Duration kSortTimeout = absl::Seconds(10);

  // Listens on `host`:`port` (port 0: one the OS chooses, the same on every address). A
  // wildcard host ("", "0.0.0.0", "::", "[::]") listens on every IPv4 and IPv6 address; a
  // name on every address it resolves to that is this host's ("localhost": 127.0.0.1, and
  // ::1 where the host has IPv6). Unavailable naming the address and the reason ("Address
  // already in use") when it cannot. Accepts nothing until Start. `sort_timeout`: shorter
  // in tests.
  static StatusOr<std::unique_ptr<TaskPort>> Listen(const std::string& host, int port,
                                                    absl::Duration sort_timeout = kSortTimeout);
  // Stop().
  ~TaskPort();

  int port() const { return port_; }

  // What the sorting thread has done so far: counts that only go up, for tests that must
  // know something happened (a connection accepted, a partial magic seen) before they act,
  // or that the thread did not spin. Thread-safe.
  struct Stats {
    int64_t wakeups = 0;   // returns from the thread's poll()
    int64_t accepted = 0;  // connections accepted
    int64_t partial = 0;   // connections seen with part of the magic only (each once)
    // Connections closed unsorted: gone before they were sorted, silent past the sort
    // timeout, or the oldest beyond kMaxUnsorted (not those open at Stop).
    int64_t closed = 0;
  };
  Stats stats() const;

  // Starts sorting connections: the chunk socket's to `chunks`, all others to `grpc` (an
  // acceptor of a started gRPC server, whose credentials work: gRPC drops the connections
  // of an acceptor it could not set up without closing them). Without `chunks`, every
  // connection goes to `grpc` unread; without `grpc`, the others are closed. `chunks` must
  // outlive Stop(). ResourceExhausted when no thread can be had.
  Status Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> grpc,
               ChunkSocketServer* chunks);
  // Stops accepting and closes the listening sockets and the connections not yet sorted;
  // those already handed over are their owners'. Idempotent; a second caller returns once
  // the first has stopped.
  void Stop();

 private:
  using Clock = std::chrono::steady_clock;  // deadlines must not move with the wall clock
  struct Unsorted {
    int fd;
    int listener;
    std::string peer;
    Clock::time_point deadline;
    bool partial = false;  // sent a prefix of the magic only: checked again shortly
  };
  enum class Sort { kWait, kGrpc, kChunks, kClose };

  TaskPort(std::vector<int> listeners, int port, int wake, absl::Duration sort_timeout)
      : listeners_(std::move(listeners)),
        port_(port),
        wake_(wake),
        sort_timeout_(absl::ToChronoNanoseconds(sort_timeout)) {}
  void Loop();
  void AcceptAll(int listener);
  // `revents`: what poll reported for it (0 when it was not polled for input).
  Sort Peek(Unsorted& c, short revents) const;
  void HandOver(Unsorted& c, Sort to);

  const std::vector<int> listeners_;  // non-blocking
  const int port_;
  const int wake_;  // an eventfd that Stop signals
  const Clock::duration sort_timeout_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> grpc_;
  ChunkSocketServer* chunks_ = nullptr;
  std::vector<Unsorted> unsorted_;                                          // the loop thread's
  std::atomic<int64_t> wakeups_{0}, accepted_{0}, partial_{0}, closed_{0};  // see Stats
  absl::Mutex mu_;  // held by Start and for the whole of Stop
  std::thread loop_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_TASK_PORT_H_
