// The seeds' MapReduce word count: one program for every task of a cluster with the jobs
// `files` (1 task), `reduce` (1 task) and `map` (any number of tasks).
//
//   tw launch --cluster files=1,reduce=1,map=2 -- build/examples/wordcount LIST_FILE
//
// LIST_FILE names the input files, one path per line (any bytes but a newline; nothing is
// trimmed; empty lines are ignored). Words are counted exactly as `LC_ALL=C wc -w` counts
// them (examples/word_counter.h), and the reduce task's last line is `final total: N`,
// the per-file sum that wc prints on its total line.
//
// The tasks and the state they share (every task builds the part of the graph it uses;
// queues are shared by shared_name, the variable by name, on the task that holds them):
//
//   files:0   "wordcount_filenames", a FIFOQueue of file names. The files task fills it
//             from LIST_FILE and closes it, then serves it until the cluster stops.
//   reduce:0  "total", the int64 word counter; "wordcount_maps_ready", where each map
//             checks in; "wordcount_counter_ready", a queue that is never filled and is
//             closed once the counter is initialized (a latch: a dequeue from a closed,
//             empty queue fails at once with OutOfRange, so every map waiting on it wakes
//             up, and one that comes later does not wait at all); "wordcount_reports",
//             where each map leaves one report when it is done.
//   map:i     take file names until the file-name queue is closed and empty (OutOfRange),
//             count their words, AssignAdd the counts to "total", then report.
//
// Coordination, without sleeps or polling:
//   1. each map checks in (its session waits for the files and reduce tasks to come up,
//      whatever the start order), then blocks on the latch, so no map ever adds to an
//      uninitialized counter.
//   2. reduce dequeues one check-in per map (a blocking DequeueMany), initializes the
//      counter, closes the latch and starts its clock: from here on every task is up and
//      connected, so the time it reports is the counting's alone.
//   3. maps take names in batches (QueueDequeueUpTo) whose size follows the queue: what is
//      left divided by twice the number of maps, down to one file at the end (guided
//      self-scheduling). A few dozen round trips then serve thousands of files and the
//      tail stays balanced between maps. The next batch is fetched, and each batch's count
//      AssignAdded, on background threads while the map counts (wordcount_pipeline.h), so
//      the queue and counter round trips cost the counting almost nothing. A long batch
//      adds its count at least every second, so the running total keeps moving.
//   4. reduce prints the running total every 2 s while it blocks on dequeuing one report
//      per map task. With every report in, it checks that the counter equals the sum the
//      maps reported, prints the statistics, and calls Server::StopCluster: the files and
//      map tasks, waiting in Join(), return 0, and reduce prints `final total: N` last.
//
// Failures: an input file that cannot be read is named on the map's stderr
// (`cannot read PATH: reason`), counted in its report, and makes reduce end with an error
// line instead of `final total` and exit code 1, after stopping the cluster; the other
// tasks still exit 0, so the job fails with reduce's code. Any other error (a task that
// disappears, an unreadable LIST_FILE) ends that task with code 1, which under `tw launch`
// fails the job and stops the rest. Usage errors exit with code 2.
#include <stdio.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "examples/example_server.h"
#include "examples/word_counter.h"
#include "examples/wordcount_pipeline.h"
#include "tensorweave/tensorweave.h"

