// GrpcSession: a Session whose graph runs on a cluster, through the master service of the
// server named by the target; and its SessionFactory, registered for grpc:// targets.
#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/generic/generic_stub.h"
#include "src/distributed/local_master.h"
#include "src/framework/cancellation.h"
#include "src/rpc/grpc_util.h"
#include "src/rpc/tensor_wire.h"
#include "src/runtime/session_factory.h"
#include "src/runtime/step_timeout.h"
#include "tensorweave/protobuf/service.grpc.pb.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

// The master of a server in this process named by `address` that admits `tls`, or null.
std::shared_ptr<LocalMaster> FindLocalMaster(const std::string& address, const TlsOptions& tls) {
  std::shared_ptr<LocalMaster> master = LocalMaster::Find(address);
  return master != nullptr && master->Admits(tls) ? master : nullptr;
}

// Lets a caller's cancellation cancel one gRPC call while it runs. The cancellation's
// callback may still be running when the call has ended, so it holds a shared slot that
// the destructor empties, not the context itself.
class CallCanceller {
 public:
  // `caller` may be null (nothing to cancel). started() is false, and nothing registered,
  // when `caller` was cancelled already: the call must not be made.
  CallCanceller(CancellationManager* caller, grpc::ClientContext* ctx)
      : caller_(caller), slot_(std::make_shared<Slot>()) {
    if (caller_ == nullptr) return;
    {
      absl::MutexLock lock(&slot_->mu);
      slot_->ctx = ctx;
    }
    token_ = caller_->NewToken();
    started_ = caller_->RegisterCallback(token_, [slot = slot_] {
      absl::MutexLock lock(&slot->mu);
      if (slot->ctx != nullptr) slot->ctx->TryCancel();
    });
  }
  ~CallCanceller() {
    if (caller_ == nullptr) return;
    if (started_) caller_->DeregisterCallback(token_);
    absl::MutexLock lock(&slot_->mu);
    slot_->ctx = nullptr;
  }
  CallCanceller(const CallCanceller&) = delete;
  CallCanceller& operator=(const CallCanceller&) = delete;
  bool started() const { return started_; }

 private:
  struct Slot {
    absl::Mutex mu;
    grpc::ClientContext* ctx ABSL_GUARDED_BY(mu) = nullptr;
  };
  CancellationManager* const caller_;
  const std::shared_ptr<Slot> slot_;
  CancellationManager::Token token_ = 0;
  bool started_ = true;
};

class GrpcSession final : public Session {
 public:
  // Precondition: tls.Validate().ok().
  GrpcSession(const std::string& address, std::vector<std::string> device_filters,
              const TlsOptions& tls)
      : GrpcSession(NewChannel(address, tls), FindLocalMaster(address, tls),
                    std::move(device_filters)) {}
  GrpcSession(const std::shared_ptr<grpc::Channel>& channel,
              std::shared_ptr<LocalMaster> local_master, std::vector<std::string> device_filters)
      : stub_(proto::MasterService::NewStub(channel)),
        raw_(channel),
        local_master_(std::move(local_master)),
        device_filters_(std::move(device_filters)) {}
  ~GrpcSession() override { Close().IgnoreError(); }
  // Before the first call.
  void set_isolate_session(bool isolate) { isolate_session_ = isolate; }

