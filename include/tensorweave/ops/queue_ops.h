// Graph-building functions for FIFO queues: shared by name (shared_name) across graphs,
// sessions and tasks, with blocking enqueue and dequeue that never hold a thread.
#ifndef TENSORWEAVE_OPS_QUEUE_OPS_H_
#define TENSORWEAVE_OPS_QUEUE_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

struct FIFOQueueOptions {
  // Empty: any shape (then QueueDequeueMany/QueueDequeueUpTo are refused); else one per
  // component.
  std::vector<std::vector<int64_t>> shapes;
  int64_t capacity = -1;  // -1: unbounded
  // "": the device's default container; else [A-Za-z0-9.][A-Za-z0-9_.\-/]*, as TensorFlow
  // (InvalidArgument `container "<c>" contains invalid characters` when the queue runs).
  std::string container;
  std::string shared_name;  // "": private to the session; must not start with '_'
};

// A queue handle (a DT_RESOURCE tensor) and its component types.
struct Queue {
  Output handle;
  std::vector<DataType> component_types;
  Operation op() const { return handle.op(); }
};

Queue FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
                const FIFOQueueOptions& options = {});

// A FIFO queue whose elements may differ in shape: options.shapes (required) may have -1
// (unknown) dimensions; QueueDequeueMany pads each component to the batch's largest shape
// with zeros (empty strings).
Queue PaddingFIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
                       const FIFOQueueOptions& options);

struct RandomShuffleQueueOptions {
  FIFOQueueOptions queue;
  // Dequeues wait while the queue holds no more than this, so that what they take is well
  // mixed; once the queue closes they take what is left.
  int64_t min_after_dequeue = 0;
  int64_t seed = 0, seed2 = 0;  // both 0: a different order every run
};
// A queue that dequeues a uniformly random element (TF's RandomShuffleQueue).
Queue RandomShuffleQueue(const Scope& scope, const std::vector<DataType>& component_types,
                         const RandomShuffleQueueOptions& options = {});

// A queue of (int64 scalar priority, components...): the smallest priority is dequeued
// first. `component_types` and options.shapes (one per component, required) exclude the
// priority, which the returned Queue's component_types list first.
Queue PriorityQueue(const Scope& scope, const std::vector<DataType>& component_types,
                    const FIFOQueueOptions& options);
// Adds one element (one tensor per component); waits while the queue is full.
Operation QueueEnqueue(const Scope& scope, const Queue& queue, const InputList& components);
// Adds as many elements as the components' first dimension.
Operation QueueEnqueueMany(const Scope& scope, const Queue& queue, const InputList& components);
// Takes one element; waits while empty; OutOfRange once closed and empty.
std::vector<Output> QueueDequeue(const Scope& scope, const Queue& queue);
// Takes n elements stacked along a new first dimension; OutOfRange if closed with fewer.
// The queue needs component shapes (FIFOQueueOptions::shapes); otherwise InvalidArgument
// "FIFOQueue's DequeueMany and DequeueUpTo require the components to have specified
// shapes." as TensorFlow.
std::vector<Output> QueueDequeueMany(const Scope& scope, const Queue& queue, Input n);
// Like QueueDequeueMany, but once closed returns what is left (at least one element).
std::vector<Output> QueueDequeueUpTo(const Scope& scope, const Queue& queue, Input n);
// Closes the queue as TensorFlow does: without cancel_pending_enqueues the close waits
// behind the enqueues already pending and completes when they have been served (enqueues
// after it are Cancelled); Cancelled "Queue '<name>' is already closed." if another close
// came first. With cancel_pending_enqueues it closes at once, cancels pending enqueues and
// always succeeds. Dequeues then drain what is left, then get OutOfRange.
Operation QueueClose(const Scope& scope, const Queue& queue, bool cancel_pending_enqueues = false);
Output QueueSize(const Scope& scope, const Queue& queue);  // int32 scalar
// A bool scalar: whether the queue is closed. A close that waits behind pending enqueues
// (cancel_pending_enqueues false) closes the queue only when its turn comes.
Output QueueIsClosed(const Scope& scope, const Queue& queue);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_QUEUE_OPS_H_
