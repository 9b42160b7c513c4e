#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "src/base/logging.h"
#include "src/base/metrics.h"
#include "src/cluster/host_port.h"
#include "src/core/buffer_pool.h"
#include "src/distributed/local_master.h"
#include "src/distributed/master.h"
#include "src/distributed/worker.h"
#include "src/rpc/chunk_socket.h"
#include "src/rpc/grpc_services.h"
#include "src/rpc/grpc_tls.h"
#include "src/rpc/grpc_util.h"
#include "src/rpc/grpc_worker_cache.h"
#include "src/rpc/metrics_endpoint.h"
#include "src/rpc/rpc_metrics.h"
#include "src/rpc/shared_memory.h"
#include "src/rpc/task_port.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/protobuf/service.grpc.pb.h"
#include "tensorweave/server.h"

namespace tw {
namespace {

bool IsLoopbackHost(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]";
}

// Sends Shutdown to every task of `cluster` but `skip_task`, in parallel, each call bounded
// by `timeout`. Unavailable naming the tasks that did not acknowledge.
Status StopTasks(const ClusterSpec& cluster, const std::string& skip_task, const TlsOptions& tls,
                 absl::Duration timeout) {
  struct Call {
    std::string task;
    std::unique_ptr<proto::WorkerService::Stub> stub;
    grpc::ClientContext ctx;
    proto::ShutdownRequest request;
    proto::ShutdownResponse response;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<Call>> calls;
  for (const auto& [job, tasks] : cluster.job_map()) {
    for (const auto& [index, address] : tasks) {
      const std::string task = DeviceName::TaskName(job, index);
      if (task == skip_task) continue;
      auto call = std::make_unique<Call>();
      call->task = task;
      call->stub = proto::WorkerService::NewStub(NewChannel(address, tls));
      call->ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
      call->request.set_requested_by(skip_task);
      calls.push_back(std::move(call));
    }
  }
  absl::Mutex mu;
  size_t pending = calls.size();
  for (auto& call : calls) {
    Call* c = call.get();
    c->stub->async()->Shutdown(&c->ctx, &c->request, &c->response,
                               [&mu, &pending, c](grpc::Status s) {
                                 absl::MutexLock lock(&mu);
                                 c->status = std::move(s);
                                 --pending;
                               });
  }
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](size_t* p) { return *p == 0; }, &pending));
  std::vector<std::string> missing;
  for (auto& call : calls) {
    if (!call->status.ok())
      missing.push_back(call->task + " (" + call->status.error_message() + ")");
  }
  if (!missing.empty()) {
    return errors::Unavailable("could not ask ", absl::StrJoin(missing, ", "), " to stop");
  }
  return OkStatus();
}

class GrpcServer final : public Server {
 public:
  GrpcServer(ClusterSpec cluster, std::string job, int task, int port, ServerOptions options)
      : cluster_(std::move(cluster)),
        job_(std::move(job)),
        task_(task),
        requested_port_(port),
        options_(std::move(options)) {}

  ~GrpcServer() override {
    Stop();
    absl::MutexLock lock(&stop_thread_mu_);
    if (stop_thread_.joinable()) stop_thread_.join();
  }

  Status Init() {
    TW_ASSIGN_OR_RETURN(FileAccessPolicy files,
                        FileAccessPolicy::AllowDirectories(options_.allowed_directories,
                                                           "ServerOptions.allowed_directories"));
    TW_ASSIGN_OR_RETURN(device_, CpuDevice::Create(DeviceName::Full(job_, 0, task_, "CPU", 0),
                                                   {.num_threads = options_.num_threads,
                                                    .file_access = std::move(files)}));
    const std::string local_task = DeviceName::TaskName(job_, task_);
    worker_cache_ = std::make_unique<GrpcWorkerCache>(cluster_, local_task, options_.tls);
    worker_ = std::make_unique<Worker>(device_.get(), worker_cache_.get());
    worker_cache_->SetLocalWorker(worker_.get());
    MasterOptions master;
    master.local_device = device_->name();
    for (const auto& [job, tasks] : cluster_.job_map()) {
      for (const auto& [index, address] : tasks) {
        master.tasks.push_back(DeviceName::TaskName(job, index));
      }
    }
    master.wait_for_cluster = options_.wait_for_cluster;
    if (options_.default_operation_timeout > absl::ZeroDuration()) {
      master.default_step_timeout = options_.default_operation_timeout;
    }
    master_ = std::make_unique<Master>(std::move(master), worker_cache_.get());
    return OkStatus();
  }

