// Sessions run graphs: Session is the raw interface (GraphDef in, tensors by name);
// ClientSession is the convenient one for graphs built with a Scope.
//
//   tw::Scope root = tw::Scope::NewRootScope();
//   auto x = tw::ops::Placeholder(root, tw::DT_FLOAT);
//   auto y = tw::ops::Identity(root, x);
//   tw::ClientSession session(root);
//   auto out = session.Run({{x, tw::Tensor::Scalar(2.0f)}}, {y});   // StatusOr
#ifndef TENSORWEAVE_SESSION_H_
#define TENSORWEAVE_SESSION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"
#include "tensorweave/tls.h"

namespace tw {

struct SessionOptions {
  // "" runs the graph in this process on a device of the session's own.
  std::string target;
  // Compute threads of an in-process session's device, 0 to 1024; 0 means one per core
  // (more, or a negative count, fails the session's creation with InvalidArgument). The
  // library reads no environment: a program that honours TW_NUM_THREADS (as `tw launch`
  // sets it) passes RunConfig::runtime_settings().num_threads here.
  int num_threads = 0;
  // For grpc:// targets: the tasks the session may use ("/job:ps", "/job:worker/task:1"),
  // so it never waits for others (an evaluator, another worker). Empty: every task.
  // RunConfig::device_filters() gives TensorFlow's defaults for this task.
  std::vector<std::string> device_filters;
  // For grpc:// targets: the variables and queues this session creates on the cluster's
  // tasks are its own (other sessions never see them, even under the same shared_name) and
  // go away when it closes. By default they are shared by every session of every master.
  bool isolate_session = false;
  // For grpc:// targets: transport security, default insecure. A server with TLS refuses
  // a session that does not present a certificate signed by its cluster CA; with TLS the
  // session checks the server's certificate against `tls.ca_cert_pem` and the target's
  // host (or `tls.server_name`). Ignored for in-process sessions.
  TlsOptions tls;
  // A step run without a RunOptions::timeout is cancelled after this long and fails with
  // DeadlineExceeded (TensorFlow's ConfigProto.operation_timeout_in_ms). Infinite, zero or
  // negative: no limit.
  absl::Duration operation_timeout = absl::InfiniteDuration();
};

// A device a session can place ops on.
struct DeviceAttributes {
  std::string name;         // "/job:ps/replica:0/task:0/device:CPU:0"
  std::string device_type;  // "CPU"
  friend bool operator==(const DeviceAttributes&, const DeviceAttributes&) = default;
};

class CancellationManager;  // src/framework/cancellation.h

// Cancels a step from another thread: give it as RunOptions::cancellation, then Cancel().
// The step stops on every task it runs on and fails with Cancelled ("Step was cancelled
// by the caller"); the session stays usable. Cancelling before the step starts makes it
// fail at once; a cancellation stays cancelled, so use a fresh one per step.
// Thread-safe.
class StepCancellation {
 public:
  StepCancellation();
  ~StepCancellation();
  StepCancellation(const StepCancellation&) = delete;
  StepCancellation& operator=(const StepCancellation&) = delete;
  void Cancel();
  bool IsCancelled() const;
  // For sessions: where they register what stops their step.
  CancellationManager* manager() { return manager_.get(); }

 private:
  std::unique_ptr<CancellationManager> manager_;
};

struct RunOptions {
  // A step still running after this long is cancelled and fails with DeadlineExceeded.
  absl::Duration timeout = absl::InfiniteDuration();
  // Not owned; must outlive the Run call. Null: only the timeout and Close() end the step.
  StepCancellation* cancellation = nullptr;
};

// Thread-safe: many threads may Run at once; Close may be called from any thread.
class Session {
 public:
  virtual ~Session() = default;