namespace tw::examples {
namespace {

constexpr char kFilesDevice[] = "/job:files/task:0";
constexpr char kReduceDevice[] = "/job:reduce/task:0";

// A map's report: one int64 vector.
enum ReportField : int { kTask, kFiles, kUnreadable, kBytes, kWords, kReportFields };

constexpr int64_t kEnqueueChunk = 4096;  // file names per enqueue step of the files task
constexpr int64_t kMaxBatch = 1024;      // file names per dequeue step of a map task
constexpr absl::Duration kFlushInterval = absl::Seconds(1);
constexpr absl::Duration kProgressInterval = absl::Seconds(2);

// Whole lines, one write each, so that tw launch never sees half of one.
void Say(const std::string& line) {
  std::string text = line + "\n";
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
}
void Complain(const std::string& line) {
  std::string text = line + "\n";
  fwrite(text.data(), 1, text.size(), stderr);
  fflush(stderr);
}

std::string Describe(const Status& s) { return std::string(s.message()); }

struct Args {
  std::string list_file;
  bool verbose = false;
};

// The state the tasks share, as graph nodes of one task's graph.
struct SharedState {
  ops::Queue filenames;      // on files:0
  ops::Variable total;       // on reduce:0
  ops::Queue maps_ready;     // on reduce:0, one check-in per map
  ops::Queue counter_ready;  // on reduce:0, the latch
  ops::Queue reports;        // on reduce:0
};

SharedState MakeSharedState(const Scope& root) {
  const Scope files = root.WithDevice(kFilesDevice);
  const Scope reduce = root.WithDevice(kReduceDevice);
  return SharedState{
      .filenames = ops::FIFOQueue(files, {DT_STRING},
                                  {.shapes = {{}}, .shared_name = "wordcount_filenames"}),
      .total = ops::MakeVariable(reduce, "total", DT_INT64, {}),
      .maps_ready = ops::FIFOQueue(reduce, {DT_INT32},
                                   {.shapes = {{}}, .shared_name = "wordcount_maps_ready"}),
      .counter_ready =
          ops::FIFOQueue(reduce, {DT_INT32}, {.shared_name = "wordcount_counter_ready"}),
      .reports = ops::FIFOQueue(reduce, {DT_INT64},
                                {.shapes = {{kReportFields}}, .shared_name = "wordcount_reports"}),
  };
}

// Runs Join() on a thread of its own, so a task can both wait for the cluster to stop it
// and ask whether that has happened. The destructor stops the server if nobody did.
class StopWatch {
 public:
  explicit StopWatch(Server* server)
      : server_(server), thread_([this] {
          server_->Join();
          stopped_.Notify();
        }) {}
  ~StopWatch() {
    server_->Stop();
    thread_.join();
  }
  void Wait() { stopped_.WaitForNotification(); }
  bool WaitFor(absl::Duration timeout) { return stopped_.WaitForNotificationWithTimeout(timeout); }

