#include "src/runtime/session_factory.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include "absl/synchronization/mutex.h"
#include "src/runtime/cpu_device.h"
#include "src/runtime/direct_session.h"

namespace tw {
namespace {

absl::Mutex registry_mu(absl::kConstInit);
// Never destroyed: factories may be used by sessions created during static destruction.
std::map<std::string, std::unique_ptr<SessionFactory>>& Factories()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mu) {
  static auto* factories = new std::map<std::string, std::unique_ptr<SessionFactory>>();
  return *factories;
}

// The in-process target "": a DirectSession on a CPU device of the session's own.
class DirectSessionFactory final : public SessionFactory {
 public:
  StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) override {
    TW_ASSIGN_OR_RETURN(std::unique_ptr<CpuDevice> device,
                        CpuDevice::Create(DeviceName::Full("localhost", 0, 0, "CPU", 0),
                                          {.num_threads = options.num_threads,
                                           // The graphs come from this process, which could
                                           // open any file itself.
                                           .file_access = FileAccessPolicy::Unrestricted()}));
    DeviceBase* raw = device.get();
    return std::unique_ptr<Session>(new DirectSession(raw, std::move(device)));
  }
};

TW_REGISTER_SESSION_FACTORY("", std::make_unique<DirectSessionFactory>());

}  // namespace

void SessionFactory::Register(const std::string& prefix, std::unique_ptr<SessionFactory> factory) {
  absl::MutexLock lock(&registry_mu);
  if (!Factories().emplace(prefix, std::move(factory)).second) {
    std::fprintf(stderr, "tensorweave: two session factories for target prefix \"%s\"\n",
                 prefix.c_str());
    std::abort();
  }
}

StatusOr<SessionFactory*> SessionFactory::ForTarget(const std::string& target) {
  absl::MutexLock lock(&registry_mu);
  SessionFactory* best = nullptr;
  size_t best_length = 0;
  for (const auto& [prefix, factory] : Factories()) {
    // "" names the in-process target only; it is no prefix of the others.
    const bool matches = prefix.empty() ? target.empty() : target.starts_with(prefix);
    if (matches && (best == nullptr || prefix.size() > best_length)) {
      best = factory.get();
      best_length = prefix.size();
    }
  }
  if (best == nullptr) {
    // NotFound, as TensorFlow's SessionFactory::GetFactory answers for a target no factory
    // accepts (Session() and Session.reset alike).
    return errors::NotFound("session target \"", target,
                            "\" is not supported; use \"\" (in-process) or grpc://host:port");
  }
  return best;
}

namespace {

// SessionOptions::operation_timeout: gives every step that has no timeout of its own the
// session's, whatever the target.
class DefaultTimeoutSession final : public Session {
 public:
  DefaultTimeoutSession(std::unique_ptr<Session> session, absl::Duration timeout)
      : session_(std::move(session)), timeout_(timeout) {}

  using Session::Run;
  Status Extend(const proto::GraphDef& graph) override { return session_->Extend(graph); }
  Status Extend(const proto::GraphDef& graph, StepCancellation* cancellation) override {
    return session_->Extend(graph, cancellation);
  }
  Status Run(const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs) override {
    if (options.timeout != absl::InfiniteDuration()) {
      return session_->Run(options, feeds, fetches, targets, outputs);
    }
    RunOptions limited = options;
    limited.timeout = timeout_;
    return session_->Run(limited, feeds, fetches, targets, outputs);
  }
  Status Close() override { return session_->Close(); }
  StatusOr<std::vector<DeviceAttributes>> ListDevices() override { return session_->ListDevices(); }

 private:
  const std::unique_ptr<Session> session_;
  const absl::Duration timeout_;
};

}  // namespace

StatusOr<std::unique_ptr<Session>> Session::Create(const SessionOptions& options) {
  TW_ASSIGN_OR_RETURN(SessionFactory * factory, SessionFactory::ForTarget(options.target));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, factory->NewSession(options));
  if (options.operation_timeout == absl::InfiniteDuration() ||
      options.operation_timeout <= absl::ZeroDuration()) {
    return session;
  }
  return std::unique_ptr<Session>(
      std::make_unique<DefaultTimeoutSession>(std::move(session), options.operation_timeout));
}

Status ResetContainers(const SessionOptions& options, const std::vector<std::string>& containers) {
  TW_ASSIGN_OR_RETURN(SessionFactory * factory, SessionFactory::ForTarget(options.target));
  return factory->Reset(options, containers);
}

}  // namespace tw
