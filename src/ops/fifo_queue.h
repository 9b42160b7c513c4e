// FIFOQueueResource: a queue of tuples of tensors, held by a device's ResourceMgr and
// shared by name. First in, first out by default; QueueOrder makes it TF's
// RandomShuffleQueue (a uniformly random element, keeping min_after_dequeue back until the
// queue closes), PaddingFIFOQueue (DequeueMany pads) or PriorityQueue (component 0, an
// int64 scalar, first the smallest).
//
// Waiting never holds a thread: an enqueue onto a full queue or a dequeue from an empty one
// is an "attempt" kept in the queue with a callback, completed when another operation makes
// room or data, when the queue closes, or when the step is cancelled.
#ifndef TENSORWEAVE_SRC_OPS_FIFO_QUEUE_H_
#define TENSORWEAVE_SRC_OPS_FIFO_QUEUE_H_

#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/framework/attr_value.h"
#include "src/framework/cancellation.h"
#include "src/framework/resource_mgr.h"

namespace tw {

struct QueueOrder {
  enum class Kind { kFifo, kPaddingFifo, kRandomShuffle, kPriority };
  Kind kind = Kind::kFifo;
  int64_t min_after_dequeue = 0;  // kRandomShuffle
  int64_t seed = 0, seed2 = 0;    // kRandomShuffle: both 0 draw fresh randomness
  friend bool operator==(const QueueOrder&, const QueueOrder&) = default;
};

// "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue".
const char* QueueKindName(QueueOrder::Kind kind);

// Thread-safe. Callbacks run outside the queue's lock, on the thread that completed them.
class FIFOQueueResource : public ResourceBase,
                          public std::enable_shared_from_this<FIFOQueueResource> {
 public:
  static constexpr char kTypeName[] = "FIFOQueue";
  using Tuple = std::vector<Tensor>;  // one tensor per component
  using EnqueueDone = std::function<void(const Status&)>;
  using DequeueDone = std::function<void(StatusOr<std::vector<Tuple>>)>;

  // capacity < 0: unbounded. `shapes` is empty or one (partial) shape per component.
  FIFOQueueResource(std::string name, std::vector<DataType> types, std::vector<PartialShape> shapes,
                    int64_t capacity, QueueOrder order = {});
  // Attempts still waiting when the queue goes (its container was cleared: CleanupAll,
  // Reset, the end of an isolated session) end with Cancelled; they would otherwise never
  // end, and their steps with them.
  ~FIFOQueueResource() override;

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override {
    return std::string(QueueKindName(order_.kind)) + " '" + name_ + "'";
  }
  std::optional<Gauge> MetricsGauge() const override {
    return Gauge{"tw_queue_size", "Elements in a queue.", static_cast<double>(size())};
  }

  // InvalidArgument when a queue of this name exists with another capacity, types, shapes
  // or order.
  Status MatchesSpec(const std::vector<DataType>& types, const std::vector<PartialShape>& shapes,
                     int64_t capacity, QueueOrder order = {}) const;
  // InvalidArgument when `tuple` does not fit the component types and shapes, in
  // TensorFlow's words ("Shape mismatch in tuple component 0. Expected [3,3], got [3,4]").
  Status ValidateTuple(const Tuple& tuple) const;
  // The same for a batch of EnqueueMany: each component has rank >= 1 and the shape
  // [n] + its component shape, n the first component's first dimension (with no shapes
  // given, only the first dimensions must agree).
  Status ValidateManyTuple(const Tuple& batch) const;

  // Adds the tuples in order, waiting for room. Cancelled when the queue is closed (before
  // or, with cancel_pending_enqueues, while waiting) or the step is cancelled.
  void Enqueue(std::vector<Tuple> tuples, CancellationManager* cm, EnqueueDone done);
  // Takes `n` tuples, waiting for them. When the queue is closed and fewer remain:
  // OutOfRange, unless `allow_partial` (DequeueUpTo) and at least one remains.
  // Cancelled when the step is cancelled (the queue keeps its elements).
  void Dequeue(int64_t n, bool allow_partial, CancellationManager* cm, DequeueDone done);
  // Closes the queue, as TensorFlow's QueueBase::Close does:
  // - cancel_pending_enqueues == false: the close waits in line behind the enqueues pending
  //   when it was asked for; `done` runs (OK) once they have all been served or cancelled
  //   and the queue is closed. Enqueues asked for after it are Cancelled. If the queue is
  //   already closed when the close's turn comes, `done` gets Cancelled
  //   "Queue '<name>' is already closed.". Waiting, the close is cancelled with the step
  //   (`cm`, may be null): Cancelled "Close operation was cancelled", the queue left open.
  //   TensorFlow's close cannot be cancelled; ours can, because no kernel may wait forever.
  // - cancel_pending_enqueues == true: closes at once, cancels every pending enqueue (and
  //   pending close) and runs `done` with OK, also on a queue already closed (as TensorFlow).
  // Either way, pending dequeues that can no longer be served then fail with OutOfRange.
  void Close(bool cancel_pending_enqueues, CancellationManager* cm, EnqueueDone done);
  int64_t size() const;
  // True once a close has taken effect: at once with cancel_pending_enqueues, else when the
  // close's turn came behind the enqueues pending before it (a close still waiting, or one
  // cancelled with its step, leaves the queue open).
  bool is_closed() const;
  // Waits up to `timeout` until at least `n` dequeues (`dequeues`), or enqueues and closes,
  // are waiting in line; false when they are not by then. For tests that must know a step
  // is blocked on the queue before they act.
  bool AwaitWaiting(bool dequeues, size_t n, absl::Duration timeout) const;
  const std::vector<DataType>& component_types() const { return types_; }
  // True when the queue was given one shape per component: DequeueMany and DequeueUpTo
  // need them (TensorFlow's "specified shapes").
  bool has_shapes() const { return !shapes_.empty(); }
  const QueueOrder& order() const { return order_; }

 private:
  // The checks ValidateTuple and ValidateManyTuple share: the number and types of components.
  Status ValidateComponentCountAndTypes(const Tuple& tuple) const;

  struct Attempt {
    int64_t id = 0;
    bool is_enqueue = false;  // enqueues and closes wait in one line (enqueuers_)
    bool is_close = false;
    std::deque<Tuple> pending;     // enqueue: tuples still to add
    int64_t wanted = 0;            // dequeue: how many
    bool allow_partial = false;    // dequeue: DequeueUpTo
    std::vector<Tuple> collected;  // dequeue: taken so far
    CancellationManager* cm = nullptr;
    CancellationManager::Token token = 0;
    EnqueueDone enqueue_done;
    DequeueDone dequeue_done;
  };
  // A finished attempt whose callback still has to run (outside the lock).
  struct Completion {
    std::unique_ptr<Attempt> attempt;
    Status status;
  };

  void Start(std::unique_ptr<Attempt> attempt);
  // Serves waiting attempts as far as the queue's state allows.
  void FlushLocked(std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Cancel(int64_t id);
  // The status of an attempt cancelled with its step.
  static Status CancelledStatus(const Attempt& a);
  // What a close gets when another closed the queue first (TensorFlow's message).
  Status AlreadyClosed() const {
    return errors::Cancelled("Queue '", name_, "' is already closed.");
  }
  static void RunCompletions(std::vector<Completion> done);
  // Whether a dequeue may take an element now: a random shuffle queue keeps
  // min_after_dequeue elements back until it closes.
  bool CanTakeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes and returns the next element in the queue's order.
  Tuple TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string KindAndName() const { return DebugString(); }
  bool Full() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return capacity_ >= 0 && static_cast<int64_t>(queue_.size()) >= capacity_;
  }

  const std::string name_;
  const std::vector<DataType> types_;
  const std::vector<PartialShape> shapes_;
  const int64_t capacity_;
  const QueueOrder order_;

  mutable absl::Mutex mu_;
  std::deque<Tuple> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);  // kRandomShuffle
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<std::unique_ptr<Attempt>> enqueuers_ ABSL_GUARDED_BY(mu_);
  std::list<std::unique_ptr<Attempt>> dequeuers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_FIFO_QUEUE_H_
