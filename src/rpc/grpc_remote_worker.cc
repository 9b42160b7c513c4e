#include "src/rpc/grpc_remote_worker.h"

#include <atomic>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grpcpp/generic/generic_stub.h"
#include "src/rpc/chunk_transfer.h"
#include "src/rpc/grpc_util.h"
#include "src/rpc/shared_memory.h"
#include "src/rpc/tensor_wire.h"
#include "tensorweave/protobuf/service.grpc.pb.h"

namespace tw {
namespace {

// The WorkerInterface of src/rpc/grpc_remote_worker.h.
class GrpcRemoteWorker final : public WorkerInterface {
 public:
  GrpcRemoteWorker(std::shared_ptr<grpc::Channel> channel,
                   const std::vector<std::shared_ptr<grpc::Channel>>& chunk_channels,
                   std::string host)
      : stub_(proto::WorkerService::NewStub(channel)),
        raw_(std::move(channel)),
        chunks_(std::move(host), chunk_channels,
                [this](const char* method, grpc::ByteBuffer request, ChunkTransfer::Decode decode,
                       CancellationManager* cm, StatusCallback done, grpc::GenericStub* stub) {
                  RawCall(method, std::move(request), std::move(decode), cm, std::move(done), stub);
                }) {}

  // Calls still in flight complete into this object (their callbacks read its stub and
  // state, and may start the next call of a chunked transfer): cancel them and wait until
  // every one has completed. Cancelled calls complete promptly.
  ~GrpcRemoteWorker() override {
    // Chunks on chunk sockets first: their completions may start gRPC calls (a chunk's
    // fallback, RunGraph after its chunks), which the cancellations below then end.
    chunks_.Close();
    std::vector<std::shared_ptr<grpc::ClientContext>> in_flight;
    {
      absl::MutexLock lock(&calls_mu_);
      closing_ = true;  // a call a completion starts from now on is cancelled at once
      for (const auto& [context, owner] : calls_) in_flight.push_back(owner);
    }
    // Outside the lock: a cancelled call may complete on this thread.
    for (const auto& context : in_flight) context->TryCancel();
    in_flight.clear();
    absl::MutexLock lock(&calls_mu_);
    calls_mu_.Await(absl::Condition(
        +[](CallSet* calls) { return calls->empty(); }, &calls_));
  }

