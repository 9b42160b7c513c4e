#include <atomic>

#include "absl/synchronization/notification.h"
#include "src/base/logging.h"
#include "src/cluster/host_port.h"
#include "src/distributed/master.h"
#include "src/distributed/worker.h"
#include "src/rpc/grpc_services.h"
#include "src/rpc/grpc_tls.h"
#include "src/rpc/grpc_util.h"
#include "src/rpc/grpc_worker_cache.h"
#include "src/rpc/local_master.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/server.h"

namespace tw {
namespace {

class GrpcServer final : public Server {
 public:
  GrpcServer(ClusterSpec cluster, std::string job, int task, int port, ServerOptions options)
      : cluster_(std::move(cluster)),
        job_(std::move(job)),
        task_(task),
        requested_port_(port),
        options_(std::move(options)) {}

  ~GrpcServer() override { Stop(); }

  Status Init() {
    TW_ASSIGN_OR_RETURN(device_, CpuDevice::Create(DeviceName::Full(job_, 0, task_, "CPU", 0),
                                                   {.num_threads = options_.num_threads}));
    const std::string local_task = TaskName(job_, task_);
    worker_cache_ = std::make_unique<GrpcWorkerCache>(cluster_, local_task, options_.tls);
    worker_ = std::make_unique<Worker>(device_.get(), worker_cache_.get());
    worker_cache_->SetLocalWorker(worker_.get());
    MasterOptions master;
    master.local_device = device_->name();
    for (const std::string& job : cluster_.jobs()) {
      for (int index : cluster_.task_indices(job)) master.tasks.push_back(TaskName(job, index));
    }
    master.wait_for_cluster = options_.wait_for_cluster;
    master_ = std::make_unique<Master>(std::move(master), worker_cache_.get());
    return OkStatus();
  }

  Status Start() override {
    absl::MutexLock lock(&mu_);
    if (server_ != nullptr) return OkStatus();
    KeepFreedMemory();
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    const std::string bind = options_.bind_host + ":" + std::to_string(requested_port_);
    builder.AddListeningPort(bind, NewServerCredentials(options_.tls), &port_);
    builder.SetMaxReceiveMessageSize(-1);
    builder.SetMaxSendMessageSize(-1);
    worker_service_ = NewGrpcWorkerService(worker_.get());
    master_service_ = NewGrpcMasterService(master_.get(), options_.master_threads);
    builder.RegisterService(worker_service_.get());
    builder.RegisterService(master_service_.get());
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port_ == 0) {
      server_.reset();
      // gRPC checks the PEM text only here, and logs the reason itself.
      return errors::Unavailable("Could not start gRPC server on ", bind,
                                 options_.tls.enabled()
                                     ? " (check that the TLS certificate and key are valid PEM "
                                       "and belong together)"
                                     : "");
    }
    local_addresses_ = {"localhost:" + std::to_string(port_), "127.0.0.1:" + std::to_string(port_)};
    if (requested_port_ != 0) {
      if (auto own = cluster_.task_address(job_, task_); own.ok()) local_addresses_.push_back(*own);
    }
    local_master_ = std::make_shared<LocalMaster>(master_.get(), options_.tls);
    LocalMaster::Register(local_addresses_, local_master_);
    Log().info("started /job:{}/task:{} on {} (port {}, {})", job_, task_, bind, port_,
               options_.tls.enabled() ? "mutual TLS" : "insecure");
    const std::string& host = options_.bind_host;
    const bool loopback =
        host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]";
    if (!loopback && !options_.tls.enabled()) {
      Log().warn(
          "listening on {} without TLS: anyone who can reach port {} can run graphs on "
          "this task",
          bind, port_);
    }
    return OkStatus();
  }

  void Join() override { stopped_.WaitForNotification(); }

  void Stop() override {
    std::unique_ptr<grpc::Server> server;
    {
      absl::MutexLock lock(&mu_);
      server = std::move(server_);
    }
    if (server != nullptr) {
      LocalMaster::Unregister(local_addresses_);
      // Sessions first: their steps may wait on other tasks, which no shutdown here ends.
      master_->CloseAllSessions();
      local_master_->Detach();
      // Cancels in-flight calls (their reactors cancel the steps) after a short grace.
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
      server->Wait();
    }
    if (!stopped_.HasBeenNotified()) stopped_.Notify();
  }

  std::string target() const override { return "grpc://localhost:" + std::to_string(port()); }
  int port() const override {
    absl::MutexLock lock(&mu_);
    return port_;
  }

 private:
  const ClusterSpec cluster_;
  const std::string job_;
  const int task_;
  const int requested_port_;
  const ServerOptions options_;
  std::unique_ptr<CpuDevice> device_;
  std::unique_ptr<GrpcWorkerCache> worker_cache_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<grpc::Service> worker_service_, master_service_;
  mutable absl::Mutex mu_;
  std::unique_ptr<grpc::Server> server_ ABSL_GUARDED_BY(mu_);
  // Set by Start, used by Stop (which runs after Start returned).
  std::vector<std::string> local_addresses_;
  std::shared_ptr<LocalMaster> local_master_;
  int port_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Notification stopped_;
};

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
  auto server = std::make_unique<GrpcServer>(cluster, job, task, host_port->port, options);
  TW_RETURN_IF_ERROR(server->Init());
  return std::unique_ptr<Server>(std::move(server));
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
