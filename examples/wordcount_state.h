// The word count's shared state and the session that outlives task restarts: what every
// task of the exactly-once word count (examples/wordcount.cc) agrees on.
#ifndef TENSORWEAVE_EXAMPLES_WORDCOUNT_STATE_H_
#define TENSORWEAVE_EXAMPLES_WORDCOUNT_STATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tensorweave/tensorweave.h"

namespace tw::examples {

inline constexpr char kFilesDevice[] = "/job:files/task:0";
inline constexpr char kReduceDevice[] = "/job:reduce/task:0";

// What the ledger holds for a file besides its word count.
inline constexpr int64_t kNotCounted = -1;
inline constexpr int64_t kUnreadable = -2;
// What the round variable holds before reduce hands out its first round.
inline constexpr int64_t kNoRound = 0;

// The state the tasks share, as nodes of one task's graph (each task builds what it uses;
// variables are found by name, queues by shared_name, on the task that holds them).
struct SharedState {
  // files:0, the input paths (string vector), in LIST_FILE's order: a file's index in it
  // is its name everywhere else. Each start of the files task assigns it again.
  ops::Variable names;
  // reduce:0, the ledger, one entry per file: its words (kNotCounted, kUnreadable) and
  // bytes. Maps write entries with ScatterUpdate, so a count sent twice is counted once.
  ops::Variable counts;
  ops::Variable bytes;
  // reduce:0, the id of the round being handed out (int64; ids are unique, not ordered),
  // kNoRound before the first.
  ops::Variable round;
  // reduce:0, the id of the round filled and not yet handed out, so that the maps can build
  // their graphs for it before the counting starts.
  ops::Variable next_round;
  // reduce:0, a map's index, sent by every map session that (re)connects.
  ops::Queue check_ins;
  // reduce:0, (round id, map index): the map has taken all of that round's files and its
  // counts of them are in the ledger.
  ops::Queue done_reports;
};
SharedState MakeSharedState(const Scope& root);

// files:0, round `round_id`'s queue of (file index, path): filled and closed by reduce
// before it publishes the round, so a dequeue never waits on it (but on a files task that
// restarted since, where it is new and empty).
ops::Queue RoundQueue(const Scope& root, int64_t round_id);

// reduce:0, map `map_index`'s news of rounds: reduce puts each new round's id here when it
// publishes it, so that a waiting map wakes at once. Only a wake-up: the round variable
// says which round is current (a restarted map may find old news here).
ops::Queue RoundNews(const Scope& root, int map_index);

// A new round id, different from `previous` and from every id of an earlier reduce task:
// the wall clock in microseconds, at least previous + 1.
int64_t NextRoundId(int64_t previous);

// Whether a failed step may succeed when tried again: a task restarted (Aborted, for a
// graph planned for its earlier incarnation), cannot be reached (Unavailable), holds state
// its restart has not rebuilt yet (FailedPrecondition: an uninitialized variable), or the
// step timed out (DeadlineExceeded).
bool IsRetryable(const Status& status);

// Tells a retry loop when to give up on tasks that cannot be reached: when its failures
// have gone on, without a success between them, for as long as a new session waits for the
// cluster (ServerOptions::wait_for_cluster's default). A task whose peers are gone for good
// (the job ended while it was being restarted) then fails with the last error instead of
// retrying for ever. Thread-compatible.
class Patience {
 public:
  static constexpr absl::Duration kLimit = absl::Minutes(5);
  void Succeeded() { first_failure_ = absl::InfiniteFuture(); }
  // Records a failure; true once failures have gone on for longer than kLimit.
  bool FailedTooLong() {
    const absl::Time now = absl::Now();
    if (first_failure_ == absl::InfiniteFuture()) first_failure_ = now;
    return now - first_failure_ > kLimit;
  }
  // `last_error`, saying that the task gave up.
  static Status GaveUp(const Status& last_error);

 private:
  absl::Time first_failure_ = absl::InfiniteFuture();  // of the failures since a success
};

// How long a restarted task (RuntimeSettings::restart_count > 0: `tw launch` restarted it)
// waits for the task its work depends on before it concludes that the count ended without
// it (examples/wordcount.cc, "Restarted after the end"). Its peers were up before it died,
// and a peer being restarted itself is back within the launcher's restart delay (1 s by
// default) and a start; the count's end stops every task for good. Also the restarted
// task's ServerOptions::wait_for_cluster, so that no step waits longer for a peer that is
// gone (its loops retry what fails, under Patience).
inline constexpr absl::Duration kRestartedWait = absl::Seconds(10);

// Runs a step on `peer` (a device: kReduceDevice, kFilesDevice) from `server`'s task until
// one succeeds or kRestartedWait has passed since the first try. OK once the peer has
// answered; else the last failure (Unavailable "CreateSession gave up after 10s waiting
// for /job:reduce/replica:0/task:0", with a wait_for_cluster of kRestartedWait).
Status ReachPeer(Server* server, const std::string& peer);

// A ClientSession for one graph that can be made again: a session whose graph was planned
// for a task that has since restarted fails every step on it with Aborted, so after a
// retryable failure the caller calls Remake() and tries again. The graph must not grow
// while another thread runs a step (a Scope is built from one thread). Thread-safe.
class RemakingSession {
 public:
  RemakingSession(Scope scope, SessionOptions options);
  ~RemakingSession();

  // One attempt on the current session.
  StatusOr<std::vector<Tensor>> Run(const ClientSession::FeedList& feeds,
                                    const std::vector<Output>& fetches,
                                    const std::vector<Operation>& targets = {},
                                    const RunOptions& options = {});
  // Replaces the session: later steps are planned afresh (and wait for the tasks).
  void Remake();
  // Closes for good: steps in flight and later ones fail with Cancelled.
  void Close();

 private:
  std::shared_ptr<ClientSession> Current();

  const Scope scope_;
  const SessionOptions options_;
  absl::Mutex mu_;
  std::shared_ptr<ClientSession> session_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_WORDCOUNT_STATE_H_
