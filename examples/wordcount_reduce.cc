// The reduce task: owns the ledger and hands out rounds until every file is counted, then
// prints the total and stops the cluster (examples/wordcount.cc, "Exactly once").
#include <stdio.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "examples/wordcount_state.h"
#include "examples/wordcount_tasks.h"

namespace tw::examples {
namespace {

constexpr absl::Duration kPoll = absl::Seconds(1);  // longest wait before looking around
constexpr absl::Duration kRetry = absl::Milliseconds(100);
constexpr absl::Duration kProgressInterval = absl::Seconds(2);

// The ledger's sums.
struct Tally {
  int64_t files = 0, not_counted = 0, unreadable = 0, words = 0, bytes = 0;
  std::vector<int64_t> holes;  // indices of the files not counted yet
};
Tally Sum(const Tensor& counts, const Tensor& bytes) {
  Tally t;
  auto c = counts.flat<int64_t>();
  auto b = bytes.flat<int64_t>();
  t.files = counts.num_elements();
  for (int64_t i = 0; i < t.files; ++i) {
    if (c[i] == kNotCounted) {
      t.holes.push_back(i);
    } else if (c[i] == kUnreadable) {
      ++t.unreadable;
    } else {
      t.words += c[i];
      t.bytes += b[i];
    }
  }
  t.not_counted = static_cast<int64_t>(t.holes.size());
  return t;
}

class Reducer {
 public:
  Reducer(Server* server, int num_maps)
      : server_(server),
        watch_(server),
        num_maps_(num_maps),
        root_(Scope::NewRootScope()),
        shared_(MakeSharedState(root_)),
        names_(ops::ReadVariable(root_.WithOpName("read_names").WithDevice(kFilesDevice),
                                 shared_.names)),
        size_(ops::Placeholder(root_.WithOpName("ledger_size"), DT_INT64,
                               {.shape = std::vector<int64_t>{1}})),
        init_(ops::Group(root_,
                         {ops::Assign(root_, shared_.counts, ops::Fill(root_, size_, kNotCounted),
                                      {.validate_shape = false})
                              .op(),
                          ops::Assign(root_, shared_.bytes, ops::Fill(root_, size_, int64_t{0}),
                                      {.validate_shape = false})
                              .op()})),
        counts_(ops::ReadVariable(root_.WithOpName("read_counts"), shared_.counts)),
        bytes_(ops::ReadVariable(root_.WithOpName("read_bytes"), shared_.bytes)),
        round_id_(ops::Placeholder(root_.WithOpName("round_id"), DT_INT64)),
        publish_(MakeTellMaps(shared_.round, round_id_, "publish_round")),
        // News of no round: a waiting map looks at once, prepares the round, checks in.
        announce_(MakeTellMaps(shared_.next_round, kNoRound, "announce_round")),
        take_check_in_(ops::QueueDequeue(root_.WithOpName("take_check_in"), shared_.check_ins)),
        take_report_(ops::QueueDequeue(root_.WithOpName("take_report"), shared_.done_reports)),
        // Not the maps: they come and go, and the ledger does not need them.
        session_(root_,
                 {.target = server->target(), .device_filters = {kFilesDevice, kReduceDevice}}) {}

  int Run();

 private:
  // The per-round nodes: fill round `id`'s queue with the given files and close it, in one
  // step on the files task; and whether the queue is closed, which it no longer is after a
  // restart of the files task (the first step that names it there makes it anew, open).
  struct RoundNodes {
    int64_t id = 0;
    int64_t files = 0;  // handed out in it
    Output indices;
    Operation fill_and_close;
    Output closed;
  };
  RoundNodes MakeRound(int64_t id);
  // Sets `variable` to round_id_, then puts `news` in every map's news queue.
  Operation MakeTellMaps(const ops::Variable& variable, Input news, const std::string& name);