  // NotFound (as TensorFlow) for a target this build cannot serve; InvalidArgument for
  // incomplete `options.tls` (naming the missing field). Does not connect: an unreachable
  // server, or one that refuses the session's credentials, fails its first call with
  // Unavailable.
  static StatusOr<std::unique_ptr<Session>> Create(const SessionOptions& options = {});

  // Adds the nodes of `graph` to the session's graph. InvalidArgument naming the node for
  // a duplicate name, an unknown op, bad attributes, inputs of the wrong type or a cycle.
  virtual Status Extend(const proto::GraphDef& graph) = 0;
  // Extend, where `cancellation` (may be null) also ends a wait for the cluster that the
  // call starts (the first call of a grpc:// session creates it on the master, which
  // waits for the tasks), with Cancelled; the session stays usable. ClientSession::Run
  // passes its RunOptions' cancellation. By default Extend(graph): a session that never
  // waits has nothing to cancel.
  virtual Status Extend(const proto::GraphDef& graph, StepCancellation* cancellation) {
    return Extend(graph);
  }

  // Runs one step: feeds are (tensor name "node:k", value) pairs, fetches tensor names,
  // targets node names run for their effects. `outputs` gets one tensor per fetch.
  // Errors: InvalidArgument for unknown names, fed values of the wrong dtype or shape, and
  // placement a local session cannot satisfy; the failing kernel's error prefixed with its
  // node; DeadlineExceeded after RunOptions.timeout; Cancelled when Close() or
  // RunOptions.cancellation interrupted it.
  virtual Status Run(const RunOptions& options,
                     const std::vector<std::pair<std::string, Tensor>>& feeds,
                     const std::vector<std::string>& fetches,
                     const std::vector<std::string>& targets, std::vector<Tensor>* outputs) = 0;
  Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs) {
    return Run(RunOptions(), feeds, fetches, targets, outputs);
  }

  // Cancels running steps (they fail with Cancelled) and refuses new ones. Idempotent.
  virtual Status Close() = 0;
  // The devices steps can use: an in-process session's own CPU device; for a grpc://
  // target, every device of the tasks the session's device filters admit (the first call
  // waits for them as a first step does). Cancelled after Close().
  virtual StatusOr<std::vector<DeviceAttributes>> ListDevices() = 0;
};

// Closes every session of the master `options.target` names and clears `containers` on
// every task of its cluster ("" is the default container, which holds every variable and
// queue not given one; no containers: the default container only, as TensorFlow's code
// does whatever its docstring says; a container no task has is no error): TensorFlow's
// Session.reset. The tasks' other containers, and sessions of other masters, are
// untouched. For the in-process target there is nothing to clear (each in-process session
// owns its state; it goes with the session) and the result is OK. NotFound for a target no
// factory serves. `options.operation_timeout`, when set, bounds the call and it waits that
// long for a master not up yet (DeadlineExceeded); without one, a master that cannot be
// reached is Unavailable at once.
Status ResetContainers(const SessionOptions& options, const std::vector<std::string>& containers);

// Runs graphs built with a Scope: before each step it sends the session the nodes added to
// the scope's graph since the last step. Thread-safe like Session.
class ClientSession {
 public:
  using FeedList = std::vector<std::pair<Output, Tensor>>;

  // Problems creating the session surface on the first Run.
  explicit ClientSession(const Scope& scope, const SessionOptions& options = {});
  ~ClientSession();

  StatusOr<std::vector<Tensor>> Run(const FeedList& feeds, const std::vector<Output>& fetches,
                                    const std::vector<Operation>& targets = {},
                                    const RunOptions& options = {});
  Status Close();
  // Session::ListDevices, after sending the graph built so far.
  StatusOr<std::vector<DeviceAttributes>> ListDevices();
  Session* session() { return session_.get(); }

 private:
  Status SendNewNodes(StepCancellation* cancellation);

  Scope scope_;
  Status create_status_;
  std::unique_ptr<Session> session_;
  absl::Mutex mu_;
  int nodes_sent_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SESSION_H_
