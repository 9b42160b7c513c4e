// GrpcSession: a Session whose graph runs on a cluster, through the master service of the
// server named by the target; and Session::Create, which picks it for grpc:// targets.
#include "absl/synchronization/mutex.h"
#include "src/core/tensor_coding.h"
#include "src/rpc/grpc_util.h"
#include "src/runtime/cpu_device.h"
#include "src/runtime/direct_session.h"
#include "tensorweave/protobuf/service.grpc.pb.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

class GrpcSession final : public Session {
 public:
  GrpcSession(const std::string& address, std::vector<std::string> device_filters)
      : stub_(proto::MasterService::NewStub(NewChannel(address))),
        device_filters_(std::move(device_filters)) {}
  ~GrpcSession() override { Close().IgnoreError(); }

  Status Extend(const proto::GraphDef& graph) override {
    absl::MutexLock lock(&mu_);
    grpc::ClientContext ctx;
    if (handle_.empty()) {
      proto::CreateSessionRequest req;
      *req.mutable_graph_def() = graph;
      for (const auto& f : device_filters_) req.add_device_filters(f);
      proto::CreateSessionResponse resp;
      TW_RETURN_IF_ERROR(FromGrpcStatus(stub_->CreateSession(&ctx, req, &resp)));
      handle_ = resp.session_handle();
      return OkStatus();
    }
    proto::ExtendSessionRequest req;
    req.set_session_handle(handle_);
    *req.mutable_graph_def() = graph;
    proto::ExtendSessionResponse resp;
    return FromGrpcStatus(stub_->ExtendSession(&ctx, req, &resp));
  }

  using Session::Run;
  Status Run(const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs) override {
    proto::RunStepRequest req;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return errors::Cancelled("Session has been closed");
      if (handle_.empty()) TW_RETURN_IF_ERROR(CreateEmptyLocked());
      req.set_session_handle(handle_);
    }
    for (const auto& [name, value] : feeds) {
      proto::NamedTensorProto* feed = req.add_feed();
      feed->set_name(name);
      TensorToProto(value, feed->mutable_tensor());
    }
    for (const auto& f : fetches) req.add_fetch(f);
    for (const auto& t : targets) req.add_target(t);
    grpc::ClientContext ctx;
    if (options.timeout != absl::InfiniteDuration()) {
      req.set_timeout_ms(absl::ToInt64Milliseconds(options.timeout));
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
    }
    proto::RunStepResponse resp;
    Status s = FromGrpcStatus(stub_->RunStep(&ctx, req, &resp));
    if (IsDeadlineExceeded(s)) {
      return errors::DeadlineExceeded("Timed out waiting for the step to finish after ",
                                      absl::FormatDuration(options.timeout));
    }
    TW_RETURN_IF_ERROR(s);
    outputs->clear();
    for (const auto& t : resp.tensor()) {
      TW_ASSIGN_OR_RETURN(Tensor value, TensorFromProto(t.tensor()));
      outputs->push_back(std::move(value));
    }
    return OkStatus();
  }

  Status Close() override {
    absl::MutexLock lock(&mu_);
    if (closed_ || handle_.empty()) {
      closed_ = true;
      return OkStatus();
    }
    closed_ = true;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    proto::CloseSessionRequest req;
    req.set_session_handle(handle_);
    proto::CloseSessionResponse resp;
    return FromGrpcStatus(stub_->CloseSession(&ctx, req, &resp));
  }

 private:
  Status CreateEmptyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    grpc::ClientContext ctx;
    proto::CreateSessionRequest req;
    for (const auto& f : device_filters_) req.add_device_filters(f);
    proto::CreateSessionResponse resp;
    TW_RETURN_IF_ERROR(FromGrpcStatus(stub_->CreateSession(&ctx, req, &resp)));
    handle_ = resp.session_handle();
    return OkStatus();
  }

  std::unique_ptr<proto::MasterService::Stub> stub_;
  const std::vector<std::string> device_filters_;
  absl::Mutex mu_;
  std::string handle_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

StatusOr<std::unique_ptr<Session>> Session::Create(const SessionOptions& options) {
  if (options.target.starts_with("grpc://")) {
    return std::unique_ptr<Session>(
        new GrpcSession(options.target.substr(7), options.device_filters));
  }
  if (!options.target.empty()) {
    return errors::InvalidArgument(
        "session target \"", options.target,
        "\" is not supported; use \"\" (in-process) or grpc://host:port");
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<CpuDevice> device,
                      CpuDevice::Create(DeviceName::Full("localhost", 0, 0, "CPU", 0),
                                        {.num_threads = options.num_threads}));
  DeviceBase* raw = device.get();
  return std::unique_ptr<Session>(new DirectSession(raw, std::move(device)));
}

}  // namespace tw