  // Runs a step until it succeeds, remaking the session after failures that may pass;
  // the first other error, the last one when failures go on too long (patience_), or Cancelled once
  // the cluster stops this task.
  StatusOr<std::vector<Tensor>> Retry(const ClientSession::FeedList& feeds,
                                      const std::vector<Output>& fetches,
                                      const std::vector<Operation>& targets = {});
  StatusOr<Tally> ReadLedger();
  // The paths the files task holds, in order.
  StatusOr<std::vector<std::string>> ReadList();
  Status InitLedger();
  Status AwaitCheckIns();
  // A round with the files the ledger lacks, its queue filled and closed (not published
  // yet); none when the ledger lacks no file.
  StatusOr<std::optional<RoundNodes>> FillRound();
  // Publishes `first` and waits for it, then hands out what the ledger still lacks, round
  // after round, until it lacks none.
  Status CountEverything(std::optional<RoundNodes> first);
  // Waits for every map's report of round `id`: OK when all came, Aborted when the files
  // task restarted meanwhile (a new round is due), Cancelled when this task was stopped.
  Status AwaitRound(const RoundNodes& round);
  void MaybeSayProgress();
  int Finish();
  int Fail(const Status& s);

  Server* const server_;
  StopWatch watch_;
  const int num_maps_;
  Scope root_;
  SharedState shared_;
  Output names_, size_;
  Operation init_;
  Output counts_, bytes_, round_id_;
  Operation publish_, announce_;
  std::vector<Output> take_check_in_, take_report_;
  RemakingSession session_;
  Patience patience_;

