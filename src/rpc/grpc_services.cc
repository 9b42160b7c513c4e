// gRPC's generated WithRawCallbackMethod_* classes declare a byte-buffer overload of the
// method they replace; clang's -Woverloaded-virtual flags that (in the generated header),
// though hiding the typed overload is exactly the intent. The pragma has to be in force
// where the generated header is read, hence before every include.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
#include "src/rpc/grpc_services.h"

#define EIGEN_USE_THREADS
#include "src/rpc/grpc_util.h"
#include "src/rpc/shared_memory.h"
#include "src/rpc/tensor_chunks.h"
#include "src/rpc/tensor_wire.h"
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace tw {
namespace {

// A unary reactor that owns the call's decoded arguments and result, and whose RPC
// cancellation (the caller gave up, or the server stops) cancels the call's work through a
// CancellationManager.
template <typename Args, typename Result>
class CancellableReactor final : public grpc::ServerUnaryReactor {
 public:
  Args args;
  Result result;
  CancellationManager* cm() { return &cm_; }
  void Done(const Status& s) { Finish(ToGrpcStatus(s)); }
  void OnCancel() override { cm_.StartCancel(); }
  void OnDone() override { delete this; }

 private:
  CancellationManager cm_;
};

// Tensor-carrying methods take raw byte buffers (src/rpc/tensor_wire.h).
using WorkerServiceBase = proto::WorkerService::WithRawCallbackMethod_RunGraph<
    proto::WorkerService::WithRawCallbackMethod_RecvTensor<
        proto::WorkerService::WithRawCallbackMethod_PutChunk<
            proto::WorkerService::WithRawCallbackMethod_RecvChunk<
                proto::WorkerService::CallbackService>>>>;
using MasterServiceBase =
    proto::MasterService::WithRawCallbackMethod_RunStep<proto::MasterService::CallbackService>;

class WorkerServiceImpl final : public WorkerServiceBase {
 public:
  WorkerServiceImpl(Worker* worker, std::function<void(const std::string&)> on_shutdown)
      : worker_(worker), on_shutdown_(std::move(on_shutdown)) {}

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
  grpc::ServerUnaryReactor* RunGraph(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                     grpc::ByteBuffer* resp) override {
    auto* r = new CancellableReactor<RunGraphArgs, RunGraphResult>();
    std::vector<ChunkedTensor> chunked;
    if (Status s = DecodeRunGraphArgs(*req, &r->args, &chunked); !s.ok()) {
      r->Done(s);
      return r;
    }
    const int64_t step = r->args.proto.step_id();
    // Large feeds arrived as chunks (PutChunk) before this request.
    for (const ChunkedTensor& c : chunked) {
      NamedTensor& feed = r->args.send[c.index];
      auto tensor = chunks_.TakePut(step, feed.name);
      if (!tensor.ok()) {
        r->Done(tensor.status());
        return r;
      }
      feed.tensor = *std::move(tensor);
    }
    worker_->RunGraphAsync(&r->args, &r->result, r->cm(), [this, r, resp, step](const Status& s) {
      if (s.ok()) {
        std::vector<size_t> chunked_fetches;
        *resp = EncodeRunGraphResult(
            r->result, {.chunk_large = true,
                        .shared_memory = shm::SameHost(r->args.proto.shared_memory_host()),
                        .chunked = &chunked_fetches});
        // Large fetches not in shared memory wait here for the caller's RecvChunk calls.
        for (size_t i : chunked_fetches) {
          const NamedTensor& t = r->result.recv[i];
          chunks_.Offer(step, t.name, t.tensor);
        }
      }
      r->Done(s);
    });
    return r;
  }
  grpc::ServerUnaryReactor* PutChunk(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
                                     grpc::ByteBuffer* resp) override {
    auto* r = ctx->DefaultReactor();
    proto::TensorChunk chunk;
    TensorMessageReader reader;
    Status s = reader.Open(*req, &chunk);
    if (s.ok()) {
      s = chunks_.Put(chunk, reader.remaining(),
                      [&reader](void* dst, size_t n) { return reader.ReadBytes(dst, n); });
    }
    if (s.ok()) s = reader.Finish();
    if (s.ok()) *resp = EncodeProto(proto::TensorChunkAck());
    r->Finish(ToGrpcStatus(s));
    return r;
  }
  grpc::ServerUnaryReactor* RecvChunk(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
                                      grpc::ByteBuffer* resp) override {
    auto* r = ctx->DefaultReactor();
    proto::TensorChunk chunk;
    Status s = DecodeProto(*req, &chunk);
    StatusOr<Tensor> tensor = s.ok() ? chunks_.Serve(chunk) : StatusOr<Tensor>(s);
    if (tensor.ok()) {
      *resp = EncodeBytesMessage(proto::TensorChunkAck(), *tensor, chunk.offset(), chunk.length());
    }
    r->Finish(ToGrpcStatus(tensor.status()));
    return r;
  }
  grpc::ServerUnaryReactor* RecvTensor(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                       grpc::ByteBuffer* resp) override {
    auto* r = new CancellableReactor<RecvTensorArgs, RecvTensorResult>();
    if (Status s = DecodeRecvTensorArgs(*req, &r->args); !s.ok()) {
      r->Done(s);
      return r;
    }
    worker_->RecvTensorAsync(&r->args, &r->result, r->cm(), [r, resp](const Status& s) {
      if (s.ok()) {
        *resp =
            EncodeRecvTensorResult(r->result, shm::SameHost(r->args.proto.shared_memory_host()));
      }
      r->Done(s);
    });
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

  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* ctx,
                                     const proto::ShutdownRequest* req,
                                     proto::ShutdownResponse*) override {
    auto* r = ctx->DefaultReactor();
    r->Finish(grpc::Status::OK);
    on_shutdown_(req->requested_by());
    return r;
  }

 private:
  Worker* const worker_;
  const std::function<void(const std::string&)> on_shutdown_;
  ChunkStore chunks_;  // large tensors of RunGraph calls in flight
};

class MasterServiceImpl final : public MasterServiceBase {
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
  // A step whose partitions are registered starts on the calling gRPC thread and holds no
  // thread while it runs; the first step of a signature registers them on the pool.
  grpc::ServerUnaryReactor* RunStep(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                    grpc::ByteBuffer* resp) override {
    auto* r = new CancellableReactor<RunStepArgs, RunStepResult>();
    if (Status s = DecodeRunStepArgs(*req, &r->args); !s.ok()) {
      r->Done(s);
      return r;
    }
    auto start = [this, r, resp] {
      master_->RunStepAsync(&r->args, &r->result, [r, resp](const Status& s) {
        if (s.ok()) *resp = EncodeRunStepResult(r->result);
        r->Done(s);
      });
    };
    if (master_->IsPrepared(r->args)) {
      start();
    } else {
      pool_.Schedule(std::move(start));
    }
    return r;
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

std::unique_ptr<grpc::Service> NewGrpcWorkerService(
    Worker* worker, std::function<void(const std::string&)> on_shutdown) {
  return std::make_unique<WorkerServiceImpl>(worker, std::move(on_shutdown));
}

std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master, int threads) {
  return std::make_unique<MasterServiceImpl>(master, threads);
}

}  // namespace tw

#pragma GCC diagnostic pop
