// The seeds' MapReduce word count, exactly once: one program for every task of a cluster
// with the jobs `files` (1 task), `reduce` (1 task) and `map` (any number of tasks).
//
//   tw launch --cluster files=1,reduce=1,map=2 --success reduce:0 -- wordcount LIST_FILE
//
// LIST_FILE names the input files, one path per line (any bytes but a newline; nothing is
// trimmed; empty lines are ignored). Words are counted exactly as `LC_ALL=C wc -w` counts
// them (examples/word_counter.h), and the reduce task's last line is `final total: N`,
// the per-file sum that wc prints on its total line.
//
// The tasks (wordcount_files.cc, wordcount_reduce.cc, wordcount_map.cc) and the state they
// share (wordcount_state.h):
//
//   files:0   holds the paths of LIST_FILE in a variable; a file's index there is its name
//             everywhere else. Serves the rounds' queues, which reduce fills.
//   reduce:0  holds the ledger: each file's count (or "not counted", or "unreadable") and
//             bytes. Hands the files out in rounds, until the ledger lacks none, then
//             prints the total and stops the cluster.
//   map:i     for each round, takes batches of (index, path) from the round's queue until
//             it is empty, counts the files and writes each count into the ledger, then
//             reports the round done.
//
// Exactly once, whichever single task dies at whatever moment, when it is restarted
// (tw launch --restart exit-code or on-failure):
//   - A count goes into the ledger by ScatterUpdate: it sets the file's entry, so a count
//     written twice (a retried step, a file counted by two maps) is counted once. The total
//     is the sum of the ledger, file by file; nothing is added to a running counter.
//   - A round is over when every map has reported it (its counts are in the ledger first).
//     Files that a map took and did not count (it died, a reply was lost) are then still
//     "not counted", and go out again in the next round. The count ends only when the
//     ledger lacks no file.
//   - A map that dies loses only its uncounted files. Restarted, it checks in again, joins
//     the current round and reports it.
//   - A files task that dies loses the current round's queue. Restarted, it reads the list
//     again; reduce sees its restart (a probe of it fails) and starts a new round with what
//     the ledger lacks.
//   - A reduce task that dies loses the ledger. Restarted, it starts a new one from the
//     files task's list and waits for every map to check in again (each map does when a
//     step of it fails on the new reduce); what was counted before is counted again.
//   - Every step that may fail because a task restarted is retried on a remade session
//     (wordcount_state.h, RemakingSession); no wait is without a bound that looks again.
// Without a restart a dead task fails the job (tw launch names it) and reduce prints no
// total.
//
// Restarted after the end: a task killed while the count ends (reduce printing its total
// and stopping the cluster) may be restarted after its peers are gone for good. A restarted
// task (RuntimeSettings::restart_count > 0, which tw launch sets) therefore first reaches
// the task its work depends on: reduce:0 for files and maps, files:0 for reduce. Its peers
// were up before it died, so one that has not answered within kRestartedWait (10 s) has
// ended: the count is over (reduce stops every task once it has printed its total, and a
// task that failed the job has had the others stopped by the launcher). The task then says
// which peer and why, and exits 0: it has nothing left to do, and 0 is the code that ends
// the job as it already ended under every policy (tw launch's "every task exits 0" that the
// word count uses without --success, and --success reduce:0), where a code of 1-127 would
// fail a job whose total was printed and one of 128-255 would restart it again.
// --success reduce:0 still ends the job as soon as reduce has printed its total.
//
// Batches (guided self-scheduling): what is left of the round divided by twice the number
// of maps, down to one file at the end, so a few dozen round trips serve thousands of files
// and the tail stays balanced. The next batch is fetched, and counts are written, on
// background threads while the map counts (wordcount_pipeline.h); a long batch writes its
// counts at least every second, so the running total keeps moving.
//
// Failures: an input file that cannot be read is named on the map's stderr
// (`cannot read PATH: reason`), recorded as unreadable, and makes reduce end with an error
// line instead of `final total` and exit code 1, after stopping the cluster; the other
// tasks still exit 0, so the job fails with reduce's code. An unreadable LIST_FILE ends the
// files task with code 1, a port that cannot be bound a task with code 200 (as tw server:
// a restart may find it free). Usage errors exit with code 2.
#include <string>

#include "absl/time/time.h"
#include "examples/example_server.h"
#include "examples/wordcount_state.h"
#include "examples/wordcount_tasks.h"
#include "tensorweave/tensorweave.h"

namespace tw::examples {
namespace {

constexpr char kUsage[] =
    "usage: wordcount [--verbose] LIST_FILE\n"
    "Runs as every task of a cluster with the jobs files (1 task), reduce (1 task) and map\n"
    "(any number), its role from TF_CONFIG or the cluster flags, e.g.\n"
    "  tw launch --cluster files=1,reduce=1,map=2 --success reduce:0 -- wordcount LIST_FILE\n"
    "LIST_FILE: one input path per line. --verbose: maps print each file's count.";

int Main(int argc, char** argv) {
  auto config = RunConfig::FromEnvironment(argc, argv);
  if (!config.ok()) {
    Complain("wordcount: " + std::string(config.status().message()));
    return 2;
  }
  WordcountArgs args;
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
  if (config->is_local() || cluster.CountTasks("files") != 1 || cluster.CountTasks("reduce") != 1 ||
      cluster.CountTasks("map") < 1 || !cluster.IsDense("map")) {
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

  const int restarts = config->runtime_settings().restart_count;
  ServerOptions options =
      ExampleServerOptions(cluster, role, config->task_index(), config->runtime_settings());
  if (restarts > 0) options.wait_for_cluster = kRestartedWait;
  auto server = Server::Create(cluster, role, config->task_index(), options);
  if (!server.ok()) {
    Complain("wordcount: " + std::string(server.status().message()));
    return 1;
  }
  if (Status s = (*server)->Start(); !s.ok()) {
    Complain("wordcount: " + std::string(s.message()));
    // As tw server: a port not free yet (a restarted task's predecessor still holds it)
    // may pass, so the exit code is one that a restart policy retries.
    return IsUnavailable(s) ? 200 : 1;
  }
  if (restarts > 0) {
    // Restarted after the end? (See "Restarted after the end" above.)
    const std::string name = role + ":" + std::to_string(config->task_index());
    const bool is_reduce = role == "reduce";
    if (Status s = ReachPeer(server->get(), is_reduce ? kFilesDevice : kReduceDevice); !s.ok()) {
      Complain(name + ": restarted (restart " + std::to_string(restarts) + "), and " +
               (is_reduce ? "files:0" : "reduce:0") + " has not answered for " +
               absl::FormatDuration(kRestartedWait) + " (" + std::string(s.message()) +
               "): the count ended without this task; exiting 0");
      return 0;
    }
  }
  if (role == "files") return RunFiles(server->get(), args);
  if (role == "reduce") return RunReduce(server->get(), *config);
  return RunMap(server->get(), *config, args);
}

}  // namespace
}  // namespace tw::examples

int main(int argc, char** argv) { return tw::examples::Main(argc, argv); }
