#include "src/rpc/grpc_worker_cache.h"

#include "src/rpc/grpc_util.h"
#include "tensorweave/device_name.h"
#include "tensorweave/protobuf/service.grpc.pb.h"

namespace tw {

std::string TaskName(const std::string& job, int task) {
  return "/job:" + job + "/replica:0/task:" + std::to_string(task);
}

namespace {

// WorkerInterface over gRPC: each call is one unary RPC with gRPC's callback API.
class GrpcRemoteWorker final : public WorkerInterface {
 public:
  explicit GrpcRemoteWorker(std::shared_ptr<grpc::Channel> channel)
      : stub_(proto::WorkerService::NewStub(std::move(channel))) {}

  void GetStatusAsync(const proto::GetStatusRequest* req, proto::GetStatusResponse* resp,
                      StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->GetStatus(ctx, req, resp, std::move(cb));
        },
        nullptr, std::move(done));
  }
  void RegisterGraphAsync(const proto::RegisterGraphRequest* req,
                          proto::RegisterGraphResponse* resp, StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->RegisterGraph(ctx, req, resp, std::move(cb));
        },
        nullptr, std::move(done));
  }
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest* req,
                            proto::DeregisterGraphResponse* resp, StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->DeregisterGraph(ctx, req, resp, std::move(cb));
        },
        nullptr, std::move(done));
  }
  void RunGraphAsync(const proto::RunGraphRequest* req, proto::RunGraphResponse* resp,
                     CancellationManager* cm, StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->RunGraph(ctx, req, resp, std::move(cb));
        },
        cm, std::move(done));
  }
  void RecvTensorAsync(const proto::RecvTensorRequest* req, proto::RecvTensorResponse* resp,
                       CancellationManager* cm, StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->RecvTensor(ctx, req, resp, std::move(cb));
        },
        cm, std::move(done));
  }
  void CleanupGraphAsync(const proto::CleanupGraphRequest* req, proto::CleanupGraphResponse* resp,
                         StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->CleanupGraph(ctx, req, resp, std::move(cb));
        },
        nullptr, std::move(done));
  }
  void CleanupAllAsync(const proto::CleanupAllRequest* req, proto::CleanupAllResponse* resp,
                       StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->CleanupAll(ctx, req, resp, std::move(cb));
        },
        nullptr, std::move(done));
  }

 private:
  // One RPC; a cancellation of `cm` cancels it.
  // `start(context, callback)` issues the RPC.
  template <typename Start>
  void Call(Start start, CancellationManager* cm, StatusCallback done) {
    struct State {
      grpc::ClientContext context;
      CancellationManager* cm = nullptr;
      CancellationManager::Token token = 0;
      StatusCallback done;
    };
    // Shared with the cancellation callback, which may run while the RPC completes.
    auto state = std::make_shared<State>();
    state->cm = cm;
    state->done = std::move(done);
    if (cm != nullptr) {
      state->token = cm->NewToken();
      if (!cm->RegisterCallback(state->token, [state] { state->context.TryCancel(); })) {
        state->done(errors::Cancelled("the step was cancelled"));
        return;
      }
    }
    start(&state->context, [state](grpc::Status s) {
      if (state->cm != nullptr) state->cm->DeregisterCallback(state->token);
      StatusCallback cb = std::move(state->done);
      cb(FromGrpcStatus(s));
    });
  }

  std::unique_ptr<proto::WorkerService::Stub> stub_;
};

}  // namespace

GrpcWorkerCache::GrpcWorkerCache(ClusterSpec cluster, std::string local_task)
    : cluster_(std::move(cluster)), local_task_(std::move(local_task)) {}

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
  auto worker = std::make_unique<GrpcRemoteWorker>(NewChannel(address));
  WorkerInterface* raw = worker.get();
  remote_[task] = std::move(worker);
  return raw;
}

}  // namespace tw
