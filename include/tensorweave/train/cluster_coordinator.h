// ClusterCoordinator: one program drives training on every worker of a cluster, as
// TensorFlow's tf.distribute.experimental.coordinator.ClusterCoordinator does. The program
// builds one graph: the model's variables on the ps tasks and, for each function it
// schedules, one replica per worker placed on that worker. The coordinator keeps a session
// on each worker's master (device filters: the shared tasks and that worker alone) and a
// thread per worker that takes the next scheduled function from one queue and runs the
// worker's replica of it, so every worker is kept busy and a fast one runs more steps.
//
// Faults, better than between-graph training, where a lost worker stops its part of the
// work:
// - A worker that cannot be reached, or that restarted (its session is gone), is a worker
//   failure: the function it was running goes back to the front of the queue for another
//   worker, the worker is left out, and its thread makes it a new session every
//   `worker_retry_interval` until it answers again; then it takes functions again. A
//   function may thus run twice when its worker died after its updates reached the ps
//   tasks but before the answer came back (TensorFlow's coordinator has the same
//   at-least-once rule); it is never lost.
// - Any other error (a ps task lost, a kernel's error) is the program's: that function's
//   RemoteValue gets it, the functions still queued are cancelled, and Join() (or the next
//   Schedule) returns it once. After a ps task was lost every worker's session is remade
//   (the old ones are bound to the lost incarnation), so the program can restore a
//   checkpoint and go on.
//
// Thread-safe.
#ifndef TENSORWEAVE_TRAIN_CLUSTER_COORDINATOR_H_
#define TENSORWEAVE_TRAIN_CLUSTER_COORDINATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/session.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::train {

// What one worker runs for a function: the tensor names its replica is fed with, fetches
// and the nodes it runs for their effects.
struct WorkerStep {
  std::vector<std::string> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

// A function as every worker runs it: `per_worker[i]` is worker i's replica (one entry
// for every worker, or a single entry every worker runs as it is).
struct ScheduledFunction {
  std::string name;  // for errors and logs
  std::vector<WorkerStep> per_worker;
};

// The result of a scheduled function, ready once a worker ran it (or it failed or was
// cancelled). Thread-safe.
class RemoteValue {
 public:
  bool IsReady() const;
  // Waits for the function, then its fetches in order, or its error: the kernel's or the
  // ps task's error, Cancelled when it was dropped (another function failed first, or the
  // coordinator was destroyed).
  StatusOr<std::vector<Tensor>> Fetch() const;
  // Fetch with a limit: DeadlineExceeded when the function has not run within `timeout`.
  StatusOr<std::vector<Tensor>> Fetch(absl::Duration timeout) const;
  // The worker that ran it (-1 until it has run, or when it never did).
  int worker() const;

  // For the coordinator: sets the result, once.
  void Set(int worker, StatusOr<std::vector<Tensor>> result);

 private:
  mutable absl::Mutex mu_;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  int worker_ ABSL_GUARDED_BY(mu_) = -1;
  Status status_ ABSL_GUARDED_BY(mu_);
  std::vector<Tensor> values_ ABSL_GUARDED_BY(mu_);
};

struct ClusterCoordinatorOptions {
  // The master of every worker, "grpc://host:port", in task order.
  std::vector<std::string> worker_targets;
  // The job of those workers, for each session's device filter "/job:<job>/task:<i>".
  std::string worker_job = "worker";
  // The tasks every worker's steps share (the model's variables): the rest of each
  // session's device filters.
  std::vector<std::string> shared_tasks = {"/job:ps"};
  // TLS and the step timeout of the workers' sessions (target and filters are set here).
  SessionOptions session;
  // How often a failed worker is tried again.
  absl::Duration worker_retry_interval = absl::Milliseconds(500);
};

struct ClusterCoordinatorStats {
  int64_t scheduled = 0;    // functions scheduled
  int64_t completed = 0;    // functions run to success
  int64_t failed = 0;       // functions that ended with the program's error or cancelled
  int64_t rescheduled = 0;  // functions given back to the queue by a failed worker
  int64_t worker_failures = 0;
  int64_t worker_recoveries = 0;
  std::vector<int64_t> completed_by_worker;
  std::vector<bool> worker_available;
};

class ClusterCoordinator {
 public:
  // InvalidArgument for no workers or a target that is not grpc://. Does not connect:
  // each worker's thread makes its session before its first function.
  static StatusOr<std::unique_ptr<ClusterCoordinator>> Create(ClusterCoordinatorOptions options);
  // Cancels the functions still queued (their RemoteValues: Cancelled), ends the running
  // ones by closing the sessions, and joins the workers' threads.
  ~ClusterCoordinator();
  ClusterCoordinator(const ClusterCoordinator&) = delete;
  ClusterCoordinator& operator=(const ClusterCoordinator&) = delete;

