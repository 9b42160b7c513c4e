// Graph-building functions for FIFO queues: shared by name (shared_name) across graphs,
// sessions and tasks, with blocking enqueue and dequeue that never hold a thread.
#ifndef TENSORWEAVE_OPS_QUEUE_OPS_H_
#define TENSORWEAVE_OPS_QUEUE_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

struct FIFOQueueOptions {
  std::vector<std::vector<int64_t>> shapes;  // empty: any shape; else one per component
  int64_t capacity = -1;                     // -1: unbounded
  std::string container;
  std::string shared_name;  // "": private to the session
};

// A queue handle (a DT_RESOURCE tensor) and its component types.
struct Queue {
  Output handle;
  std::vector<DataType> component_types;
  Operation op() const { return handle.op(); }
};

Queue FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
                const FIFOQueueOptions& options = {});
// Adds one element (one tensor per component); waits while the queue is full.
Operation QueueEnqueue(const Scope& scope, const Queue& queue, const InputList& components);
// Adds as many elements as the components' first dimension.
Operation QueueEnqueueMany(const Scope& scope, const Queue& queue, const InputList& components);
// Takes one element; waits while empty; OutOfRange once closed and empty.
std::vector<Output> QueueDequeue(const Scope& scope, const Queue& queue);
// Takes n elements stacked along a new first dimension; OutOfRange if closed with fewer.
std::vector<Output> QueueDequeueMany(const Scope& scope, const Queue& queue, Input n);
// Like QueueDequeueMany, but once closed returns what is left (at least one element).
std::vector<Output> QueueDequeueUpTo(const Scope& scope, const Queue& queue, Input n);
Operation QueueClose(const Scope& scope, const Queue& queue, bool cancel_pending_enqueues = false);
Output QueueSize(const Scope& scope, const Queue& queue);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_QUEUE_OPS_H_
