#include "src/rpc/grpc_services.h"

#define EIGEN_USE_THREADS
#include "src/rpc/grpc_util.h"
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace tw {
namespace {

// A unary reactor whose RPC cancellation (the caller gave up, or the server stops) cancels
// the call's work through a CancellationManager.
class CancellableReactor final : public grpc::ServerUnaryReactor {
 public:
  CancellationManager* cm() { return &cm_; }
  void Done(const Status& s) { Finish(ToGrpcStatus(s)); }
  void OnCancel() override { cm_.StartCancel(); }
  void OnDone() override { delete this; }

 private:
  CancellationManager cm_;
};

class WorkerServiceImpl final : public proto::WorkerService::CallbackService {
 public:
  explicit WorkerServiceImpl(Worker* worker) : worker_(worker) {}

  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* ctx,
                                      const proto::GetStatusRequest* req,
                                      proto::GetStatusResponse* resp) override {
    auto* r = ctx->DefaultReactor();
    worker_->GetStatusAsync(req, resp, [r](const Status& s) { r->Finish(ToGrpcStatus(s)); });
    return r;
  }
  grpc::ServerUnaryReactor* RegisterGraph(grpc::CallbackServerContext* ctx,
                                          const proto::RegisterGraphRequest* req,
                                          proto::RegisterGraphResponse* resp) override {
    auto* r = ctx->DefaultReactor();
    worker_->RegisterGraphAsync(req, resp, [r](const Status& s) { r->Finish(ToGrpcStatus(s)); });
    return r;
  }
  grpc::ServerUnaryReactor* DeregisterGraph(grpc::CallbackServerContext* ctx,
                                            const proto::DeregisterGraphRequest* req,
                                            proto::DeregisterGraphResponse* resp) override {
    auto* r = ctx->DefaultReactor();
    worker_->DeregisterGraphAsync(req, resp, [r](const Status& s) { r->Finish(ToGrpcStatus(s)); });
    return r;
  }
  grpc::ServerUnaryReactor* RunGraph(grpc::CallbackServerContext*,
                                     const proto::RunGraphRequest* req,
                                     proto::RunGraphResponse* resp) override {
    auto* r = new CancellableReactor();
    worker_->RunGraphAsync(req, resp, r->cm(), [r](const Status& s) { r->Done(s); });
    return r;
  }
  grpc::ServerUnaryReactor* RecvTensor(grpc::CallbackServerContext*,
                                       const proto::RecvTensorRequest* req,
                                       proto::RecvTensorResponse* resp) override {
    auto* r = new CancellableReactor();
    worker_->RecvTensorAsync(req, resp, r->cm(), [r](const Status& s) { r->Done(s); });
    return r;
  }
  grpc::ServerUnaryReactor* CleanupGraph(grpc::CallbackServerContext* ctx,
                                         const proto::CleanupGraphRequest* req,
                                         proto::CleanupGraphResponse* resp) override {
    auto* r = ctx->DefaultReactor();
    worker_->CleanupGraphAsync(req, resp, [r](const Status& s) { r->Finish(ToGrpcStatus(s)); });
    return r;
  }
  grpc::ServerUnaryReactor* CleanupAll(grpc::CallbackServerContext* ctx,
                                       const proto::CleanupAllRequest* req,
                                       proto::CleanupAllResponse* resp) override {
    auto* r = ctx->DefaultReactor();
    worker_->CleanupAllAsync(req, resp, [r](const Status& s) { r->Finish(ToGrpcStatus(s)); });
    return r;
  }

 private:
  Worker* const worker_;
};

class MasterServiceImpl final : public proto::MasterService::CallbackService {
 public:
  MasterServiceImpl(Master* master, int threads) : master_(master), pool_(threads) {}

  grpc::ServerUnaryReactor* CreateSession(grpc::CallbackServerContext* ctx,
                                          const proto::CreateSessionRequest* req,
                                          proto::CreateSessionResponse* resp) override {
    return Run(ctx, [=, this] { return master_->CreateSession(*req, resp); });
  }
  grpc::ServerUnaryReactor* ExtendSession(grpc::CallbackServerContext* ctx,
                                          const proto::ExtendSessionRequest* req,
                                          proto::ExtendSessionResponse*) override {
    return Run(ctx, [=, this] { return master_->ExtendSession(*req); });
  }
  grpc::ServerUnaryReactor* RunStep(grpc::CallbackServerContext* ctx,
                                    const proto::RunStepRequest* req,
                                    proto::RunStepResponse* resp) override {
    return Run(ctx, [=, this] { return master_->RunStep(*req, resp); });
  }
  grpc::ServerUnaryReactor* CloseSession(grpc::CallbackServerContext* ctx,
                                         const proto::CloseSessionRequest* req,
                                         proto::CloseSessionResponse*) override {
    return Run(ctx, [=, this] { return master_->CloseSession(*req); });
  }
  grpc::ServerUnaryReactor* ListDevices(grpc::CallbackServerContext* ctx,
                                        const proto::ListDevicesRequest* req,
                                        proto::ListDevicesResponse* resp) override {
    return Run(ctx, [=, this] { return master_->ListDevices(*req, resp); });
  }
  grpc::ServerUnaryReactor* Reset(grpc::CallbackServerContext* ctx, const proto::ResetRequest* req,
                                  proto::ResetResponse*) override {
    return Run(ctx, [=, this] { return master_->Reset(*req); });
  }

 private:
  template <typename Fn>
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* ctx, Fn fn) {
    auto* r = ctx->DefaultReactor();
    pool_.Schedule([r, fn] { r->Finish(ToGrpcStatus(fn())); });
    return r;
  }

  Master* const master_;
  Eigen::ThreadPool pool_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewGrpcWorkerService(Worker* worker) {
  return std::make_unique<WorkerServiceImpl>(worker);
}

std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master, int threads) {
  return std::make_unique<MasterServiceImpl>(master, threads);
}

}  // namespace tw