  // Adds `nodes` to the graph the workers run; each worker's session gets them before its
  // next function. InvalidArgument naming the node for a name already in the graph.
  Status ExtendGraph(const proto::GraphDef& nodes);

  // Queues `function` with `feeds` (one per WorkerStep::feeds entry). Returns at once. The
  // error of an earlier function that Join() has not returned yet is returned here instead
  // (and counts as returned), as TensorFlow's schedule raises it; InvalidArgument for a
  // function with no replica for some worker or the wrong number of feeds.
  StatusOr<std::shared_ptr<RemoteValue>> Schedule(std::shared_ptr<const ScheduledFunction> function,
                                                  std::vector<Tensor> feeds = {});
  // Waits until every scheduled function has run or failed. The first error since the
  // last Join (see above), once; OK otherwise.
  Status Join();
  // Whether every scheduled function has run; the pending error as Join's.
  StatusOr<bool> Done();

  // Runs `report` (fetches the names of the variables not initialized yet) on some worker
  // and, when any is not, `initialize`: the model is made once, and a coordinator that
  // starts again over ps tasks that hold the model keeps it. Waits; errors as Fetch's.
  Status InitializeModel(const WorkerStep& report, const WorkerStep& initialize);

  ClusterCoordinatorStats stats() const;
  int num_workers() const { return static_cast<int>(options_.worker_targets.size()); }

 private:
  struct Closure;
  struct Worker;
  explicit ClusterCoordinator(ClusterCoordinatorOptions options);

  void WorkerLoop(int index);
  // Makes the worker a new session holding the whole graph; a recoverable error when the
  // worker (or a shared task) does not answer.
  Status Connect(Worker& worker);
  // Sends the worker's session the nodes added since it last got any.
  Status SendNewNodes(Worker& worker);
  // Waits `worker_retry_interval` or until the coordinator stops (true).
  bool SleepUnlessStopping();
  // Hands a function's outcome on: a worker failure re-queues it; an error of the
  // program becomes the pending error and cancels the queue.
  void Finish(Worker& worker, std::unique_ptr<Closure> closure, StatusOr<std::vector<Tensor>> out);
  void FailQueuedLocked(const Status& cause) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status TakePendingErrorLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status Enqueue(std::unique_ptr<Closure> closure);

  const ClusterCoordinatorOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;

  mutable absl::Mutex mu_;
  absl::CondVar changed_;  // the queue, the running count or stopping_ changed
  std::deque<std::unique_ptr<Closure>> queue_ ABSL_GUARDED_BY(mu_);  // next at the front
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Status pending_error_ ABSL_GUARDED_BY(mu_);
  // A worker could not take the graph or the session options (not a fault of the cluster):
  // every later Schedule fails with it.
  Status broken_ ABSL_GUARDED_BY(mu_);
  // Bumped when a ps task was lost: a worker whose session is older makes a new one.
  int64_t session_generation_ ABSL_GUARDED_BY(mu_) = 0;
  ClusterCoordinatorStats stats_ ABSL_GUARDED_BY(mu_);

  mutable absl::Mutex graph_mu_;
  proto::GraphDef graph_ ABSL_GUARDED_BY(graph_mu_);
  std::unordered_set<std::string> node_names_ ABSL_GUARDED_BY(graph_mu_);
};

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_CLUSTER_COORDINATOR_H_
