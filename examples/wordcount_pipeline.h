// The word count's map-side round trips, each on a thread of its own so that a map task's
// counting never waits on the network: NameFetcher takes the next batch of file names
// while the current one is counted, CountAdder adds counts to the reduce task's counter in
// the background. On this project's 2-core machines a round trip takes 0.5-3 ms when the
// cores are busy counting, which is as long as counting a whole batch.
#ifndef TENSORWEAVE_EXAMPLES_WORDCOUNT_PIPELINE_H_
#define TENSORWEAVE_EXAMPLES_WORDCOUNT_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "tensorweave/session.h"

namespace tw::examples {

// Takes batches of file names from the file-name queue, one batch ahead of the consumer.
// Batch sizes follow the queue (guided self-scheduling): what is left divided by twice the
// number of map tasks, at most `max_batch`, at least 1, so a few dozen dequeues serve
// thousands of files and the maps finish together.
//
// Thread-safe; Next() is meant for one consumer. `session` must outlive the fetcher; close
// it to interrupt a fetch that waits on the queue.
class NameFetcher {
 public:
  struct Graph {
    Output batch_size;  // int32 placeholder, the n of the dequeue
    Output names;       // QueueDequeueUpTo(queue, n): a string vector
    Output left;        // QueueSize(queue) after the dequeue
  };
  NameFetcher(ClientSession* session, Graph graph, int num_maps, int64_t max_batch);
  ~NameFetcher();

  // The next batch (a string vector); OutOfRange once the queue is closed and empty; or
  // the error that ended fetching. Once it returned an error, it returns it again.
  StatusOr<Tensor> Next();

 private:
  void Loop();
  bool SlotFreeOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !slot_.has_value() || stop_;
  }
  bool SlotFull() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return slot_.has_value(); }

  ClientSession* const session_;
  const Graph graph_;
  const int num_maps_;
  const int64_t max_batch_;
  absl::Mutex mu_;
  std::optional<StatusOr<Tensor>> slot_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Adds counts to a variable with AssignAdd steps, at most one in flight, each carrying
// everything added since the previous one. Thread-safe. `session` must outlive it.
class CountAdder {
 public:
  struct Graph {
    Output count;   // int64 placeholder
    Operation add;  // AssignAdd(variable, count)
  };
  CountAdder(ClientSession* session, Graph graph);
  ~CountAdder();

  // Queues `words` to be added soon.
  void Add(int64_t words);
  // Waits until everything added so far is in the variable; the first error of an
  // AssignAdd step otherwise. No Add after Finish.
  Status Finish();

 private:
  void Loop();
  bool WorkOrFinishing() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pending_ != 0 || finishing_;
  }

  ClientSession* const session_;
  const Graph graph_;
  absl::Mutex mu_;
  int64_t pending_ ABSL_GUARDED_BY(mu_) = 0;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_WORDCOUNT_PIPELINE_H_
