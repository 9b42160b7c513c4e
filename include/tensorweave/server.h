// Server: one task of a cluster. It serves the worker service (runs graph partitions,
// holds the task's variables and queues) and the master service (any server can be the
// master of a session whose target is grpc://<its address>).
//
//   auto server = tw::Server::Create(config->cluster(), config->task_type(),
//                                    config->task_index());
//   (*server)->Start();  ...  (*server)->Join();   // Stop() from any thread ends Join()
#ifndef TENSORWEAVE_SERVER_H_
#define TENSORWEAVE_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tensorweave/cluster_spec.h"
#include "tensorweave/status.h"
#include "tensorweave/tls.h"

namespace tw {

struct ServerOptions {
  // Host to listen on; the port is the task's own. "0.0.0.0" so the task's own name never
  // has to resolve.
  std::string bind_host = "0.0.0.0";
  // Compute threads of the task's device, 0 to 1024; 0 means one per core. Create fails
  // with InvalidArgument "num_threads must be from 0 (one per core) to 1024, got N" otherwise.
  // Tasks that share a machine should share its cores: `tw launch` sets TW_NUM_THREADS to
  // each task's share, which `tw server` and RunConfig::runtime_settings() read (the
  // library reads no environment).
  int num_threads = 0;
  // How long CreateSession on this server waits for the tasks the session needs before
  // failing with Unavailable naming them (a session's own wait_for_cluster overrides it).
  // The wait holds no thread, and ends sooner when the client cancels or its deadline
  // passes (Cancelled) or the server stops. Five minutes, as TensorFlow: tasks of a cluster
  // start in any order, and a scheduler may take minutes to place them. `tw server
  // --wait-for-cluster`.
  absl::Duration wait_for_cluster = absl::Minutes(5);
  // Master calls (each waits for its workers) that may run at once.
  int master_threads = 16;
  // Transport security; default insecure. When enabled the server listens with TLS,
  // requires every caller (sessions and peer tasks) to present a certificate signed by
  // `tls.ca_cert_pem`, and presents its own certificate on every channel it opens to its
  // peers, so all tasks of a cluster must use TLS with the same CA. See tensorweave/tls.h
  // and docs/security.md.
  TlsOptions tls;
  // The directories this task may read and write files in: the checkpoint ops' paths must
  // lie inside one of them (symbolic links and ".." resolved), anything else is
  // PermissionDenied naming the path and these directories. Default: none, so graphs sent
  // to the server cannot touch its files at all; a task that saves or restores checkpoints
  // lists its checkpoint directory here (a ps task too: it writes its variables' shard).
  // Set by whoever starts the task because the graph, and the directory it names, comes
  // from any client that can reach the port. Relative entries are taken from the working
  // directory when the server is created; they need not exist yet. See docs/security.md.
  std::vector<std::string> allowed_directories;
  // Same-host tensor transfers through shared memory instead of TCP (docs/architecture.md):
  // on by default, as they are ~10x cheaper between tasks of one machine. false turns them
  // off, as if the tasks were on different hosts (to measure the TCP path, or where
  // /proc/<pid>/fd of a peer must not be opened). Process-wide, since a process has one
  // host identity: false turns them off for every server and session of the process, for
  // good, and must come before the process first sends or receives a tensor (its first
  // server); otherwise Create fails with FailedPrecondition "ServerOptions.shared_memory =
  // false: shared memory cannot be turned off: this process already uses it ...". true
  // changes nothing. `tw server` and RunConfig take false from TW_SHARED_MEMORY=0.
  bool shared_memory = true;
  // Large tensors (over 4 MiB) between tasks travel in chunks on plain TCP connections of
  // their own beside gRPC, received straight into the tensor's memory (docs/architecture.md,
  // "Chunk sockets"): connections to the task's one port, which the server tells from
  // gRPC's by their first bytes, and names in its replies. Only without TLS: a TLS server
  // never serves them. false keeps every chunk in gRPC calls (for a proxy in between that
  // passes only HTTP/2). `tw server` and RunConfig take false from TW_CHUNK_SOCKETS=0.
  bool chunk_sockets = true;
  // MiB of freed tensor memory the process keeps for the next tensors of similar sizes
  // (the buffer pool, docs/architecture.md); 0 disables the cache. Process-wide, since
  // the pool is: a value >= 0 sets the process's limit when the server is created (the
  // last server to set it wins; cached memory beyond it is returned at once). -1, the
  // default, leaves the limit as it is (1 GiB unless set), so a server that does not ask
  // never undoes another's setting. `tw server` and RunConfig take it from
  // TW_BUFFER_POOL_MB.
  int64_t buffer_pool_mb = -1;
  // Clusters that finish by themselves: when set, a task other than the chief stops (its
  // Join() returns) once the chief (task 0 of job "chief", else of job "worker") has not
  // answered for this long after having answered at least once. Default: never.
  absl::Duration stop_when_chief_unreachable = absl::InfiniteDuration();
  // The timeout of steps run through this server's master whose session and RunOptions
  // set none: they are cancelled after this long and fail with DeadlineExceeded
  // ("Timed out waiting for notification: the step did not finish within 40ms", TF's words
  // first). TensorFlow's Server(config=ConfigProto(operation_timeout_in_ms=N)), its
  // default session config. Infinite, zero or negative: no limit.
  absl::Duration default_operation_timeout = absl::InfiniteDuration();
  // Prometheus metrics (steps, RPCs, bytes, graphs, sessions, queues, variables, memory;
  // docs/metrics.md) served as text at http://<bind_host>:<metrics_port>/metrics: -1 (the
  // default) serves none, 0 a port the OS chooses (metrics_address() says which).
  int metrics_port = -1;
};

// What a server is doing now, for diagnostics, health checks and tests that must wait for a
// condition rather than sleep.
// Why a server stopped, for its process's exit code (tw server's: docs/kubernetes.md).
enum class StopReason {
  kRunning,           // not stopped yet
  kStopped,           // Stop() or StopCluster() on this server
  kStoppedByCluster,  // another task (or a client) asked it to stop: StopCluster
  kChiefUnreachable,  // ServerOptions::stop_when_chief_unreachable ran out
};

struct ServerStats {
  // Steps this task's worker is running a partition of, or holds tensors for.
  size_t active_steps = 0;
  // When the chief last answered this task's watch (ServerOptions::
  // stop_when_chief_unreachable); absl::InfinitePast() before the first answer or without a
  // watch.
  absl::Time chief_last_answered = absl::InfinitePast();
  // Set before the server starts stopping, so valid once Join() has returned.
  StopReason stop_reason = StopReason::kRunning;
};

// Thread-safe.
class Server {
 public:
  // InvalidArgument: `Job "x" was not defined in cluster`, `Task 3 was not defined in job
  // "ps"`, an address whose port cannot be parsed, incomplete `options.tls` (naming the
  // missing field), or an empty entry of `options.allowed_directories`. FailedPrecondition
  // for `options.shared_memory = false` in a process that already uses shared memory.
  // Does not bind yet; applies the process-wide options (shared_memory, buffer_pool_mb).
  static StatusOr<std::unique_ptr<Server>> Create(const ClusterSpec& cluster,
                                                  const std::string& job, int task,
                                                  const ServerOptions& options = {});
  // A one-task cluster ("localhost" job) on a port the OS chooses, already started.
  static StatusOr<std::unique_ptr<Server>> CreateLocal(const ServerOptions& options = {});

