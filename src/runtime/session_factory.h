// SessionFactory: who makes the sessions of one kind of target, after TensorFlow's
// SessionFactory. Session::Create looks the target up here: the runtime registers the
// in-process target "" (DirectSession), the gRPC transport registers "grpc://" from
// src/rpc, so this layer never names a transport.
//
// Registration is by static registrar (TW_REGISTER_SESSION_FACTORY) in the file that
// defines the factory; libtensorweave is a shared library, so the linker keeps them
// (docs/architecture.md, "Build").
#ifndef TENSORWEAVE_SRC_RUNTIME_SESSION_FACTORY_H_
#define TENSORWEAVE_SRC_RUNTIME_SESSION_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "tensorweave/session.h"
#include "tensorweave/status.h"

namespace tw {

// Makes sessions for the targets that start with the prefix it is registered under.
// Implementations are thread-safe: sessions are created from any thread.
class SessionFactory {
 public:
  virtual ~SessionFactory() = default;

  // A new session for `options.target`, which starts with this factory's prefix. The
  // errors are those of Session::Create (InvalidArgument for options the factory cannot
  // serve).
  virtual StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) = 0;
  // ResetContainers for this factory's targets. The default has nothing to clear: the
  // sessions it makes own their state (the in-process target).
  virtual Status Reset(const SessionOptions& options, const std::vector<std::string>& containers) {
    return OkStatus();
  }

  // Makes `factory` the one for targets starting with `prefix` ("grpc://"). The empty
  // prefix is the in-process target and matches only the empty target, not every target.
  // Registering a prefix twice is a programming error (CHECK). Thread-safe; normally
  // called from static initializers only.
  static void Register(const std::string& prefix, std::unique_ptr<SessionFactory> factory);

  // The factory for `target`: the one with the longest registered prefix of it (for ""
  // the in-process one). NotFound (TF's code) `session target "x" is not supported; use ""
  // (in-process) or grpc://host:port` when none matches. The factory lives as long as the
  // process.
  static StatusOr<SessionFactory*> ForTarget(const std::string& target);
};

namespace internal {
// Registers a factory at static initialization.
struct SessionFactoryRegistrar {
  SessionFactoryRegistrar(const std::string& prefix, std::unique_ptr<SessionFactory> factory) {
    SessionFactory::Register(prefix, std::move(factory));
  }
};
}  // namespace internal

}  // namespace tw

#define TW_SESSION_FACTORY_CONCAT_INNER(a, b) a##b
#define TW_SESSION_FACTORY_CONCAT(a, b) TW_SESSION_FACTORY_CONCAT_INNER(a, b)
// Registers `factory` (an expression giving a std::unique_ptr<SessionFactory>) for targets
// starting with `prefix`, at static initialization. At namespace scope in a .cc file.
#define TW_REGISTER_SESSION_FACTORY(prefix, factory)                                               \
  [[maybe_unused]] static const ::tw::internal::SessionFactoryRegistrar TW_SESSION_FACTORY_CONCAT( \
      tw_session_factory_registrar_, __COUNTER__)(prefix, factory)

#endif  // TENSORWEAVE_SRC_RUNTIME_SESSION_FACTORY_H_
