// Master: the master service of one task, transport-agnostic. A session's graph is placed
// on the cluster's devices, pruned and split per task for each (feeds, fetches, targets)
// signature, registered once with the tasks' workers, and run with one RunGraph per task.
#ifndef TENSORWEAVE_SRC_DISTRIBUTED_MASTER_H_
#define TENSORWEAVE_SRC_DISTRIBUTED_MASTER_H_

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/distributed/cluster_wait.h"
#include "src/distributed/messages.h"
#include "src/distributed/worker_interface.h"
#include "tensorweave/protobuf/master.pb.h"

namespace tw {

struct MasterOptions {
  // Full name of this task's device: where unplaced nodes, feeds and fetches go.
  std::string local_device;
  // Every task of the cluster, "/job:ps/replica:0/task:0".
  std::vector<std::string> tasks;
  // How long CreateSession waits for the tasks it needs before giving up (Unavailable).
  absl::Duration wait_for_cluster = absl::Minutes(5);
  // How often the wait logs the tasks it still waits for.
  absl::Duration wait_log_interval = absl::Seconds(10);
  // The limit of a step whose request brings no timeout (ServerOptions::
  // default_operation_timeout); it then fails with DeadlineExceeded.
  absl::Duration default_step_timeout = absl::InfiniteDuration();
};

class MasterSession;
class WorkerAccess;

// Thread-safe. The synchronous methods block their calling thread while they talk to workers
// (run them off the transport's callback threads); a running step holds no thread.
class Master {
 public:
  Master(MasterOptions options, WorkerCache* workers);
  ~Master();

  using StatusCallback = std::function<void(const Status&)>;
  // Waits for the session's tasks (device filters applied) to answer, holding no thread
  // meanwhile (src/distributed/cluster_wait.h), then creates the session. `done` is called
  // once, on any thread (possibly before this returns); `request` and `response` must live
  // until then. Errors: InvalidArgument for a bad graph; Unavailable naming the tasks that
  // did not answer within the request's wait_for_cluster_ms (options.wait_for_cluster when
  // 0); Cancelled "CreateSession was cancelled by the client" when `cm` (may be null) is
  // cancelled, and Cancelled "the server is stopping" on Stop().
  void CreateSessionAsync(const proto::CreateSessionRequest* request,
                          proto::CreateSessionResponse* response, CancellationManager* cm,
                          StatusCallback done);
  Status ExtendSession(const proto::ExtendSessionRequest& request);
  // Runs a step; `done` is called once, on any thread, and `args`/`result` must live until
  // then. While the step runs no thread waits for it. Errors from a task come back as
  // "From /job:ps/replica:0/task:0: <message>" with the task's code; follow-on cancellations
  // in other tasks are not reported. The first step of a new (feeds, fetches, targets)
  // signature blocks the caller while its partitions are registered. `cm` (may be null) is
  // the client's: its cancellation (the client gave up or disconnected) ends the step on
  // every task with Cancelled "Step was cancelled by the client".
  void RunStepAsync(const RunStepArgs* args, RunStepResult* result, CancellationManager* cm,
                    StatusCallback done);
  // Whether RunStepAsync(args) will not block (its signature is registered, or it fails at
  // once).
  bool IsPrepared(const RunStepArgs& args);
  // Closes the session. Closing again one this master closed (twice, or after Reset) is OK;
  // a handle it never issued (or closed long ago: it remembers the last
  // kRememberedClosedSessions) is Aborted "Session <handle> is not found. Possibly, this
  // master has restarted.", as TensorFlow's master answers.
  Status CloseSession(const proto::CloseSessionRequest& request);
  // The devices of the session's tasks; InvalidArgument "Session <handle> is not found..."
  // for an unknown handle, as TensorFlow's master answers.
  Status ListDevices(const proto::ListDevicesRequest& request,
                     proto::ListDevicesResponse* response);
  // Closes every session of this master, then clears the containers named on every task:
  // with none named, each task's default container only (TensorFlow's DeviceMgr::
  // ClearContainers); a container a task does not have is no error. A task that does not
  // answer is skipped. Blocks until every task has answered; the client's deadline (its
  // session's operation timeout) bounds the wait it sees.
  Status Reset(const proto::ResetRequest& request);
  // Closes every session: running steps are cancelled.
  void CloseAllSessions();
  // For a server that stops: ends every CreateSession still waiting for the cluster
  // (Cancelled), refuses later ones, and closes every session. Returns once no wait touches
  // the worker cache any more.
  void Stop();
  // CreateSession calls waiting for the cluster, for tests.
  size_t PendingCreates();
  // Open sessions (diagnostics, metrics).
  size_t NumSessions();

 private:
  StatusOr<std::shared_ptr<MasterSession>> FindSession(const std::string& handle);
  // Removes the session from sessions_ and remembers its handle as closed.
  void ForgetClosedLocked(std::map<std::string, std::shared_ptr<MasterSession>>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Creates the session once its tasks have answered with `devices`.
  Status FinishCreate(const proto::CreateSessionRequest& request,
                      std::vector<proto::DeviceAttributes> devices,
                      proto::CreateSessionResponse* response);

  const MasterOptions options_;
  WorkerCache* const workers_;
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<MasterSession>> sessions_ ABSL_GUARDED_BY(mu_);
  // The handles of the sessions closed last, oldest first, so that closing one again is no
  // error while a handle never issued is. Bounded: a long-lived master closes many.
  static constexpr size_t kRememberedClosedSessions = 4096;
  std::set<std::string> closed_handles_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> closed_order_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // Closed by Stop (src/distributed/master.cc).
  const std::shared_ptr<WorkerAccess> access_;
  // CreateSession calls waiting for their tasks; each removes itself when it ends.
  std::map<const void*, std::shared_ptr<ClusterWait>> waits_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_DISTRIBUTED_MASTER_H_