  // Fails fast even before the peer has answered: it is how a cluster wait (and a ps
  // watching its chief) probes whether the peer is up, and they retry it themselves.
  void GetStatusAsync(const proto::GetStatusRequest* req, proto::GetStatusResponse* resp,
                      StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->GetStatus(ctx, req, resp, std::move(cb));
        },
        nullptr, std::move(done), /*wait_for_first_contact=*/false);
  }
  void RegisterGraphAsync(const proto::RegisterGraphRequest* req,
                          proto::RegisterGraphResponse* resp, StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->RegisterGraph(ctx, req, resp, std::move(cb));
        },
        nullptr,
        [this, resp, done = std::move(done)](const Status& s) {
          // The first step's large feeds go before its first RunGraph reply.
          if (s.ok()) chunks_.LearnPort(static_cast<int>(resp->chunk_port() & 0xffff));
          done(s);
        });
  }
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest* req,
                            proto::DeregisterGraphResponse* resp, StatusCallback done) override {
    Call(
        [this, req, resp](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub_->async()->DeregisterGraph(ctx, req, resp, std::move(cb));
        },
        nullptr, std::move(done));
  }
  // Feeds go in shared memory when the server is on this host (learned from its earlier
  // replies); otherwise large ones go first as chunks (PutChunk, all at once), then the
  // RunGraph call. Large fetches come back in shared memory or marked chunked, and are then
  // pulled with RecvChunk into their tensors.
  // No deadline of its own: the master's step timeout cancels `cm`.
  void RunGraphAsync(const RunGraphArgs* req, RunGraphResult* resp, CancellationManager* cm,
                     StatusCallback done) override {
    std::vector<size_t> chunked_feeds;
    std::string key = PeerKey();
    grpc::ByteBuffer request = EncodeRunGraphArgs(*req, {.chunk_large = true,
                                                         .shared_memory = !key.empty(),
                                                         .shared_memory_key = std::move(key),
                                                         .chunked = &chunked_feeds});
    auto run = [this, req, resp, cm, done, request = std::move(request)]() mutable {
      auto chunked = std::make_shared<std::vector<ChunkedTensor>>();
      RawCall(
          "/tw.proto.WorkerService/RunGraph", std::move(request),
          [this, resp, chunked](const grpc::ByteBuffer& reply) {
            std::string peer_host;
            proto::SharedMemoryKeyRef peer_key;
            int chunk_port = 0;
            Status s = DecodeRunGraphResult(reply, resp, chunked.get(), &peer_host, &peer_key,
                                            &chunk_port);
            LearnPeer(peer_host, peer_key);
            if (s.ok()) chunks_.LearnPort(chunk_port);
            return s;
          },
          cm,
          [this, req, resp, chunked, cm, done](const Status& s) {
            if (!s.ok() || chunked->empty()) {
              done(s);
              return;
            }
            chunks_.Pull(req->proto.step_id(), *chunked, resp, cm, done);
          });
    };
    if (chunked_feeds.empty()) {
      run();
      return;
    }
    std::vector<const NamedTensor*> large;
    for (size_t i : chunked_feeds) large.push_back(&req->send[i]);
    chunks_.Push(req->proto.step_id(), large, cm,
                 [run = std::move(run), done](const Status& s) mutable {
                   if (s.ok()) {
                     run();
                   } else {
                     done(s);
                   }
                 });
  }
  // Pushed tensors go in shared memory when the server is on this host (learned from its
  // earlier replies).
  void RecvTensorAsync(const RecvTensorArgs* req, RecvTensorResult* resp, CancellationManager* cm,
                       StatusCallback done) override {
    std::string key = PeerKey();
    const bool shared = !key.empty();
    RawCall(
        "/tw.proto.WorkerService/RecvTensor",
        EncodeRecvTensorArgs(*req, {.shared_memory = shared, .shared_memory_key = std::move(key)}),
        [this, resp](const grpc::ByteBuffer& reply) {
          std::string peer_host;
          proto::SharedMemoryKeyRef peer_key;
          Status s = DecodeRecvTensorResult(reply, resp, &peer_host, &peer_key);
          if (s.ok()) {
            LearnPeer(peer_host, peer_key);
          } else {
            LearnPeer("", {});
          }
          return s;
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
  //
  // Until the peer has answered once, a call waits for its connection (gRPC's
  // wait_for_ready) instead of failing at the first connection error: a step runs only
  // after its master has seen every task answer, so a peer this task has not reached yet
  // is one whose connection is still coming up (a handshake that timed out on a loaded
  // machine while the cluster starts: "timed out before receiving SETTINGS frame"), not a
  // dead one. No request is sent before the connection is ready, so nothing runs twice; the
  // step's cancellation (its timeout, its abort when a task is lost) and this object's
  // destruction end the wait. Once the peer has answered, calls fail fast with Unavailable.
  template <typename Start>
  void Call(Start start, CancellationManager* cm, StatusCallback done,
            bool wait_for_first_contact = true) {
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
    if (wait_for_first_contact && !answered_.load(std::memory_order_acquire)) {
      state->context.set_wait_for_ready(true);
    }
    {
      absl::MutexLock lock(&calls_mu_);
      calls_.emplace(&state->context, std::shared_ptr<grpc::ClientContext>(state, &state->context));
      // The destructor waits for this call: it must end (a call issued after the
      // destructor's cancellations, e.g. RunGraph after its chunks, would not).
      if (closing_) state->context.TryCancel();
    }
    start(&state->context, [this, state](grpc::Status s) {
      if (PeerAnswered(s)) answered_.store(true, std::memory_order_release);
      if (state->cm != nullptr) state->cm->DeregisterCallback(state->token);
      StatusCallback cb = std::move(state->done);
      cb(FromGrpcStatus(s));
      // Last: the destructor may go on once this call is out of the set.
      absl::MutexLock lock(&calls_mu_);
      calls_.erase(&state->context);
    });
  }

  // Whether a call's status came from the peer (a reply, or an error it returned) rather
  // than from the connection or this side.
  static bool PeerAnswered(const grpc::Status& s) {
    switch (s.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
      case grpc::StatusCode::CANCELLED:
      case grpc::StatusCode::DEADLINE_EXCEEDED:
      case grpc::StatusCode::UNKNOWN:
        return false;
      default:
        return true;
    }
  }

  // A call of a method whose messages carry tensors (src/rpc/tensor_wire.h): `decode` reads
  // the reply.
  template <typename Decode>
  void RawCall(const char* method, grpc::ByteBuffer request, Decode decode, CancellationManager* cm,
               StatusCallback done, grpc::GenericStub* stub = nullptr) {
    if (stub == nullptr) stub = &raw_;
    struct Buffers {
      grpc::ByteBuffer request, reply;
    };
    auto buffers = std::make_shared<Buffers>();
    buffers->request = std::move(request);
    Call(
        [stub, method, buffers](grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
          stub->UnaryCall(ctx, method, grpc::StubOptions(), &buffers->request, &buffers->reply,
                          std::move(cb));
        },
        cm,
        [this, buffers, decode, done = std::move(done)](const Status& s) {
          // The request's tensors are sent: release them before `done` runs the step on (a
          // variable they were read from would otherwise be copied by its next update).
          buffers->request.Clear();
          // A failed call may mean the peer is not where it was (restarted elsewhere, or in
          // another pid namespace): its next reply says again whether it shares this host,
          // and where its chunk socket is.
          if (!s.ok()) {
            LearnPeer("", {});
            if (IsUnavailable(s) || absl::IsAborted(s)) chunks_.ForgetPort();
          }
          done(s.ok() ? decode(buffers->reply) : s);
        });
  }

  // The server's shared-memory key, "" when it is not on this host (as far as its last
  // reply said) or its key could not be read: requests then carry their tensors inline.
  std::string PeerKey() {
    absl::MutexLock lock(&peer_mu_);
    return peer_key_;
  }
  // From a reply: the server's host identity and where its key is. Reading the key (once
  // per server process, then cached by shm::PeerKey) is what proves this process may open
  // the server's /proc entries, and the server requires it in every reference we send.
  void LearnPeer(const std::string& host, const proto::SharedMemoryKeyRef& where) {
    std::string key = shm::SameHost(host) ? shm::PeerKey(where) : "";
    absl::MutexLock lock(&peer_mu_);
    peer_key_ = std::move(key);
  }

  std::unique_ptr<proto::WorkerService::Stub> stub_;
  grpc::GenericStub raw_;
  // The chunks of large RunGraph tensors; the gRPC calls it falls back to are this
  // worker's (RawCall). Closed first by the destructor, freed after every call completed.
  ChunkTransfer chunks_;
  absl::Mutex peer_mu_;
  std::string peer_key_ ABSL_GUARDED_BY(peer_mu_);
  // Whether the peer has answered any call (see Call).
  std::atomic<bool> answered_{false};
  // The calls in flight, by context (the shared_ptr keeps the call's state alive).
  using CallSet = std::map<grpc::ClientContext*, std::shared_ptr<grpc::ClientContext>>;
  absl::Mutex calls_mu_;
  CallSet calls_ ABSL_GUARDED_BY(calls_mu_);
  bool closing_ ABSL_GUARDED_BY(calls_mu_) = false;
};

}  // namespace

std::unique_ptr<WorkerInterface> NewGrpcRemoteWorker(
    std::shared_ptr<grpc::Channel> channel,
    std::vector<std::shared_ptr<grpc::Channel>> chunk_channels, std::string host) {
  return std::make_unique<GrpcRemoteWorker>(std::move(channel), chunk_channels, std::move(host));
}

}  // namespace tw