  Status Start() override {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kStarted) return OkStatus();
    if (state_ == State::kStopped) return errors::FailedPrecondition("Server has stopped.");
    KeepFreedMemory();
    grpc::EnableDefaultHealthCheckService(true);
    // The task's one port, for gRPC and the chunk socket (src/rpc/task_port.h).
    const std::string bind = JoinHostPort(options_.bind_host, requested_port_);
    TW_RETURN_IF_ERROR(CheckTls(bind));
    auto listening = TaskPort::Listen(options_.bind_host, requested_port_);
    if (!listening.ok()) return listening.status();
    std::unique_ptr<TaskPort> task_port = *std::move(listening);
    TW_RETURN_IF_ERROR(StartServingLocked(bind, task_port.get()));
    port_ = task_port->port();
    task_port_ = std::move(task_port);
    TW_RETURN_IF_ERROR(StartMetricsLocked());
    state_ = State::kStarted;
    AnnounceLocked(bind);
    StartChiefWatch();
    return OkStatus();
  }

  void Join() override {
    {
      absl::MutexLock lock(&mu_);
      if (state_ == State::kNew) {
        state_ = State::kStopped;
        return;
      }
    }
    stopped_.WaitForNotification();
  }

  void Stop() override {
    RecordStopReason(StopReason::kStopped);
    // Serialized: a second caller returns only when the server has really stopped.
    absl::MutexLock stopping(&stop_mu_);
    if (!watch_done_.HasBeenNotified()) watch_done_.Notify();
    if (watcher_.joinable()) watcher_.join();
    std::unique_ptr<TaskPort> task_port;
    std::unique_ptr<grpc::Server> server;
    std::unique_ptr<ChunkSocketServer> chunk_socket;
    std::unique_ptr<MetricsEndpoint> metrics;
    MetricsRegistry::CollectorHandle metrics_collector;
    {
      absl::MutexLock lock(&mu_);
      task_port = std::move(task_port_);
      server = std::move(server_);
      chunk_socket = std::move(chunk_socket_);
      metrics = std::move(metrics_);
      metrics_collector = std::move(metrics_collector_);
      state_ = State::kStopped;
    }
    // No new connections from here; those open are gRPC's and the chunk socket's to end.
    task_port.reset();
    if (server != nullptr) {
      LocalMaster::Unregister(local_addresses_);
      // Sessions first: their steps may wait on other tasks, which no shutdown here ends;
      // CreateSession calls waiting for the cluster end with them.
      master_->Stop();
      local_master_->Detach();
      // Steps running here end now, rather than when the grace below runs out.
      worker_->CancelRunningPartitions();
      // Cancels in-flight calls (their reactors cancel the steps) after a short grace.
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
      server->Wait();
    }
    // Transfers still on it fail at their callers, whose steps have ended here.
    chunk_socket.reset();
    // A scrape in progress finishes first; then this server's gauges go.
    metrics.reset();
    metrics_collector = {};
    if (!stopped_.HasBeenNotified()) stopped_.Notify();
  }

  Status StopCluster(absl::Duration timeout) override {
    Status others = StopTasks(cluster_, DeviceName::TaskName(job_, task_), options_.tls, timeout);
    Stop();
    return others;
  }

  // localhost reaches a server listening on every address or on loopback; one bound to
  // another single address (a simulated host's, a chosen interface's) only there.
  std::string target() const override { return "grpc://" + TargetAddress(port()); }
  int port() const override {
    absl::MutexLock lock(&mu_);
    return port_;
  }
  std::string listen_address() const override { return JoinHostPort(options_.bind_host, port()); }
  std::string RenderMetrics() const {
    return Metrics().Render({{"tw_job", job_}, {"tw_task", std::to_string(task_)}}, this);
  }
  // This task's gauges: what its worker and master hold, and its resources (queues'
  // sizes, variables' bytes).
  void CollectMetrics(std::vector<GaugeSample>* out) const {
    out->push_back({"tw_registered_graphs",
                    "Graph partitions registered with this task.",
                    {},
                    static_cast<double>(worker_->NumGraphs())});
    out->push_back({"tw_active_steps",
                    "Steps this task runs a partition of or holds tensors for.",
                    {},
                    static_cast<double>(worker_->ActiveSteps())});
    out->push_back({"tw_sessions",
                    "Sessions open on this task's master.",
                    {},
                    static_cast<double>(master_->NumSessions())});
    device_->resource_manager()->ForEach([out](const std::string& container,
                                               const std::string& name,
                                               const ResourceBase& resource) {
      if (auto gauge = resource.MetricsGauge()) {
        out->push_back(
            {gauge->name, gauge->help, {{"container", container}, {"name", name}}, gauge->value});
      }
    });
  }

  std::string metrics_address() const override {
    absl::MutexLock lock(&mu_);
    return metrics_ == nullptr ? "" : JoinHostPort(options_.bind_host, metrics_->port());
  }

  // target()'s address.
  std::string TargetAddress(int port) const {
    const std::string& host = options_.bind_host;
    const bool localhost = IsWildcardHost(host) || IsLoopbackHost(host);
    return JoinHostPort(localhost ? "localhost" : host, port);
  }
  ServerStats stats() const override {
    ServerStats stats{.active_steps = worker_->ActiveSteps()};
    absl::MutexLock lock(&mu_);
    stats.chief_last_answered = chief_last_answered_;
    stats.stop_reason = stop_reason_;
    return stats;
  }

 private:
  // Start's steps, in order, under mu_.

  // On a port it did not open itself, gRPC finds a bad certificate, key or CA only when
  // connections come (and then drops them without an answer): Unavailable now instead.
  Status CheckTls(const std::string& bind) const {
    if (Status tls = CheckCertificateAndKey(options_.tls); !tls.ok()) {
      return errors::Unavailable("Could not start gRPC server on ", bind,
                                 " (check that the TLS CA, certificate and key are valid PEM and "
                                 "that the key belongs to the certificate): ",
                                 tls.message());
    }
    return OkStatus();
  }

  // Builds and starts the gRPC server (the worker and master services) and the chunk
  // socket, and has `task_port` hand them their connections. Unavailable naming `bind` when
  // either cannot start; nothing is left running then.
  Status StartServingLocked(const std::string& bind, TaskPort* task_port)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    grpc::ServerBuilder builder;
    std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor =
        builder.experimental().AddExternalConnectionAcceptor(
            grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
            NewServerCredentials(options_.tls));
    builder.SetMaxReceiveMessageSize(-1);
    builder.SetMaxSendMessageSize(-1);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kStreamWindowBytes);
    // Chunks of large tensors on plain TCP connections to the same port, in insecure
    // clusters only (src/rpc/chunk_socket.h); without them they travel in PutChunk and
    // RecvChunk calls.
    int chunk_port = 0;
    if (options_.chunk_sockets && !options_.tls.enabled()) {
      chunk_socket_ = std::make_unique<ChunkSocketServer>(&chunks_);
      chunk_port = task_port->port();
    }
    worker_service_ =
        NewGrpcWorkerService(worker_.get(), &chunks_, chunk_port, [this](const std::string& by) {
          Log().info("/job:{}/task:{}: stop requested by {}", job_, task_,
                     by.empty() ? "a client" : by);
          StopSoon(StopReason::kStoppedByCluster);
        });
    master_service_ = NewGrpcMasterService(master_.get(), options_.master_threads);
    builder.RegisterService(worker_service_.get());
    builder.RegisterService(master_service_.get());
    if (options_.metrics_port >= 0) {
      // Counts every call this server handles (src/rpc/rpc_metrics.h).
      StartRecordingMetrics();
      std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> counting;
      counting.push_back(NewRpcMetricsInterceptor());
      builder.experimental().SetInterceptorCreators(std::move(counting));
    }
    server_ = builder.BuildAndStart();
    if (server_ == nullptr) {  // gRPC logs why
      chunk_socket_.reset();
      return errors::Unavailable("Could not start gRPC server on ", bind);
    }
    if (Status accepting = task_port->Start(std::move(acceptor), chunk_socket_.get());
        !accepting.ok()) {
      server_->Shutdown();
      server_.reset();
      chunk_socket_.reset();
      return errors::Unavailable("Could not start gRPC server on ", bind, ": ",
                                 accepting.message());
    }
    return OkStatus();
  }

  // With ServerOptions::metrics_port: the HTTP metrics endpoint and this task's gauges.
  // Its error when the endpoint cannot start; the task port and servers are stopped then.
  Status StartMetricsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (options_.metrics_port < 0) return OkStatus();
    auto endpoint = MetricsEndpoint::Start(options_.bind_host, options_.metrics_port,
                                           [this] { return RenderMetrics(); });
    if (!endpoint.ok()) {
      task_port_.reset();
      server_->Shutdown();
      server_.reset();
      chunk_socket_.reset();
      return endpoint.status();
    }
    metrics_ = *std::move(endpoint);
    metrics_collector_ = Metrics().AddCollector(
        [this](std::vector<GaugeSample>* out) { CollectMetrics(out); }, this);
    return OkStatus();
  }

  // Makes the started server known: its addresses go to the LocalMaster registry (grpc://
  // sessions of this process reach its master directly), and the log says where it listens
  // and which files its graphs may touch, with a warning when anyone may reach it
  // without TLS.
  void AnnounceLocked(const std::string& bind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    local_addresses_ = {"localhost:" + std::to_string(port_), "127.0.0.1:" + std::to_string(port_),
                        TargetAddress(port_)};
    if (requested_port_ != 0) {
      if (auto own = cluster_.task_address(job_, task_); own.ok()) local_addresses_.push_back(*own);
    }
    local_master_ = std::make_shared<LocalMaster>(master_.get(), options_.tls);
    LocalMaster::Register(local_addresses_, local_master_);
    Log().info("started /job:{}/task:{} on {} (port {}, {})", job_, task_, bind, port_,
               options_.tls.enabled() ? "mutual TLS" : "insecure");
    Log().info("/job:{}/task:{}: graphs may read and write files in: {}", job_, task_,
               device_->file_access().DescribeDirectories());
    if (!IsLoopbackHost(options_.bind_host) && !options_.tls.enabled()) {
      // docs/security.md says what such a client can do; the warning names the worst of it.
      Log().warn(
          "listening on {} without TLS: anyone who can reach port {} can run any graph on "
          "this task, read and overwrite its variables and queues, use its CPU and memory, "
          "stop it (Shutdown), and read and write files in its allowed directories ({}); "
          "use mutual TLS (--tls-ca/--tls-cert/--tls-key) or bind to 127.0.0.1 "
          "(docs/security.md)",
          bind, port_, device_->file_access().DescribeDirectories());
    }
  }

  // The first reason wins: a stop requested by the cluster then runs Stop().
  void RecordStopReason(StopReason reason) {
    absl::MutexLock lock(&mu_);
    if (stop_reason_ == StopReason::kRunning) stop_reason_ = reason;
  }

  // Stops on a thread of its own (the caller may be a gRPC or watcher thread Stop waits for),
  // for `reason` unless a reason was recorded already.
  void StopSoon(StopReason reason) {
    RecordStopReason(reason);
    absl::MutexLock lock(&stop_thread_mu_);
    if (stop_thread_.joinable()) return;
    stop_thread_ = std::thread([this] { Stop(); });
  }

  // Polls the chief; stops this server once the chief, seen before, has not answered for
  // options_.stop_when_chief_unreachable.
  void WatchChief(const std::string& chief, const std::string& address) {
    auto stub = proto::WorkerService::NewStub(NewChannel(address, options_.tls));
    const absl::Duration limit = options_.stop_when_chief_unreachable;
    const absl::Duration poll = std::clamp(limit / 4, absl::Milliseconds(50), absl::Seconds(1));
    std::optional<absl::Time> last_seen;
    while (!watch_done_.WaitForNotificationWithTimeout(poll)) {
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + poll));
      proto::GetStatusRequest req;
      proto::GetStatusResponse resp;
      if (stub->GetStatus(&ctx, req, &resp).ok()) {
        if (!last_seen) {
          Log().info(
              "/job:{}/task:{}: the chief {} answered; this task stops if it does not "
              "answer for {}",
              job_, task_, chief, absl::FormatDuration(limit));
        }
        last_seen = absl::Now();
        absl::MutexLock lock(&mu_);
        chief_last_answered_ = *last_seen;
      } else if (last_seen && absl::Now() - *last_seen > limit) {
        Log().info("/job:{}/task:{}: the chief {} has not answered for {}; stopping", job_, task_,
                   chief, absl::FormatDuration(absl::Now() - *last_seen));
        StopSoon(StopReason::kChiefUnreachable);
        return;
      }
    }
  }

  void StartChiefWatch() {
    if (options_.stop_when_chief_unreachable == absl::InfiniteDuration()) return;
    const std::string chief_job =
        cluster_.HasJob("chief") ? "chief" : (cluster_.HasJob("worker") ? "worker" : "");
    if (chief_job.empty()) {
      Log().warn("stop_when_chief_unreachable is set but the cluster has no chief or worker job");
      return;
    }
    if (chief_job == job_ && task_ == 0) return;  // this task is the chief
    auto address = cluster_.task_address(chief_job, 0);
    if (!address.ok()) return;
    watcher_ = std::thread(
        [this, chief = DeviceName::TaskName(chief_job, 0), a = *address] { WatchChief(chief, a); });
  }

  const ClusterSpec cluster_;
  const std::string job_;
  const int task_;
  const int requested_port_;
  const ServerOptions options_;
  std::unique_ptr<CpuDevice> device_;
  std::unique_ptr<GrpcWorkerCache> worker_cache_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<Master> master_;
  ChunkStore chunks_;  // outlives the worker service and the chunk socket, which use it
  std::unique_ptr<grpc::Service> worker_service_, master_service_;
  mutable absl::Mutex mu_;
  // kNew until Start; kStopped after Stop, or after Join before any Start.
  enum class State { kNew, kStarted, kStopped };
  State state_ ABSL_GUARDED_BY(mu_) = State::kNew;
  std::unique_ptr<grpc::Server> server_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ChunkSocketServer> chunk_socket_ ABSL_GUARDED_BY(mu_);  // set by Start
  std::unique_ptr<TaskPort> task_port_ ABSL_GUARDED_BY(mu_);              // set by Start
  // With ServerOptions::metrics_port: set by Start, reset by Stop.
  std::unique_ptr<MetricsEndpoint> metrics_ ABSL_GUARDED_BY(mu_);
  MetricsRegistry::CollectorHandle metrics_collector_ ABSL_GUARDED_BY(mu_);
  // Set by Start, used by Stop (which runs after Start returned).
  std::vector<std::string> local_addresses_;
  std::shared_ptr<LocalMaster> local_master_;
  int port_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time chief_last_answered_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  StopReason stop_reason_ ABSL_GUARDED_BY(mu_) = StopReason::kRunning;
  absl::Notification stopped_;
  absl::Mutex stop_mu_;  // held for the whole of Stop()
  absl::Notification watch_done_;
  std::thread watcher_;  // WatchChief, started by Start, joined by Stop
  absl::Mutex stop_thread_mu_;
  std::thread stop_thread_ ABSL_GUARDED_BY(stop_thread_mu_);  // StopSoon's
};

