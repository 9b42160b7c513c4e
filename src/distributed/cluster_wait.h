// ClusterWait: waits, without holding a thread, until every task of a set has answered a
// GetStatus call, for a master creating a session on a cluster that is still starting.
#ifndef TENSORWEAVE_SRC_DISTRIBUTED_CLUSTER_WAIT_H_
#define TENSORWEAVE_SRC_DISTRIBUTED_CLUSTER_WAIT_H_

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/base/timer_queue.h"
#include "src/distributed/worker_interface.h"
#include "tensorweave/protobuf/worker.pb.h"
#include "tensorweave/status.h"

namespace tw {

// One wait. Rounds of GetStatus calls go to the tasks that have not answered yet, all at
// once; between rounds the wait sleeps on the default TimerQueue with a backoff from 50 ms
// to 1 s. It ends exactly once, by calling `done`:
//   - OK with the devices of every task, once all have answered;
//   - Unavailable "CreateSession gave up after <wait> waiting for <tasks>" at the deadline,
//     even while calls are still in flight (a task whose host drops packets never answers);
//   - NotFound when a task is not in the worker cache;
//   - the status given to Cancel().
// Thread-safe. `workers` must stay valid until the wait has ended or Cancel() returned;
// calls still in flight afterwards complete into the wait's own state (kept alive by them).
class ClusterWait : public std::enable_shared_from_this<ClusterWait> {
 public:
  using Done = std::function<void(StatusOr<std::vector<proto::DeviceAttributes>>)>;
  struct Options {
    absl::Duration wait;          // how long before giving up
    absl::Duration log_interval;  // how often to log the tasks still waited for
  };

  // A wait for `tasks` that starts with Run. Two steps, so that the caller can make the
  // wait cancellable (register it) before it can end.
  static std::shared_ptr<ClusterWait> Create(WorkerCache* workers, std::set<std::string> tasks,
                                             Options options);
  // Starts waiting; `done` may run before Run returns (tasks in process answer at once, and
  // a wait cancelled before Run ends here). Call once.
  void Run(Done done);

  // Ends the wait with `reason` unless it has ended already. When Cancel returns, `done` is
  // not running and the wait no longer touches the worker cache. Must not be called from
  // `done`.
  void Cancel(const Status& reason);

  // Use Create().
  ClusterWait(WorkerCache* workers, std::set<std::string> tasks, Options options);

 private:
  void StartRound();
  void OnReply(const std::string& task, const Status& status,
               const proto::GetStatusResponse& response);
  using Result = StatusOr<std::vector<proto::DeviceAttributes>>;
  // Ends the wait with `result` (if it has not ended), calling `done` outside the lock; before
  // Run, keeps `result` for Run to deliver.
  void Finish(Result result);
  void CallDone(Done done, Result result);
  Status GiveUp() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  WorkerCache* const workers_;
  const Options options_;
  absl::Time deadline_ ABSL_GUARDED_BY(mu_);
  // Held while a round issues its calls, so that Cancel() can wait for a round in progress.
  absl::Mutex round_mu_;
  absl::Mutex mu_;
  Done done_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;  // Run was called
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<Result> early_result_ ABSL_GUARDED_BY(mu_);  // ended before Run
  bool in_done_ ABSL_GUARDED_BY(mu_) = false;                // `done` is running
  std::set<std::string> waiting_ ABSL_GUARDED_BY(mu_);
  std::vector<proto::DeviceAttributes> devices_ ABSL_GUARDED_BY(mu_);
  int replies_pending_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_) = absl::Milliseconds(50);
  absl::Time next_log_ ABSL_GUARDED_BY(mu_);
  TimerQueue::Id deadline_timer_ ABSL_GUARDED_BY(mu_) = 0;
  TimerQueue::Id round_timer_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_DISTRIBUTED_CLUSTER_WAIT_H_