  // Extends (and the creation of the master session) are ordered by extend_mu_; none holds
  // mu_ while it waits for the master, so Close() can cancel one in flight (CreateSession may
  // wait minutes for the cluster).
  using Session::Extend;
  Status Extend(const proto::GraphDef& graph) override { return Extend(graph, nullptr); }
  Status Extend(const proto::GraphDef& graph, StepCancellation* cancellation) override {
    absl::MutexLock order(&extend_mu_);
    std::string handle;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return errors::Cancelled("Session has been closed");
      handle = handle_;
    }
    if (handle.empty()) {
      return Create(&graph, cancellation != nullptr ? cancellation->manager() : nullptr);
    }
    grpc::ClientContext ctx;
    proto::ExtendSessionRequest req;
    req.set_session_handle(handle);
    *req.mutable_graph_def() = graph;
    proto::ExtendSessionResponse resp;
    TW_RETURN_IF_ERROR(BeginCall(&ctx));
    grpc::Status s = stub_->ExtendSession(&ctx, req, &resp);
    TW_RETURN_IF_ERROR(EndCall());
    return FromGrpcStatus(s);
  }

  using Session::Run;
  Status Run(const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs) override {
    RunStepArgs args;
    CancellationManager* caller =
        options.cancellation != nullptr ? options.cancellation->manager() : nullptr;
    TW_ASSIGN_OR_RETURN(std::string handle, Handle(caller));
    args.proto.set_session_handle(std::move(handle));
    args.feed.reserve(feeds.size());
    for (const auto& [name, value] : feeds) args.feed.push_back({name, value});
    for (const auto& f : fetches) args.proto.add_fetch(f);
    for (const auto& t : targets) args.proto.add_target(t);
    if (options.timeout != absl::InfiniteDuration()) {
      args.proto.set_timeout_ms(absl::ToInt64Milliseconds(options.timeout));
    }
    RunStepResult result;
    args.from_this_process = local_master_ != nullptr;
    Status s = local_master_ != nullptr ? local_master_->RunStep(args, &result, caller)
                                        : RemoteRunStep(args, options.timeout, caller, &result);
    if (caller != nullptr && caller->IsCancelled() && !s.ok()) {
      return errors::Cancelled("Step was cancelled by the caller");
    }
    if (IsDeadlineExceeded(s) && options.timeout != absl::InfiniteDuration()) {
      return StepTimedOut(options.timeout);
    }
    TW_RETURN_IF_ERROR(s);
    outputs->clear();
    outputs->reserve(result.tensor.size());
    for (NamedTensor& t : result.tensor) {
      // Through a master of this process the tensors come by reference: one that still
      // shares its buffer with the runtime (a variable's value) is handed out as a copy,
      // since the caller may write into what it gets.
      outputs->push_back(t.tensor.BufferIsShared() ? t.tensor.Copy() : std::move(t.tensor));
    }
    return OkStatus();
  }

  StatusOr<std::vector<DeviceAttributes>> ListDevices() override {
    TW_ASSIGN_OR_RETURN(std::string handle, Handle());
    grpc::ClientContext ctx;
    proto::ListDevicesRequest req;
    req.set_session_handle(handle);
    proto::ListDevicesResponse resp;
    TW_RETURN_IF_ERROR(BeginCall(&ctx));
    grpc::Status s = stub_->ListDevices(&ctx, req, &resp);
    TW_RETURN_IF_ERROR(EndCall());
    TW_RETURN_IF_ERROR(FromGrpcStatus(s));
    std::vector<DeviceAttributes> devices;
    for (const auto& d : resp.device()) devices.push_back({d.name(), d.device_type()});
    return devices;
  }

  Status Close() override {
    std::string handle;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return OkStatus();
      closed_ = true;
      if (pending_ != nullptr) pending_->TryCancel();  // a CreateSession or Extend in flight
      handle = handle_;
    }
    if (handle.empty()) return OkStatus();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    proto::CloseSessionRequest req;
    req.set_session_handle(handle);
    proto::CloseSessionResponse resp;
    return FromGrpcStatus(stub_->CloseSession(&ctx, req, &resp));
  }

 private:
  // The master session's handle, created first if there is none yet (`caller`, may be
  // null, cancels that creation).
  StatusOr<std::string> Handle(CancellationManager* caller = nullptr) {
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return errors::Cancelled("Session has been closed");
      if (!handle_.empty()) return handle_;
    }
    absl::MutexLock order(&extend_mu_);
    {
      absl::MutexLock lock(&mu_);
      if (!handle_.empty()) return handle_;  // created while this call waited for the order
    }
    TW_RETURN_IF_ERROR(Create(nullptr, caller));
    absl::MutexLock lock(&mu_);
    return handle_;
  }

  // Creates the master session, with `graph` when given; `caller` (may be null) cancels
  // the call, which may be waiting for the cluster. Called with extend_mu_ held.
  Status Create(const proto::GraphDef* graph, CancellationManager* caller)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(extend_mu_) {
    grpc::ClientContext ctx;
    proto::CreateSessionRequest req;
    if (graph != nullptr) *req.mutable_graph_def() = *graph;
    for (const auto& f : device_filters_) req.add_device_filters(f);
    req.set_isolate_session(isolate_session_);
    proto::CreateSessionResponse resp;
    CallCanceller canceller(caller, &ctx);
    if (!canceller.started()) return errors::Cancelled("Step was cancelled by the caller");
    TW_RETURN_IF_ERROR(BeginCall(&ctx));
    grpc::Status s = stub_->CreateSession(&ctx, req, &resp);
    std::string orphan;  // a session created after Close: closed again at once
    bool closed = false;
    {
      absl::MutexLock lock(&mu_);
      pending_ = nullptr;
      closed = closed_;
      if (s.ok()) (closed ? orphan : handle_) = resp.session_handle();
    }
    if (!orphan.empty()) {
      grpc::ClientContext close_ctx;
      close_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      proto::CloseSessionRequest close;
      close.set_session_handle(orphan);
      proto::CloseSessionResponse closed_reply;
      (void)stub_->CloseSession(&close_ctx, close, &closed_reply);
    }
    if (closed) return errors::Cancelled("Session has been closed");
    if (!s.ok() && caller != nullptr && caller->IsCancelled()) {
      return errors::Cancelled(
          "Step was cancelled by the caller while the session waited for "
          "its tasks");
    }
    return FromGrpcStatus(s);
  }

  // Makes `ctx` the call Close() cancels; Cancelled when the session is closed already.
  Status BeginCall(grpc::ClientContext* ctx) {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
    pending_ = ctx;
    return OkStatus();
  }
  // The call begun by BeginCall has returned; Cancelled when Close() came meanwhile.
  Status EndCall() {
    absl::MutexLock lock(&mu_);
    pending_ = nullptr;
    if (closed_) return errors::Cancelled("Session has been closed");
    return OkStatus();
  }

  // RunStep over gRPC, tensors in the wire form of src/rpc/tensor_wire.h.
  // `caller` (may be null) cancels the call, which ends the step on the master's tasks.
  Status RemoteRunStep(const RunStepArgs& args, absl::Duration timeout, CancellationManager* caller,
                       RunStepResult* result) {
    grpc::ClientContext ctx;
    CallCanceller canceller(caller, &ctx);
    if (!canceller.started()) return errors::Cancelled("Step was cancelled by the caller");
    // Grace past the step's own timeout and the master's wait for its tasks to confirm the
    // cancellation (2 s at most), so the master reports it once the step has stopped.
    if (timeout != absl::InfiniteDuration()) {
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout + absl::Seconds(3)));
    }
    grpc::ByteBuffer request = EncodeRunStepArgs(args), reply;
    absl::Notification finished;
    grpc::Status status;
    raw_.UnaryCall(&ctx, "/tw.proto.MasterService/RunStep", grpc::StubOptions(), &request, &reply,
                   [&](grpc::Status s) {
                     status = std::move(s);
                     finished.Notify();
                   });
    finished.WaitForNotification();
    TW_RETURN_IF_ERROR(FromGrpcStatus(status));
    return DecodeRunStepResult(reply, result);
  }

  std::unique_ptr<proto::MasterService::Stub> stub_;
  grpc::GenericStub raw_;
  // The master of a server in this process named by the target, or null.
  const std::shared_ptr<LocalMaster> local_master_;
  const std::vector<std::string> device_filters_;
  bool isolate_session_ = false;
  // Orders CreateSession and ExtendSession calls; held across them, never taken by Close.
  absl::Mutex extend_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Mutex mu_;
  std::string handle_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* pending_ ABSL_GUARDED_BY(mu_) = nullptr;  // a call Close() cancels
};

