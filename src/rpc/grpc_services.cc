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
// cancellation (the caller gave up or disconnected, or the server stops) cancels the call's
// work through a CancellationManager.
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

// Serves a method whose request and response are plain protos. Every method takes raw bytes
// and parses them here: gRPC's typed handlers answer a request that does not parse with
// UNIMPLEMENTED, which a client cannot tell from a missing method; this answers
// InvalidArgument "message does not parse as tw.proto.<Request>". `method(request, response,
// cm, done)` calls `done` exactly once, on any thread.
template <typename Request, typename Response, typename Method>
grpc::ServerUnaryReactor* ServeProto(const grpc::ByteBuffer* req, grpc::ByteBuffer* resp,
                                     Method method) {
  auto* r = new CancellableReactor<Request, Response>();
  if (Status s = DecodeProto(*req, &r->args); !s.ok()) {
    r->Done(s);
    return r;
  }
  method(&r->args, &r->result, r->cm(), [r, resp](const Status& s) {
    if (s.ok()) *resp = EncodeProto(r->result);
    r->Done(s);
  });
  return r;
}

// Every method raw: tensor-carrying ones decode tensors without copies
// (src/rpc/tensor_wire.h), the others go through ServeProto.
template <typename Base>
using RawWorkerMethods = proto::WorkerService::WithRawCallbackMethod_GetStatus<
    proto::WorkerService::WithRawCallbackMethod_RegisterGraph<
        proto::WorkerService::WithRawCallbackMethod_DeregisterGraph<
            proto::WorkerService::WithRawCallbackMethod_RunGraph<
                proto::WorkerService::WithRawCallbackMethod_RecvTensor<
                    proto::WorkerService::WithRawCallbackMethod_CleanupGraph<
                        proto::WorkerService::WithRawCallbackMethod_CleanupAll<
                            proto::WorkerService::WithRawCallbackMethod_Shutdown<
                                proto::WorkerService::WithRawCallbackMethod_PutChunk<
                                    proto::WorkerService::WithRawCallbackMethod_RecvChunk<
                                        Base>>>>>>>>>>;
using WorkerServiceBase = RawWorkerMethods<proto::WorkerService::Service>;
using MasterServiceBase = proto::MasterService::WithRawCallbackMethod_CreateSession<
    proto::MasterService::WithRawCallbackMethod_ExtendSession<
        proto::MasterService::WithRawCallbackMethod_RunStep<
            proto::MasterService::WithRawCallbackMethod_CloseSession<
                proto::MasterService::WithRawCallbackMethod_ListDevices<
                    proto::MasterService::WithRawCallbackMethod_Reset<
                        proto::MasterService::Service>>>>>>;

class WorkerServiceImpl final : public WorkerServiceBase {
 public:
  WorkerServiceImpl(Worker* worker, ChunkStore* chunks, int chunk_port,
                    std::function<void(const std::string&)> on_shutdown)
      : worker_(worker),
        chunks_(*chunks),
        chunk_port_(chunk_port),
        on_shutdown_(std::move(on_shutdown)) {}

  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                      grpc::ByteBuffer* resp) override {
    return ServeProto<proto::GetStatusRequest, proto::GetStatusResponse>(
        req, resp, [this](auto* rq, auto* rs, auto*, auto done) {
          worker_->GetStatusAsync(rq, rs, std::move(done));
        });
  }
  grpc::ServerUnaryReactor* RegisterGraph(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                          grpc::ByteBuffer* resp) override {
    return ServeProto<proto::RegisterGraphRequest, proto::RegisterGraphResponse>(
        req, resp, [this](auto* rq, auto* rs, auto*, auto done) {
          rs->set_chunk_port(static_cast<uint32_t>(chunk_port_));
          worker_->RegisterGraphAsync(rq, rs, std::move(done));
        });
  }
  grpc::ServerUnaryReactor* DeregisterGraph(grpc::CallbackServerContext*,
                                            const grpc::ByteBuffer* req,
                                            grpc::ByteBuffer* resp) override {
    return ServeProto<proto::DeregisterGraphRequest, proto::DeregisterGraphResponse>(
        req, resp, [this](auto* rq, auto* rs, auto*, auto done) {
          worker_->DeregisterGraphAsync(rq, rs, std::move(done));
        });
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
                        .chunk_port = chunk_port_,
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
  grpc::ServerUnaryReactor* CleanupGraph(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                         grpc::ByteBuffer* resp) override {
    return ServeProto<proto::CleanupGraphRequest, proto::CleanupGraphResponse>(
        req, resp, [this](auto* rq, auto* rs, auto*, auto done) {
          worker_->CleanupGraphAsync(rq, rs, std::move(done));
        });
  }
  grpc::ServerUnaryReactor* CleanupAll(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                       grpc::ByteBuffer* resp) override {
    return ServeProto<proto::CleanupAllRequest, proto::CleanupAllResponse>(
        req, resp, [this](auto* rq, auto* rs, auto*, auto done) {
          worker_->CleanupAllAsync(rq, rs, std::move(done));
        });
  }
  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                     grpc::ByteBuffer* resp) override {
    return ServeProto<proto::ShutdownRequest, proto::ShutdownResponse>(
        req, resp, [this](auto* rq, auto*, auto*, auto done) {
          const std::string by = rq->requested_by();
          done(OkStatus());  // the reply goes out before the server stops
          on_shutdown_(by);
        });
  }

 private:
  Worker* const worker_;
  ChunkStore& chunks_;    // large tensors of RunGraph calls in flight
  const int chunk_port_;  // of the server's chunk socket, 0 for none
  const std::function<void(const std::string&)> on_shutdown_;
};