// The options that set state of the whole process (docs/architecture.md, "Process-wide
// state"): shared memory and the buffer pool's size. A default value leaves the process's
// setting as it is, so servers that do not ask never undo what another one asked for.
Status ApplyProcessWideOptions(const ServerOptions& options) {
  if (!options.shared_memory) {
    if (Status s = shm::TurnOff(); !s.ok()) {
      return errors::FailedPrecondition("ServerOptions.shared_memory = false: ", s.message());
    }
  }
  if (options.buffer_pool_mb >= 0) {
    const uint64_t mb = std::min<uint64_t>(options.buffer_pool_mb, SIZE_MAX >> 20);
    BufferPool::Default()->SetMaxCachedBytes(static_cast<size_t>(mb) << 20);
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<Server>> Server::Create(const ClusterSpec& cluster, const std::string& job,
                                                 int task, const ServerOptions& options) {
  if (!cluster.HasJob(job))
    return errors::InvalidArgument("Job \"", job, "\" was not defined in cluster");
  auto address = cluster.task_address(job, task);
  if (!address.ok()) {
    return errors::InvalidArgument("Task ", task, " was not defined in job \"", job, "\"");
  }
  auto host_port = ParseHostPort(*address);
  if (!host_port.ok()) {
    return errors::InvalidArgument("Could not parse port for local server from \"", *address, "\"");
  }
  TW_RETURN_IF_ERROR(options.tls.Validate());
  if (options.metrics_port < -1 || options.metrics_port > 65535) {
    return errors::InvalidArgument("ServerOptions.metrics_port is ", options.metrics_port,
                                   ": -1 (no metrics), 0 (any free port) or a port up to 65535");
  }
  auto server = std::make_unique<GrpcServer>(cluster, job, task, host_port->port, options);
  TW_RETURN_IF_ERROR(server->Init());
  TW_RETURN_IF_ERROR(ApplyProcessWideOptions(options));
  return std::unique_ptr<Server>(std::move(server));
}

Status StopClusterServers(const ClusterSpec& cluster, const TlsOptions& tls,
                          absl::Duration timeout) {
  TW_RETURN_IF_ERROR(tls.Validate());
  return StopTasks(cluster, "", tls, timeout);
}

StatusOr<std::unique_ptr<Server>> Server::CreateLocal(const ServerOptions& options) {
  ClusterSpec cluster;
  TW_RETURN_IF_ERROR(cluster.AddJob("localhost", std::vector<std::string>{"localhost:0"}));
  ServerOptions local = options;
  if (local.bind_host == "0.0.0.0") local.bind_host = "127.0.0.1";  // a lone task has no peers
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Create(cluster, "localhost", 0, local));
  TW_RETURN_IF_ERROR(server->Start());
  return server;
}

}  // namespace tw