  std::vector<std::string> list_;  // as the files task read it first
  int64_t files_ = 0;
  int64_t round_ = 0;
  int rounds_ = 0;
  absl::Time start_, end_, last_progress_;
};

Operation Reducer::MakeTellMaps(const ops::Variable& variable, Input news,
                                const std::string& name) {
  auto set = ops::Assign(root_.WithOpName(name), variable, round_id_);
  std::vector<Operation> told;
  for (int i = 0; i < num_maps_; ++i) {
    told.push_back(
        ops::QueueEnqueue(root_.WithControlDependencies({set.op()}), RoundNews(root_, i), {news}));
  }
  return ops::Group(root_.WithOpName(name + "_told"), told);
}

Reducer::RoundNodes Reducer::MakeRound(int64_t id) {
  const Scope files = root_.WithDevice(kFilesDevice);
  ops::Queue queue = RoundQueue(root_, id);
  auto indices = ops::Placeholder(root_.WithOpName("round_files"), DT_INT64,
                                  {.shape = std::vector<int64_t>{-1}});
  auto paths = ops::Gather(files, ops::ReadVariable(files, shared_.names), indices);
  auto fill = ops::QueueEnqueueMany(files, queue, {indices, paths});
  auto close = ops::QueueClose(files.WithControlDependencies({fill}), queue);
  return {.id = id,
          .indices = indices,
          .fill_and_close = close,
          .closed = ops::QueueIsClosed(files, queue)};
}

StatusOr<std::vector<Tensor>> Reducer::Retry(const ClientSession::FeedList& feeds,
                                             const std::vector<Output>& fetches,
                                             const std::vector<Operation>& targets) {
  while (true) {
    auto result = session_.Run(feeds, fetches, targets);
    if (watch_.stopped()) return errors::Cancelled("this task was stopped");
    if (result.ok()) patience_.Succeeded();
    if (result.ok() || !IsRetryable(result.status())) return result;
    if (patience_.FailedTooLong()) return Patience::GaveUp(result.status());
    session_.Remake();
    if (watch_.WaitFor(kRetry)) return errors::Cancelled("this task was stopped");
  }
}

StatusOr<std::vector<std::string>> Reducer::ReadList() {
  TW_ASSIGN_OR_RETURN(auto names, Retry({}, {names_}));
  std::vector<std::string> list;
  for (const std::string& name : names[0].flat<std::string>()) list.push_back(name);
  return list;
}

StatusOr<Tally> Reducer::ReadLedger() {
  TW_ASSIGN_OR_RETURN(auto ledger, Retry({}, {counts_, bytes_}));
  return Sum(ledger[0], ledger[1]);
}

Status Reducer::InitLedger() {
  // Waits while the files task has not read its list (its variable is uninitialized).
  TW_ASSIGN_OR_RETURN(list_, ReadList());
  files_ = static_cast<int64_t>(list_.size());
  TW_RETURN_IF_ERROR(Retry({{size_, Tensor::FromVector<int64_t>({files_})}}, {}, {init_}).status());
  // "No round yet", published as a round is: the maps check in, and the publishing graph's
  // first run (its registration with the tasks) comes before the clock of the counting.
  return Retry({{round_id_, Tensor::Scalar<int64_t>(kNoRound)}}, {}, {publish_}).status();
}

Status Reducer::AwaitCheckIns() {
  std::set<int32_t> maps;
  while (static_cast<int>(maps.size()) < num_maps_) {
    auto in = session_.Run({}, take_check_in_, {}, {.timeout = kPoll});
    if (watch_.stopped()) return errors::Cancelled("this task was stopped");
    if (in.ok()) {
      maps.insert((*in)[0].scalar<int32_t>());
    } else if (!IsDeadlineExceeded(in.status())) {
      if (!IsRetryable(in.status())) return in.status();
      session_.Remake();
    }
  }
  return OkStatus();
}

void Reducer::MaybeSayProgress() {
  if (absl::Now() - last_progress_ < kProgressInterval) return;
  last_progress_ = absl::Now();
  auto ledger = session_.Run({}, {counts_, bytes_});
  if (!ledger.ok()) return;
  const Tally t = Sum((*ledger)[0], (*ledger)[1]);
  Say("running total: " + std::to_string(t.words) + " (" + std::to_string(t.files - t.not_counted) +
      " of " + std::to_string(t.files) + " files)");
}

Status Reducer::AwaitRound(const RoundNodes& round) {
  std::set<int64_t> done;
  absl::Time last_probe = absl::Now();
  while (static_cast<int>(done.size()) < num_maps_) {
    auto report = session_.Run({}, take_report_, {}, {.timeout = kPoll});
    if (watch_.stopped()) return errors::Cancelled("this task was stopped");
    if (report.ok()) {
      auto r = (*report)[0].flat<int64_t>();
      if (r[0] == round.id) done.insert(r[1]);  // a report of an earlier round is stale
    } else if (!IsDeadlineExceeded(report.status())) {
      if (!IsRetryable(report.status())) return report.status();
      session_.Remake();
    }
    MaybeSayProgress();
    if (absl::Now() - last_probe >= kPoll) {
      last_probe = absl::Now();
      // A files task that restarted lost this round's queue; the files not counted yet go
      // out in a new round. The probe sees the queue open again (after one failed probe
      // and a remade session, when the probe's graph was registered on the old task).
      auto probe = session_.Run({}, {round.closed});
      if (probe.ok() && !(*probe)[0].scalar<bool>()) {
        return errors::Aborted("the files task restarted: round ", rounds_,
                               "'s queue is gone; handing out what is not counted again");
      }
      if (!probe.ok() && IsRetryable(probe.status())) session_.Remake();
    }
  }
  return OkStatus();
}

StatusOr<std::optional<Reducer::RoundNodes>> Reducer::FillRound() {
  while (true) {
    TW_ASSIGN_OR_RETURN(Tally t, ReadLedger());
    if (t.holes.empty()) return std::nullopt;
    round_ = NextRoundId(round_);
    RoundNodes round = MakeRound(round_);
    // Not retried on the same queue: an attempt whose reply was lost may have filled and
    // closed it. A failed attempt leaves a queue nobody is told about; the next round's
    // id is new.
    auto filled =
        session_.Run({{round.indices, Tensor::FromVector(t.holes)}}, {}, {round.fill_and_close});
    if (watch_.stopped()) return errors::Cancelled("this task was stopped");
    if (filled.ok()) {
      round.files = t.not_counted;
      TW_RETURN_IF_ERROR(
          Retry({{round_id_, Tensor::Scalar<int64_t>(round.id)}}, {}, {announce_}).status());
      return round;
    }
    if (!IsRetryable(filled.status())) return filled.status();
    session_.Remake();
    if (watch_.WaitFor(kRetry)) return errors::Cancelled("this task was stopped");
  }
}

Status Reducer::CountEverything(std::optional<RoundNodes> round) {
  while (round.has_value()) {
    if (++rounds_ > 1) {
      Say("round " + std::to_string(rounds_) + ": handing out " + std::to_string(round->files) +
          " file" + (round->files == 1 ? "" : "s") + " not counted yet");
    }
    TW_RETURN_IF_ERROR(
        Retry({{round_id_, Tensor::Scalar<int64_t>(round->id)}}, {}, {publish_}).status());
    // The clock of the counting starts when the maps have been told to go, as it did when
    // they waited on a latch.
    if (rounds_ == 1) start_ = last_progress_ = absl::Now();
    Status awaited = AwaitRound(*round);
    end_ = absl::Now();  // the counting is over if the ledger now lacks nothing
    if (IsAborted(awaited)) {
      Say(std::string(awaited.message()));
      // The same list, read again: a list that changed would give files other indices.
      TW_ASSIGN_OR_RETURN(std::vector<std::string> again, ReadList());
      if (again != list_) {
        return errors::FailedPrecondition("the files task restarted with another LIST_FILE (",
                                          again.size(), " files, ", list_.size(),
                                          " before): the ledger's indices would name other files");
      }
    } else {
      TW_RETURN_IF_ERROR(awaited);
    }
    TW_ASSIGN_OR_RETURN(round, FillRound());
  }
  return OkStatus();
}

int Reducer::Fail(const Status& s) {
  if (IsCancelled(s) && watch_.stopped()) {
    Complain("reduce: stopped before every file was counted; no total");
  } else {
    Complain("reduce: " + std::string(s.message()));
  }
  return 1;
}

int Reducer::Run() {
  if (Status s = InitLedger(); !s.ok()) return Fail(s);
  // The first round is filled while the maps start, as the files task filled its queue of
  // names in TensorFlow's word count.
  auto first = FillRound();
  if (!first.ok()) return Fail(first.status());
  // Nothing to hand out (an empty list, or a restarted reduce whose ledger the maps' pending
  // writes completed): no map need check in, and no round is announced for them.
  if (!first->has_value()) return Finish();
  // Every map has checked in, so its session reaches the files and reduce tasks: the
  // statistics below time the counting, not the start of processes and connections.
  if (Status s = AwaitCheckIns(); !s.ok()) return Fail(s);
  start_ = end_ = last_progress_ = absl::Now();  // again once the first round is handed out
  Say("all " + std::to_string(num_maps_) + " map task" + (num_maps_ == 1 ? "" : "s") +
      " ready; ledger of " + std::to_string(files_) + " files initialized");
  if (Status s = CountEverything(std::move(*first)); !s.ok()) return Fail(s);
  return Finish();
}

int Reducer::Finish() {
  const absl::Duration elapsed = end_ - start_;
  auto ledger = ReadLedger();
  if (!ledger.ok()) return Fail(ledger.status());
  const Tally& t = *ledger;
  char stats[256];
  const double seconds = absl::ToDoubleSeconds(elapsed);
  snprintf(stats, sizeof(stats),
           "counted %lld bytes in %lld files with %d map task%s in %.4f s (%.1f MB/s), %d "
           "round%s",
           static_cast<long long>(t.bytes), static_cast<long long>(t.files), num_maps_,
           num_maps_ == 1 ? "" : "s", seconds, seconds > 0 ? t.bytes / 1e6 / seconds : 0.0, rounds_,
           rounds_ == 1 ? "" : "s");
  Say(stats);
  // The files and map tasks wait in Join() for this. A task that cannot be reached (it
  // died during the shutdown, or is being restarted) changes nothing about the total.
  if (Status stopped = server_->StopCluster(); !stopped.ok()) {
    Complain("reduce: warning: " + std::string(stopped.message()));
  }
  if (t.unreadable > 0) {
    Complain("error: " + std::to_string(t.unreadable) + " of " + std::to_string(t.files) +
             " input files could not be read (see the \"cannot read\" lines); the total of "
             "the others is " +
             std::to_string(t.words));
    return 1;
  }
  Say("final total: " + std::to_string(t.words));
  return 0;
}

}  // namespace

int RunReduce(Server* server, const RunConfig& config) {
  Reducer reducer(server, config.cluster().CountTasks("map"));
  return reducer.Run();
}

}  // namespace tw::examples