  virtual ~Server() = default;
  // Binds and serves; OK when already serving. Unavailable when the port (or the metrics
  // port) cannot be bound,
  // with the reason: "Could not start gRPC server on 0.0.0.0:2222: Address already in use"
  // (ports are bound exclusively: a stale task and its replacement never share one), or
  // when gRPC rejects the TLS certificate or key (say, a key that does not match the
  // certificate). FailedPrecondition after Stop() or Join() of an unstarted server.
  virtual Status Start() = 0;
  // Returns after Stop(), from any thread; at once on a server that was never started
  // (as TensorFlow's does), which is then stopped: a later Start() is FailedPrecondition.
  virtual void Join() = 0;
  // Stops serving: running steps are cancelled, the port is freed, Join() returns.
  virtual void Stop() = 0;
  // Stops the whole cluster: asks every other task's server to stop (their Join() returns,
  // so a ps task's program ends), waiting up to `timeout` for them, then stops this one.
  // A task that cannot be reached is skipped (it may have ended already); the result is
  // Unavailable naming such tasks, OK when every task acknowledged.
  virtual Status StopCluster(absl::Duration timeout = absl::Seconds(10)) = 0;
  // "grpc://localhost:<port>": a Session target for this server (valid after Start()); on a
  // server bound to one address (ServerOptions::bind_host), that address instead.
  virtual std::string target() const = 0;
  // The port actually bound (after Start()).
  virtual int port() const = 0;
  // "host:port" the server listens on (after Start()): its bind host (127.0.0.1 for
  // CreateLocal's default) and the port actually bound, an IPv6 host in brackets.
  virtual std::string listen_address() const = 0;
  // A snapshot of what the server is doing; valid in any state.
  virtual ServerStats stats() const = 0;
  // "host:port" of the metrics endpoint (ServerOptions::metrics_port) after Start(); ""
  // without one.
  virtual std::string metrics_address() const = 0;
};

// StopCluster for a process without a server of its own (an operator's tool): asks every
// task of `cluster` to stop. Same result as Server::StopCluster.
Status StopClusterServers(const ClusterSpec& cluster, const TlsOptions& tls = {},
                          absl::Duration timeout = absl::Seconds(10));

}  // namespace tw

#endif  // TENSORWEAVE_SERVER_H_
