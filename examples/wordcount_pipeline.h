// The word count's map-side round trips, each on a thread of its own so that a map task's
// counting never waits on the network: NameFetcher takes the next batch of a round's files
// while the current one is counted, LedgerCommitter writes counts into the reduce task's
// ledger in the background. On this project's 2-core machines a round trip takes 0.5-3 ms
// when the cores are busy counting, which is as long as counting a whole batch.
#ifndef TENSORWEAVE_EXAMPLES_WORDCOUNT_PIPELINE_H_
#define TENSORWEAVE_EXAMPLES_WORDCOUNT_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "examples/wordcount_state.h"

namespace tw::examples {

// Takes batches of (file index, path) from one round's queue, one batch ahead of the
// consumer. Batch sizes follow the queue (guided self-scheduling): what is left divided
// by twice the number of map tasks, at most `max_batch`, at least 1, so a few dozen
// dequeues serve thousands of files and the maps finish together.
//
// Thread-safe; Next() is meant for one consumer. `session` must outlive the fetcher;
// close it to interrupt a fetch.
class NameFetcher {
 public:
  struct Graph {
    Output batch_size;  // int32 placeholder, the n of the dequeue
    Output indices;     // QueueDequeueUpTo(queue, n): the int64 file indices...
    Output names;       // ...and their paths
    Output left;        // QueueSize(queue) after the dequeue
  };
  struct Batch {
    Tensor indices;
    Tensor names;
  };
  // Each dequeue gives up after `timeout` (DeadlineExceeded): a round's queue is full and
  // closed before anyone dequeues, unless its files task restarted since. `known_left`,
  // when the caller knows the queue's size, sizes the first batch; otherwise it is 1.
  NameFetcher(RemakingSession* session, Graph graph, int num_maps, int64_t max_batch,
              absl::Duration timeout, std::optional<int64_t> known_left = std::nullopt);
  ~NameFetcher();

  // The next batch; OutOfRange once the queue is closed and empty; or the error that
  // ended fetching. Once it returned an error, it returns it again.
  StatusOr<Batch> Next();

 private:
  // The next dequeue's n for `left` files in the queue.
  int64_t BatchSize(int64_t left) const;
  void Loop(int64_t first_n);
  bool SlotFreeOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !slot_.has_value() || stop_;
  }
  bool SlotFull() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return slot_.has_value(); }

  RemakingSession* const session_;
  const Graph graph_;
  const int num_maps_;
  const int64_t max_batch_;
  const absl::Duration timeout_;
  absl::Mutex mu_;
  std::optional<StatusOr<Batch>> slot_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// One file's entry of the ledger.
struct LedgerEntry {
  int64_t index = 0;
  int64_t words = 0;  // or kUnreadable
  int64_t bytes = 0;
};

// Writes entries into the ledger with ScatterUpdate steps, at most one in flight, each
// carrying every entry added since the previous one. A step that fails for a reason that
// may pass (IsRetryable: the reduce task restarting) is tried again on a remade session
// every `retry_interval`, entries kept, until it succeeds or Close(); writing an entry
// twice is harmless, so an entry is never lost for want of knowing whether it landed.
// Thread-safe. `session` must outlive the committer.
class LedgerCommitter {
 public:
  struct Graph {
    Output indices;  // int64 placeholders
    Output words;
    Output bytes;
    Operation write;  // ScatterUpdate of both ledger variables
  };
  LedgerCommitter(RemakingSession* session, Graph graph,
                  absl::Duration retry_interval = absl::Milliseconds(100));
  ~LedgerCommitter();

  void Add(const std::vector<LedgerEntry>& entries);
  // Waits up to `timeout` until every entry added so far is in the ledger: OK then;
  // DeadlineExceeded while some are still pending; the error that stopped the committer
  // (a step failing for good, or Cancelled after Close()).
  Status Flush(absl::Duration timeout);
  // Stops: entries not yet written are dropped (the ledger shows them as not counted). A
  // step in flight ends when its session is closed.
  void Close();

 private:
  void Loop();
  bool WorkOrClosing() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !pending_.empty() || closing_;
  }
  bool Settled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (pending_.empty() && in_flight_ == 0) || !status_.ok();
  }

  RemakingSession* const session_;
  const Graph graph_;
  const absl::Duration retry_interval_;
  absl::Mutex mu_;
  std::vector<LedgerEntry> pending_ ABSL_GUARDED_BY(mu_);
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_WORDCOUNT_PIPELINE_H_
