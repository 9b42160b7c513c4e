// The masters of the servers running in this process, found by the addresses that name
// them, so a session whose target names one runs its steps by direct call: no gRPC, no
// serialization, tensors passed by reference.
#ifndef TENSORWEAVE_SRC_DISTRIBUTED_LOCAL_MASTER_H_
#define TENSORWEAVE_SRC_DISTRIBUTED_LOCAL_MASTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/distributed/master.h"
#include "tensorweave/tls.h"

namespace tw {

// A server's master as sessions in its process see it. Thread-safe.
class LocalMaster {
 public:
  // `tls`: the server's own credentials.
  LocalMaster(Master* master, TlsOptions tls) : tls_(std::move(tls)), master_(master) {}

  // Whether a session with `tls` may use this master directly: it would be accepted over
  // the network for sure (the server is insecure, or the session presents the server's own
  // credentials). Other sessions take the network path, where TLS decides.
  bool Admits(const TlsOptions& tls) const {
    return !tls_.enabled() || (tls.ca_cert_pem == tls_.ca_cert_pem &&
                               tls.cert_pem == tls_.cert_pem && tls.key_pem == tls_.key_pem);
  }

  // Runs a step and waits for it; `cm` (may be null) cancels it, as a client that gives
  // up does. Unavailable once the server has stopped.
  Status RunStep(const RunStepArgs& args, RunStepResult* result, CancellationManager* cm = nullptr);
  // Later calls fail with Unavailable; waits for the calls in progress (the server closes
  // its sessions first, which ends their steps).
  void Detach();

  // Makes `master` reachable under `addresses` ("localhost:2222") until Unregister.
  static void Register(const std::vector<std::string>& addresses,
                       std::shared_ptr<LocalMaster> master);
  static void Unregister(const std::vector<std::string>& addresses);
  // Null when no server of this process has that address.
  static std::shared_ptr<LocalMaster> Find(const std::string& address);

 private:
  const TlsOptions tls_;
  absl::Mutex mu_;
  Master* master_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_DISTRIBUTED_LOCAL_MASTER_H_
