// A map task: takes the files of each round the reduce task hands out, counts their words
// and writes the counts into the ledger, until the cluster stops it (examples/wordcount.cc,
// "Exactly once").
#include <stdio.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "examples/word_counter.h"
#include "examples/wordcount_pipeline.h"
#include "examples/wordcount_state.h"
#include "examples/wordcount_tasks.h"

namespace tw::examples {
namespace {

constexpr int64_t kMaxBatch = 1024;  // files per dequeue step
constexpr absl::Duration kPoll = absl::Seconds(1);
constexpr absl::Duration kRetry = absl::Milliseconds(100);
constexpr absl::Duration kCheckInInterval = absl::Milliseconds(500);
constexpr absl::Duration kPrepareAtMost = absl::Seconds(2);
constexpr absl::Duration kStopGrace = absl::Seconds(10);  // StopCluster's own timeout
constexpr absl::Duration kFlushInterval = absl::Seconds(1);

class Mapper {
 public:
  Mapper(Server* server, const RunConfig& config, const WordcountArgs& args)
      : server_(server),
        watch_(server),
        index_(config.task_index()),
        num_maps_(config.cluster().CountTasks("map")),
        name_("map:" + std::to_string(index_)),
        verbose_(args.verbose),
        root_(Scope::NewRootScope()),
        shared_(MakeSharedState(root_)),
        check_in_(ops::QueueEnqueue(root_.WithOpName("check_in"), shared_.check_ins, {index_})),
        read_round_(ops::ReadVariable(root_.WithOpName("read_round"), shared_.round)),
        read_next_round_(
            ops::ReadVariable(root_.WithOpName("read_next_round"), shared_.next_round)),
        report_(ops::Placeholder(root_.WithOpName("report"), DT_INT64,
                                 {.shape = std::vector<int64_t>{2}})),
        send_report_(ops::QueueEnqueue(root_, shared_.done_reports, {report_})),
        take_news_(ops::QueueDequeue(root_.WithOpName("take_news"), RoundNews(root_, index_))),
        control_(root_, SessionFor({kFilesDevice, kReduceDevice})),
        ledger_root_(Scope::NewRootScope()),
        ledger_graph_(MakeLedgerGraph(ledger_root_)),
        ledger_session_(ledger_root_, SessionFor({kReduceDevice})),
        committer_(&ledger_session_, ledger_graph_) {}
  // Ends the committer's step in flight, which may be waiting for a reduce task that is gone.
  ~Mapper() {
    ledger_session_.Close();
    control_.Close();
  }

  int Run();

 private:
  // Only the tasks this map talks to: it never waits for the other maps.
  SessionOptions SessionFor(std::vector<std::string> devices) const {
    devices.push_back("/job:map/task:" + std::to_string(index_));
    return {.target = server_->target(), .device_filters = std::move(devices)};
  }
  static LedgerCommitter::Graph MakeLedgerGraph(const Scope& root) {
    SharedState shared = MakeSharedState(root);
    auto indices = ops::Placeholder(root.WithOpName("indices"), DT_INT64);
    auto words = ops::Placeholder(root.WithOpName("words"), DT_INT64);
    auto bytes = ops::Placeholder(root.WithOpName("bytes"), DT_INT64);
    const Scope reduce = root.WithDevice(kReduceDevice);
    auto write = ops::Group(root.WithOpName("write_ledger"),
                            {ops::ScatterUpdate(reduce, shared.counts, indices, words).op(),
                             ops::ScatterUpdate(reduce, shared.bytes, indices, bytes).op()});
    return {.indices = indices, .words = words, .bytes = bytes, .write = write};
  }