 private:
  Server* server_;
  absl::Notification stopped_;
  std::thread thread_;
};

// A task's last step (the files task's close of the name queue, a map's report) can fail
// only because the cluster is being stopped under it: reduce stops the cluster once it
// holds every report, which needs that step to have taken effect, but may come before the
// step's reply has reached this task (the stop then cancels the step here). So a failed
// last step followed by this server stopping means the work was delivered.
int FinishTask(const Status& last_step, StopWatch& watch, const std::string& task) {
  if (last_step.ok()) {
    watch.Wait();
    return 0;
  }
  if (watch.WaitFor(absl::Seconds(10))) return 0;
  Complain(task + ": " + Describe(last_step));
  return 1;
}

// ---- files ----

int RunFiles(Server* server, const Args& args) {
  StopWatch watch(server);
  Scope root = Scope::NewRootScope();
  SharedState shared = MakeSharedState(root);
  auto names =
      ops::Placeholder(root.WithOpName("names"), DT_STRING, {.shape = std::vector<int64_t>{-1}});
  auto enqueue = ops::QueueEnqueueMany(root, shared.filenames, {names});
  auto close = ops::QueueClose(root, shared.filenames);
  ClientSession session(root, {.target = server->target(), .device_filters = {kFilesDevice}});

  auto list_error = [&](int error) {
    return errors::FailedPrecondition("cannot read list file ", args.list_file, ": ",
                                      std::error_code(error, std::generic_category()).message());
  };
  FILE* list = fopen(args.list_file.c_str(), "rb");
  const int open_error = errno;
  int64_t queued = 0;
  Status status;
  std::vector<std::string> chunk;
  auto flush = [&]() -> Status {
    if (chunk.empty()) return OkStatus();
    queued += static_cast<int64_t>(chunk.size());
    auto run = session.Run({{names, Tensor::FromVector(chunk)}}, {}, {enqueue});
    chunk.clear();
    return run.status();
  };
  if (list == nullptr) {
    status = list_error(open_error);
  } else {
    char* line = nullptr;
    size_t capacity = 0;
    ssize_t length;
    while (status.ok() && (length = getline(&line, &capacity, list)) >= 0) {
      std::string path(line, static_cast<size_t>(length));
      if (!path.empty() && path.back() == '\n') path.pop_back();
      if (path.empty()) continue;
      chunk.push_back(std::move(path));
      if (static_cast<int64_t>(chunk.size()) == kEnqueueChunk) status = flush();
    }
    if (status.ok() && ferror(list)) status = list_error(errno);
    free(line);
    fclose(list);
    if (status.ok()) status = flush();
  }
  // Closed even after an error, so that no map waits for names that will never come.
  Status closed = session.Run({}, {}, {close}).status();
  if (!status.ok()) {
    Complain("files: " + Describe(status));
    return 1;
  }
  if (closed.ok()) Say("queued " + std::to_string(queued) + " file names from " + args.list_file);
  return FinishTask(closed, watch, "files");
}

// ---- reduce ----

int RunReduce(Server* server, const RunConfig& config) {
  StopWatch watch(server);
  const int num_maps = config.cluster().num_tasks("map");
  Scope root = Scope::NewRootScope();
  SharedState shared = MakeSharedState(root);
  auto checked_in = ops::QueueDequeueMany(root.WithOpName("take_check_ins"), shared.maps_ready,
                                          static_cast<int>(num_maps));
  auto init = ops::Assign(root.WithOpName("init_total"), shared.total, int64_t{0});
  auto open_latch = ops::QueueClose(root.WithOpName("counter_ready"), shared.counter_ready);
  auto read = ops::ReadVariable(root.WithOpName("read_total"), shared.total);
  auto report = ops::QueueDequeue(root.WithOpName("take_report"), shared.reports);
  // No device filters: every task is waited for, whichever job it is in.
  ClientSession session(root, {.target = server->target()});

  auto fail = [&](const std::string& message) {
    Complain("reduce: " + message);
    return 1;
  };
  // Every map has checked in, so its session reaches the files and reduce tasks: the
  // statistics below time the counting, not the start of processes and connections.
  if (auto s = session.Run({}, checked_in); !s.ok()) return fail(Describe(s.status()));
  if (auto s = session.Run({}, {}, {init.op()}); !s.ok()) return fail(Describe(s.status()));
  if (auto s = session.Run({}, {}, {open_latch}); !s.ok()) return fail(Describe(s.status()));
  const absl::Time start = absl::Now();
  Say("all " + std::to_string(num_maps) + " map task" + (num_maps == 1 ? "" : "s") +
      " ready; counter initialized");

  absl::Notification done;
  std::thread progress([&] {
    while (!done.WaitForNotificationWithTimeout(kProgressInterval)) {
      auto now = session.Run({}, {read});
      if (now.ok()) Say("running total: " + std::to_string((*now)[0].scalar<int64_t>()));
    }
  });
  int64_t files = 0, unreadable = 0, bytes = 0, reported_words = 0;
  Status status;
  for (int i = 0; i < num_maps && status.ok(); ++i) {
    auto out = session.Run({}, report);
    if (!out.ok()) {
      status = out.status();
      break;
    }
    auto r = (*out)[0].flat<int64_t>();
    files += r[kFiles];
    unreadable += r[kUnreadable];
    bytes += r[kBytes];
    reported_words += r[kWords];
  }
  const absl::Duration elapsed = absl::Now() - start;
  done.Notify();
  progress.join();
  if (!status.ok()) return fail(Describe(status));
  auto final_value = session.Run({}, {read});
  if (!final_value.ok()) return fail(Describe(final_value.status()));
  const int64_t total = (*final_value)[0].scalar<int64_t>();

  char stats[256];
  const double seconds = absl::ToDoubleSeconds(elapsed);
  snprintf(stats, sizeof(stats),
           "counted %lld bytes in %lld files with %d map task%s in %.4f s (%.1f MB/s)",
           static_cast<long long>(bytes), static_cast<long long>(files), num_maps,
           num_maps == 1 ? "" : "s", seconds, seconds > 0 ? bytes / 1e6 / seconds : 0.0);
  Say(stats);
  std::string error;
  if (total != reported_words) {
    error = "the counter holds " + std::to_string(total) + " but the maps reported " +
            std::to_string(reported_words) + " words";
  } else if (unreadable > 0) {
    error = std::to_string(unreadable) + " of " + std::to_string(files) +
            " input files could not be read (see the \"cannot read\" lines); the total of "
            "the others is " +
            std::to_string(total);
  }
  // The files and map tasks wait in Join() for this.
  Status stopped = server->StopCluster();
  if (!stopped.ok()) {
    return fail("the word count finished, but stopping the cluster failed: " + Describe(stopped));
  }
  if (!error.empty()) {
    Complain("error: " + error);
    return 1;
  }
  Say("final total: " + std::to_string(total));
  return 0;
}

// ---- map ----

int RunMap(Server* server, const RunConfig& config, const Args& args) {
  StopWatch watch(server);
  const std::string task = "map:" + std::to_string(config.task_index());
  const int num_maps = config.cluster().num_tasks("map");
  Scope root = Scope::NewRootScope();
  SharedState shared = MakeSharedState(root);
  auto check_in = ops::QueueEnqueue(root.WithOpName("check_in"), shared.maps_ready,
                                    {static_cast<int>(config.task_index())});
  auto wait_ready = ops::QueueDequeue(root.WithOpName("wait_counter_ready"), shared.counter_ready);
  auto batch_size = ops::Placeholder(root.WithOpName("batch_size"), DT_INT32);
  auto names = ops::QueueDequeueUpTo(root.WithOpName("take_names"), shared.filenames, batch_size);
  // Read after the dequeue: what is left for every map, to size the next batch.
  auto left = ops::QueueSize(root.WithOpName("names_left").WithControlDependencies({names[0].op()}),
                             shared.filenames);
  auto count = ops::Placeholder(root.WithOpName("count"), DT_INT64);
  auto add =
      ops::AssignAdd(root.WithOpName("add_count"), shared.total, count, {.use_locking = true});
  auto report = ops::Placeholder(root.WithOpName("report"), DT_INT64,
                                 {.shape = std::vector<int64_t>{kReportFields}});
  auto send_report = ops::QueueEnqueue(root, shared.reports, {report});
  // Only the tasks this map talks to: it never waits for the other maps.
  ClientSession session(
      root, {.target = server->target(),
             .device_filters = {kFilesDevice, kReduceDevice,
                                "/job:map/task:" + std::to_string(config.task_index())}});
  auto fail = [&](const Status& s) {
    Complain(task + ": " + Describe(s));
    session.Close().IgnoreError();  // ends the fetcher's and the adder's steps
    return 1;
  };

  // The first step waits for the files and reduce tasks to come up; the second blocks until
  // reduce has initialized the counter and closed the latch.
  if (auto s = session.Run({}, {}, {check_in}); !s.ok()) return fail(s.status());
  auto ready = session.Run({}, wait_ready);
  if (!ready.ok() && !IsOutOfRange(ready.status())) return fail(ready.status());

  const absl::Time start = absl::Now();
  CountAdder adder(&session, {.count = count, .add = add.op()});
  NameFetcher fetcher(&session, {.batch_size = batch_size, .names = names[0], .left = left},
                      num_maps, kMaxBatch);
  FileWordCounter counter;
  int64_t files = 0, unreadable = 0, bytes = 0, words = 0, pending = 0;
  absl::Time last_add = start;
  while (true) {
    auto batch = fetcher.Next();
    if (IsOutOfRange(batch.status())) break;  // closed and empty: all names are taken
    if (!batch.ok()) return fail(batch.status());
    for (const std::string& path : batch->flat<std::string>()) {
      ++files;
      auto c = counter.Count(path);
      if (!c.ok()) {
        ++unreadable;
        Complain(Describe(c.status()));
        continue;
      }
      if (args.verbose) Say(std::to_string(c->words) + " words in " + path);
      bytes += c->bytes;
      words += c->words;
      pending += c->words;
      if (absl::Now() - last_add >= kFlushInterval) {  // a long batch: keep the total moving
        adder.Add(std::exchange(pending, 0));
        last_add = absl::Now();
      }
    }
    adder.Add(std::exchange(pending, 0));
    last_add = absl::Now();
  }
  if (Status s = adder.Finish(); !s.ok()) return fail(s);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  char summary[200];
  snprintf(summary, sizeof(summary), "%lld words in %lld files (%lld bytes) in %.3f s",
           static_cast<long long>(words), static_cast<long long>(files),
           static_cast<long long>(bytes), seconds);
  Say(summary + (unreadable > 0 ? ", " + std::to_string(unreadable) + " unreadable" : ""));
  Tensor r = Tensor::FromVector<int64_t>({config.task_index(), files, unreadable, bytes, words});
  return FinishTask(session.Run({{report, r}}, {}, {send_report}).status(), watch, task);
}

// ---- main ----

constexpr char kUsage[] =
    "usage: wordcount [--verbose] LIST_FILE\n"
    "Runs as every task of a cluster with the jobs files (1 task), reduce (1 task) and map\n"
    "(any number), its role from TF_CONFIG or the cluster flags, e.g.\n"
    "  tw launch --cluster files=1,reduce=1,map=2 -- wordcount LIST_FILE\n"
    "LIST_FILE: one input path per line. --verbose: maps print each file's count.";

int Main(int argc, char** argv) {
  auto config = RunConfig::FromEnvironment(argc, argv);
  if (!config.ok()) {
    Complain("wordcount: " + Describe(config.status()));
    return 2;
  }
  Args args;
  for (const std::string& arg : config->unused_args()) {
    if (arg == "--verbose") {
      args.verbose = true;
    } else if (arg == "-h" || arg == "--help") {
      Say(kUsage);
      return 0;
    } else if (arg.size() > 1 && arg[0] == '-') {
      Complain("wordcount: unknown flag " + arg + "\n" + kUsage);
      return 2;
    } else if (!args.list_file.empty()) {
      Complain("wordcount: one LIST_FILE only (got \"" + args.list_file + "\" and \"" + arg +
               "\")\n" + kUsage);
      return 2;
    } else {
      args.list_file = arg;
    }
  }
  if (args.list_file.empty()) {
    Complain(std::string("wordcount: missing LIST_FILE\n") + kUsage);
    return 2;
  }
  const ClusterSpec& cluster = config->cluster();
  if (config->is_local() || cluster.num_tasks("files") != 1 || cluster.num_tasks("reduce") != 1 ||
      cluster.num_tasks("map") < 1 || !cluster.IsDense("map")) {
    Complain(
        "wordcount: needs a cluster with the jobs files (1 task), reduce (1 task) and map (1 or "
        "more), got " +
        (config->is_local() ? std::string("no cluster (no TF_CONFIG)") : cluster.ToJson()) + "\n" +
        kUsage);
    return 2;
  }
  const std::string& role = config->task_type();
  if (role != "files" && role != "reduce" && role != "map") {
    Complain("wordcount: this task's job \"" + role + "\" is not files, reduce or map");
    return 2;
  }

  const ServerOptions options =
      ExampleServerOptions(cluster, role, config->task_index(), config->runtime_settings());
  auto server = Server::Create(cluster, role, config->task_index(), options);
  if (!server.ok()) {
    Complain("wordcount: " + Describe(server.status()));
    return 1;
  }
  if (Status s = (*server)->Start(); !s.ok()) {
    Complain("wordcount: " + Describe(s));
    return 1;
  }
  if (role == "files") return RunFiles(server->get(), args);
  if (role == "reduce") return RunReduce(server->get(), *config);
  return RunMap(server->get(), *config, args);
}

}  // namespace
}  // namespace tw::examples

int main(int argc, char** argv) { return tw::examples::Main(argc, argv); }