class MasterServiceImpl final : public MasterServiceBase {
 public:
  MasterServiceImpl(Master* master, int threads) : master_(master), pool_(threads) {}

  // Validating the graph takes the pool; the wait for the cluster then holds no thread, and
  // ends when the client cancels (its deadline passes, it disconnects) or the server stops.
  grpc::ServerUnaryReactor* CreateSession(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                          grpc::ByteBuffer* resp) override {
    return ServeProto<proto::CreateSessionRequest, proto::CreateSessionResponse>(
        req, resp, [this](auto* rq, auto* rs, auto* cm, auto done) {
          pool_.Schedule([this, rq, rs, cm, done = std::move(done)]() mutable {
            master_->CreateSessionAsync(rq, rs, cm, std::move(done));
          });
        });
  }
  grpc::ServerUnaryReactor* ExtendSession(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                          grpc::ByteBuffer* resp) override {
    return OnPool<proto::ExtendSessionRequest, proto::ExtendSessionResponse>(
        req, resp, [this](const auto& rq, auto*) { return master_->ExtendSession(rq); });
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
      master_->RunStepAsync(&r->args, &r->result, r->cm(), [r, resp](const Status& s) {
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
  grpc::ServerUnaryReactor* CloseSession(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                         grpc::ByteBuffer* resp) override {
    return OnPool<proto::CloseSessionRequest, proto::CloseSessionResponse>(
        req, resp, [this](const auto& rq, auto*) { return master_->CloseSession(rq); });
  }
  grpc::ServerUnaryReactor* ListDevices(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                        grpc::ByteBuffer* resp) override {
    return OnPool<proto::ListDevicesRequest, proto::ListDevicesResponse>(
        req, resp, [this](const auto& rq, auto* rs) { return master_->ListDevices(rq, rs); });
  }
  grpc::ServerUnaryReactor* Reset(grpc::CallbackServerContext*, const grpc::ByteBuffer* req,
                                  grpc::ByteBuffer* resp) override {
    return OnPool<proto::ResetRequest, proto::ResetResponse>(
        req, resp, [this](const auto& rq, auto*) { return master_->Reset(rq); });
  }

 private:
  // A synchronous master method, run on the pool: it may talk to workers and wait.
  template <typename Request, typename Response, typename Fn>
  grpc::ServerUnaryReactor* OnPool(const grpc::ByteBuffer* req, grpc::ByteBuffer* resp, Fn fn) {
    return ServeProto<Request, Response>(
        req, resp, [this, fn](auto* rq, auto* rs, auto*, auto done) {
          pool_.Schedule([fn, rq, rs, done = std::move(done)] { done(fn(*rq, rs)); });
        });
  }

  Master* const master_;
  Eigen::ThreadPool pool_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewGrpcWorkerService(
    Worker* worker, ChunkStore* chunks, int chunk_port,
    std::function<void(const std::string&)> on_shutdown) {
  return std::make_unique<WorkerServiceImpl>(worker, chunks, chunk_port, std::move(on_shutdown));
}

std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master, int threads) {
  return std::make_unique<MasterServiceImpl>(master, threads);
}

}  // namespace tw

#pragma GCC diagnostic pop