  // Runs a control step until it succeeds, on a remade session after a failure that may
  // pass. Cancelled once this task is stopped.
  StatusOr<std::vector<Tensor>> Control(const ClientSession::FeedList& feeds,
                                        const std::vector<Output>& fetches,
                                        const std::vector<Operation>& targets);
  // Builds and runs once the graph for the round reduce has filled but not handed out yet
  // (so that its first dequeue is not slower). False while there is none.
  bool Prepare();
  // The nodes that take files from round `id`'s queue, made on first use.
  const NameFetcher::Graph& DrainGraph(int64_t id);
  // Tells reduce this map is there (and, the first time, runs the report and ledger graphs
  // once, so that their first real run is not slower).
  void CheckIn();
  // The id of the round reduce hands out once it differs from `last`.
  StatusOr<int64_t> AwaitNewRound(int64_t last);
  // Counts the files of round `id` until its queue is empty, or the round is over.
  Status Drain(int64_t id);
  // Counts one batch; Cancelled when this task is stopped in the middle.
  Status CountBatch(const NameFetcher::Batch& batch);
  int Fail(const Status& s);
  void SaySummary();

  Server* const server_;
  StopWatch watch_;
  const int index_;
  const int num_maps_;
  const std::string name_;
  const bool verbose_;

  Scope root_;
  SharedState shared_;
  Operation check_in_;
  Output read_round_, read_next_round_, report_;
  Operation send_report_;
  std::vector<Output> take_news_;
  // Every step of the map's own thread, and its fetcher's: the rounds' nodes are added to
  // root_ before a round's fetcher starts, never while it runs.
  RemakingSession control_;
  Patience patience_;
  bool report_warmed_up_ = false, write_warmed_up_ = false;  // see CheckIn
  std::map<int64_t, NameFetcher::Graph> drain_graphs_;
  std::map<int64_t, int64_t> prepared_;  // round id -> its files, seen when prepared

  Scope ledger_root_;
  LedgerCommitter::Graph ledger_graph_;
  RemakingSession ledger_session_;
  LedgerCommitter committer_;

