// Rendezvous: where a step's _Send kernels leave tensors and its _Recv kernels pick them up,
// matched by key. One rendezvous serves one step; the distributed runtime puts a remote
// one in front of it that pulls tensors from other tasks.
#ifndef TENSORWEAVE_SRC_FRAMEWORK_RENDEZVOUS_H_
#define TENSORWEAVE_SRC_FRAMEWORK_RENDEZVOUS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "src/framework/cancellation.h"
#include "tensorweave/tensor.h"

namespace tw {

// "<src_device>;<src_incarnation as 16 hex digits>;<dst_device>;<tensor_name>;0:0".
std::string RendezvousKey(std::string_view src_device, uint64_t src_incarnation,
                          std::string_view dst_device, std::string_view tensor_name);

struct ParsedRendezvousKey {
  std::string src_device;
  uint64_t src_incarnation = 0;
  std::string dst_device;
  std::string tensor_name;
};
// InvalidArgument naming the key when it does not have the five parts.
StatusOr<ParsedRendezvousKey> ParseRendezvousKey(std::string_view key);

class Rendezvous {
 public:
  using RecvCallback = std::function<void(const Status&, const Tensor&)>;
  virtual ~Rendezvous() = default;

  // Leaves `value` under `key`; InvalidArgument if the key was already sent.
  virtual Status Send(const std::string& key, const Tensor& value) = 0;
  // Calls `done` once the key's value exists (possibly right away), or with the abort
  // status, or Cancelled when `cm` is cancelled first.
  virtual void RecvAsync(const std::string& key, CancellationManager* cm, RecvCallback done) = 0;
  // Like RecvAsync, but only for values sent into this rendezvous itself (client-fed
  // values), never pulled from another task.
  virtual void RecvLocalAsync(const std::string& key, CancellationManager* cm, RecvCallback done) {
    RecvAsync(key, cm, std::move(done));
  }
  // Fails every pending and future Recv with `status`.
  virtual void StartAbort(const Status& status) = 0;
};

// The rendezvous within one process. Thread-safe; callbacks run outside its lock.
class LocalRendezvous final : public Rendezvous {
 public:
  LocalRendezvous() = default;
  ~LocalRendezvous() override;

  Status Send(const std::string& key, const Tensor& value) override;
  void RecvAsync(const std::string& key, CancellationManager* cm, RecvCallback done) override;
  void StartAbort(const Status& status) override;
  // Takes the value of `key` if it has been sent; NotFound otherwise (never waits).
  StatusOr<Tensor> TryRecv(const std::string& key);

 private:
  struct Waiter {
    RecvCallback done;
    CancellationManager* cm = nullptr;
    CancellationManager::Token token = 0;
  };
  struct State {
    absl::Mutex mu;
    Status aborted ABSL_GUARDED_BY(mu);
    std::map<std::string, Tensor> values ABSL_GUARDED_BY(mu);
    std::map<std::string, Waiter> waiters ABSL_GUARDED_BY(mu);
  };
  static void CancelWaiter(State& state, const std::string& key);

  // Shared with the cancellation callbacks of the waiters: such a callback may run after
  // this rendezvous is gone, since DeregisterCallback does not wait for one that another
  // thread's StartCancel has begun (it then finds no waiter and does nothing).
  const std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_FRAMEWORK_RENDEZVOUS_H_