// grpc:// targets: a GrpcSession on the master of the server the target names.
class GrpcSessionFactory final : public SessionFactory {
 public:
  StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) override {
    TW_RETURN_IF_ERROR(options.tls.Validate());
    KeepFreedMemory();
    auto session = std::make_unique<GrpcSession>(options.target.substr(kPrefix.size()),
                                                 options.device_filters, options.tls);
    session->set_isolate_session(options.isolate_session);
    return std::unique_ptr<Session>(std::move(session));
  }

  // The master's Reset: clears the containers on its tasks, closes its sessions. As
  // TensorFlow's: the session's operation timeout bounds it (DeadlineExceeded), and it
  // waits that long for a server not up yet; with no timeout, a server that cannot be
  // reached is Unavailable at once and one that does not answer is waited for.
  Status Reset(const SessionOptions& options, const std::vector<std::string>& containers) override {
    TW_RETURN_IF_ERROR(options.tls.Validate());
    auto stub = proto::MasterService::NewStub(
        NewChannel(options.target.substr(kPrefix.size()), options.tls));
    grpc::ClientContext ctx;
    if (options.operation_timeout > absl::ZeroDuration() &&
        options.operation_timeout != absl::InfiniteDuration()) {
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + options.operation_timeout));
      ctx.set_wait_for_ready(true);
    }
    proto::ResetRequest req;
    for (const std::string& c : containers) req.add_container(c);
    proto::ResetResponse resp;
    return FromGrpcStatus(stub->Reset(&ctx, req, &resp));
  }

  static constexpr std::string_view kPrefix = "grpc://";
};

TW_REGISTER_SESSION_FACTORY(std::string(GrpcSessionFactory::kPrefix),
                            std::make_unique<GrpcSessionFactory>());

}  // namespace

}  // namespace tw