  FileWordCounter counter_;
  std::vector<LedgerEntry> entries_;  // counted, not yet given to the committer
  absl::Time last_flush_;
  int64_t files_ = 0, unreadable_ = 0, bytes_ = 0, words_ = 0;
  absl::Time start_;
};

StatusOr<std::vector<Tensor>> Mapper::Control(const ClientSession::FeedList& feeds,
                                              const std::vector<Output>& fetches,
                                              const std::vector<Operation>& targets) {
  while (!watch_.stopped()) {
    auto result = control_.Run(feeds, fetches, targets);
    if (result.ok()) patience_.Succeeded();
    if (result.ok() || !IsRetryable(result.status())) return result;
    if (patience_.FailedTooLong()) return Patience::GaveUp(result.status());
    if (!IsFailedPrecondition(result.status())) control_.Remake();
    watch_.WaitFor(kRetry);
  }
  return errors::Cancelled("this task was stopped");
}

StatusOr<int64_t> Mapper::AwaitNewRound(int64_t last) {
  absl::Time last_check_in = absl::InfinitePast();
  const absl::Time waiting_since = absl::Now();
  while (!watch_.stopped()) {
    auto round = control_.Run({}, {read_round_});
    if (!round.ok() && patience_.FailedTooLong()) return Patience::GaveUp(round.status());
    const bool none_yet = IsFailedPrecondition(round.status()) ||
                          (round.ok() && (*round)[0].scalar<int64_t>() == kNoRound);
    if (round.ok()) patience_.Succeeded();
    if (none_yet) {
      // No round yet: this reduce task (the first, or a restarted one) waits for every
      // map's check-in before its first, which it fills first. Repeated now and then, the
      // check-in reaches a reduce that restarted while this map was busy; reduce counts
      // each map once.
      // A map checks in once it has prepared the round reduce filled first, or, should
      // that fail for long, without: the warm-up only saves time.
      if (absl::Now() - last_check_in >= kCheckInInterval &&
          (Prepare() || absl::Now() - waiting_since >= kPrepareAtMost)) {
        CheckIn();
        last_check_in = absl::Now();
      }
    } else if (round.ok()) {
      const int64_t id = (*round)[0].scalar<int64_t>();
      if (id != last) return id;
    } else if (IsRetryable(round.status())) {
      control_.Remake();
      watch_.WaitFor(kRetry);
      continue;
    } else {
      return round.status();
    }
    // Woken by reduce's news of a round, or after a while to look again. The news names
    // the round: taken as it is, it saves a read. (Old news, of a round that is over, costs
    // a dequeue from a closed, empty queue and a report reduce ignores.)
    auto news = control_.Run({}, take_news_, {}, {.timeout = kCheckInInterval});
    if (news.ok()) {
      const int64_t id = (*news)[0].scalar<int64_t>();
      if (id != kNoRound && id != last) return id;
    }
  }
  return errors::Cancelled("this task was stopped");
}

bool Mapper::Prepare() {
  auto next = control_.Run({}, {read_next_round_});
  if (!next.ok()) {
    // Not filled yet (FailedPrecondition), or a task restarted: its next run is planned anew.
    if (IsRetryable(next.status()) && !IsFailedPrecondition(next.status())) control_.Remake();
    return false;
  }
  const int64_t id = (*next)[0].scalar<int64_t>();
  if (prepared_.count(id) > 0) return true;
  // Takes nothing (n = 0) but registers the round's dequeue with the tasks.
  const NameFetcher::Graph& graph = DrainGraph(id);
  auto warm = control_.Run({{graph.batch_size, Tensor::Scalar<int32_t>(0)}},
                           {graph.indices, graph.names, graph.left});
  if (warm.ok()) {
    prepared_[id] = (*warm)[2].scalar<int32_t>();
  } else if (IsRetryable(warm.status())) {
    control_.Remake();  // the files task restarted after the graph was registered there
  }
  return warm.ok();
}

const NameFetcher::Graph& Mapper::DrainGraph(int64_t id) {
  auto it = drain_graphs_.find(id);
  if (it != drain_graphs_.end()) return it->second;
  ops::Queue queue = RoundQueue(root_, id);
  auto n = ops::Placeholder(root_.WithOpName("batch_size"), DT_INT32);
  auto taken = ops::QueueDequeueUpTo(root_.WithOpName("take_files"), queue, n);
  // Read after the dequeue: what is left for every map, to size the next batch.
  auto left = ops::QueueSize(
      root_.WithOpName("files_left").WithControlDependencies({taken[0].op()}), queue);
  return drain_graphs_[id] = {
             .batch_size = n, .indices = taken[0], .names = taken[1], .left = left};
}

void Mapper::CheckIn() {
  // The first run of a graph registers it with the tasks it touches, a few milliseconds on
  // busy cores: done for the report and the ledger writes now, before the check-in, since
  // reduce starts the round (and the clock of the counting) once every map has checked in.
  // A report of round kNoRound is ignored, and an empty write is none. Each is retried at
  // the next check-in until it has succeeded once.
  if (!report_warmed_up_) {
    report_warmed_up_ =
        control_
            .Run({{report_, Tensor::FromVector<int64_t>({kNoRound, index_})}}, {}, {send_report_})
            .ok();
  }
  if (!write_warmed_up_) {
    auto empty = Tensor::FromVector<int64_t>({});
    write_warmed_up_ = ledger_session_
                           .Run({{ledger_graph_.indices, empty},
                                 {ledger_graph_.words, empty},
                                 {ledger_graph_.bytes, empty}},
                                {}, {ledger_graph_.write})
                           .ok();
  }
  control_.Run({}, {}, {check_in_}).IgnoreError();
}

Status Mapper::CountBatch(const NameFetcher::Batch& batch) {
  auto indices = batch.indices.flat<int64_t>();
  auto paths = batch.names.flat<std::string>();
  for (int64_t i = 0; i < batch.indices.num_elements(); ++i) {
    if (watch_.stopped()) return errors::Cancelled("this task was stopped");
    ++files_;
    auto c = counter_.Count(paths[i]);
    if (!c.ok()) {
      ++unreadable_;
      Complain(std::string(c.status().message()));
      entries_.push_back({.index = indices[i], .words = kUnreadable, .bytes = 0});
    } else {
      if (verbose_) Say(std::to_string(c->words) + " words in " + paths[i]);
      bytes_ += c->bytes;
      words_ += c->words;
      entries_.push_back({.index = indices[i], .words = c->words, .bytes = c->bytes});
    }
    if (absl::Now() - last_flush_ >= kFlushInterval) {  // a long batch: keep the total moving
      committer_.Add(std::exchange(entries_, {}));
      last_flush_ = absl::Now();
    }
  }
  committer_.Add(std::exchange(entries_, {}));
  last_flush_ = absl::Now();
  return OkStatus();
}

Status Mapper::Drain(int64_t id) {
  const NameFetcher::Graph graph = DrainGraph(id);
  // Prepared before the clock: its size then sizes the first batch, saving a dequeue.
  std::optional<int64_t> known_left;
  if (auto it = prepared_.find(id); it != prepared_.end()) known_left = it->second;
  while (true) {
    NameFetcher fetcher(&control_, graph, num_maps_, kMaxBatch, kPoll,
                        std::exchange(known_left, std::nullopt));
    while (true) {
      auto batch = fetcher.Next();
      if (IsOutOfRange(batch.status())) return OkStatus();  // closed and empty: all taken
      if (watch_.stopped()) return errors::Cancelled("this task was stopped");
      if (batch.ok()) {
        patience_.Succeeded();
        TW_RETURN_IF_ERROR(CountBatch(*batch));
        continue;
      }
      if (!IsRetryable(batch.status())) return batch.status();
      if (patience_.FailedTooLong()) return Patience::GaveUp(batch.status());
      // The files task restarted or cannot be reached; reduce starts a new round when it
      // sees that, and this one is then over.
      auto round = control_.Run({}, {read_round_});
      if (round.ok() && (*round)[0].scalar<int64_t>() != id) return OkStatus();
      control_.Remake();
      if (watch_.WaitFor(kRetry)) return errors::Cancelled("this task was stopped");
      break;
    }
  }
}

void Mapper::SaySummary() {
  char summary[200];
  snprintf(summary, sizeof(summary), "%lld words in %lld files (%lld bytes) in %.3f s",
           static_cast<long long>(words_), static_cast<long long>(files_),
           static_cast<long long>(bytes_), absl::ToDoubleSeconds(absl::Now() - start_));
  Say(summary + (unreadable_ > 0 ? ", " + std::to_string(unreadable_) + " unreadable" : ""));
}

int Mapper::Fail(const Status& s) {
  // The cluster stopped: the word count is over. A step that a peer cancelled as it
  // stopped may fail before the stop reaches this task.
  if (watch_.stopped() || (IsCancelled(s) && watch_.WaitFor(kStopGrace))) {
    SaySummary();
    return 0;
  }
  Complain(name_ + ": " + std::string(s.message()));
  return 1;
}

int Mapper::Run() {
  start_ = last_flush_ = absl::Now();
  int64_t round = kNoRound;
  while (true) {
    auto next = AwaitNewRound(round);
    if (!next.ok()) return Fail(next.status());
    round = *next;
    if (Status s = Drain(round); !s.ok()) return Fail(s);
    // Reported only once its counts are in the ledger: reduce then knows that what the
    // ledger still lacks was lost.
    Status flushed;
    const absl::Time flush_start = absl::Now();
    while (IsDeadlineExceeded(flushed = committer_.Flush(kPoll))) {
      if (watch_.stopped()) return Fail(errors::Cancelled("this task was stopped"));
      if (absl::Now() - flush_start > Patience::kLimit) return Fail(Patience::GaveUp(flushed));
    }
    if (!flushed.ok()) return Fail(flushed);
    auto sent =
        Control({{report_, Tensor::FromVector<int64_t>({round, index_})}}, {}, {send_report_});
    if (!sent.ok()) return Fail(sent.status());
  }
}

}  // namespace

int RunMap(Server* server, const RunConfig& config, const WordcountArgs& args) {
  Mapper mapper(server, config, args);
  return mapper.Run();
}

}  // namespace tw::examples
