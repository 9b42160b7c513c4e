// Checkpoints of a model on 2 ps tasks, saved and restored by the chief (the default Saver:
// values travel to the chief, which writes the files) against ps-side writes
// (write_on_variable_tasks: each ps writes its own shard), in turns in one run.
//
//   build/bench/checkpoint_bench [rounds [megabytes]]     (defaults: 5 rounds, 256 MB)
//
// The ps tasks are `tw server` processes on loopback allowed to write one scratch
// directory (under TMPDIR); this process is the worker/chief. Each round saves with one
// Saver, then the other (which goes first alternates), then restores each; the
// checkpoint is dropped from the page cache's concern by the save replacing the same
// step's files. Prints the median of each and their ratio, and the disk's own rate for
// the same bytes (one file written and fsynced here) as the floor.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "tensorweave/train/saver.h"
#include "testing/ports.h"
#include "testing/subprocess.h"

namespace tw {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(const std::function<bool()>& fn, bool* ok) {
  const auto start = Clock::now();
  *ok = fn() && *ok;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Writes `bytes` to a fresh file and fsyncs it: the disk's floor for one checkpoint.
bool WriteAndSync(const std::string& path, int64_t bytes) {
  std::vector<char> block(1 << 20, '\x5a');
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  for (int64_t done = 0; done < bytes; done += static_cast<int64_t>(block.size())) {
    if (std::fwrite(block.data(), 1, block.size(), f) != block.size()) return false;
  }
  std::fflush(f);
  const bool synced = fsync(fileno(f)) == 0;
  std::fclose(f);
  std::filesystem::remove(path);
  return synced;
}

int Main(int argc, char** argv) {
  int rounds = 5, megabytes = 256;
  if ((argc > 1 && (!absl::SimpleAtoi(argv[1], &rounds) || rounds < 1)) ||
      (argc > 2 && (!absl::SimpleAtoi(argv[2], &megabytes) || megabytes < 2))) {
    std::fprintf(stderr, "usage: checkpoint_bench [rounds [megabytes]]\n");
    return 2;
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path dir = std::filesystem::path(tmp != nullptr ? tmp : "/tmp") /
                                    ("tw_checkpoint_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);

  std::vector<std::string> ps_addresses;
  for (int i = 0; i < 2; ++i) {
    ps_addresses.push_back("127.0.0.1:" + std::to_string(testing::PickUnusedPort()));
  }
  const std::string worker_address = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string tw = std::filesystem::path(argv[0]).parent_path().parent_path() / "tools/tw";
  std::vector<std::unique_ptr<testing::ChildProcess>> ps;
  for (int i = 0; i < 2; ++i) {
    const std::string tf_config = R"({"cluster":{"ps":[")" + ps_addresses[0] + R"(",")" +
                                  ps_addresses[1] + R"("],"worker":[")" + worker_address +
                                  R"("]},"task":{"type":"ps","index":)" + std::to_string(i) + "}}";
    auto child = testing::ChildProcess::Start(
        {tw, "server", "--bind-host", "127.0.0.1", "--allowed-dir", dir.string()},
        {{"TF_CONFIG", tf_config}}, dir.string() + "/ps" + std::to_string(i) + ".log");
    if (!child.ok()) {
      std::fprintf(stderr, "cannot start %s: %s\n", tw.c_str(), child.status().ToString().c_str());
      return 1;
    }
    ps.push_back(*std::move(child));
  }
  ClusterSpec cluster;
  if (!cluster.AddJob("ps", ps_addresses).ok() ||
      !cluster.AddJob("worker", std::vector<std::string>{worker_address}).ok()) {
    return 1;
  }
  auto worker = Server::Create(cluster, "worker", 0, {.bind_host = "127.0.0.1"});
  if (!worker.ok() || !(*worker)->Start().ok()) {
    std::fprintf(stderr, "cannot start the worker server\n");
    return 1;
  }

  // Half of the bytes on each ps task, as two float variables of [rows, 1024].
  const int64_t rows = int64_t{megabytes} * 1024 * 1024 / 2 / (1024 * 4);
  Scope root = Scope::NewRootScope();
  std::vector<train::SaveableVariable> vars;
  std::vector<Operation> inits;
  for (int i = 0; i < 2; ++i) {
    Scope on_ps = root.WithDevice("/job:ps/task:" + std::to_string(i));
    auto v = ops::MakeVariable(on_ps, "w" + std::to_string(i), DT_FLOAT, {rows, 1024});
    auto fill = ops::Fill(on_ps, Tensor::FromVector<int64_t>({rows, 1024}), 0.5f + float(i));
    inits.push_back(ops::Assign(on_ps, v, fill).op());
    vars.push_back({.name = "w" + std::to_string(i), .var = v});
  }
  auto chief = train::Saver::Create(root, vars, {.checkpoint_dir = dir.string() + "/chief"});
  auto on_ps = train::Saver::Create(
      root, vars, {.checkpoint_dir = dir.string() + "/ps", .write_on_variable_tasks = true});
  if (!chief.ok() || !on_ps.ok()) {
    std::fprintf(stderr, "Saver::Create failed\n");
    return 1;
  }
  ClientSession session(root, {.target = (*worker)->target()});
  if (!session.Run({}, {}, inits).ok()) {  // waits for the ps processes
    std::fprintf(stderr, "cannot initialize the variables\n");
    return 1;
  }

  bool ok = true;
  std::vector<double> save_chief, save_ps, restore_chief, restore_ps, disk;
  std::string chief_prefix, ps_prefix;
  auto save = [&](train::Saver& saver, std::string* prefix) {
    auto saved = saver.Save(session, 1);
    if (!saved.ok()) std::fprintf(stderr, "save: %s\n", saved.status().ToString().c_str());
    if (saved.ok()) *prefix = *saved;
    return saved.ok();
  };
  auto restore = [&](train::Saver& saver, const std::string& prefix) {
    Status s = saver.Restore(session, prefix);
    if (!s.ok()) std::fprintf(stderr, "restore: %s\n", s.ToString().c_str());
    return s.ok();
  };
  for (int r = 0; r < rounds && ok; ++r) {
    const bool chief_first = r % 2 == 0;
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == chief_first) {
        save_chief.push_back(Seconds([&] { return save(**chief, &chief_prefix); }, &ok));
      } else {
        save_ps.push_back(Seconds([&] { return save(**on_ps, &ps_prefix); }, &ok));
      }
    }
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == chief_first) {
        restore_chief.push_back(Seconds([&] { return restore(**chief, chief_prefix); }, &ok));
      } else {
        restore_ps.push_back(Seconds([&] { return restore(**on_ps, ps_prefix); }, &ok));
      }
    }
    disk.push_back(Seconds(
        [&] { return WriteAndSync(dir.string() + "/floor", int64_t{megabytes} << 20); }, &ok));
  }
  std::filesystem::remove_all(dir);
  if (!ok) return 1;
  const double mb = megabytes;
  std::printf("checkpoint of %d MB on 2 ps tasks, median of %d rounds\n", megabytes, rounds);
  std::printf("%-34s %9s %9s\n", "", "seconds", "MB/s");
  auto row = [&](const char* what, double s) {
    std::printf("%-34s %9.3f %9.0f\n", what, s, mb / s);
  };
  row("disk floor (one file, fsync)", Median(disk));
  row("save, chief writes (default)", Median(save_chief));
  row("save, ps tasks write", Median(save_ps));
  row("restore, chief reads (default)", Median(restore_chief));
  row("restore, ps tasks read", Median(restore_ps));
  std::printf("chief / ps-side: save %.2fx, restore %.2fx of the time\n",
              Median(save_chief) / Median(save_ps), Median(restore_chief) / Median(restore_ps));
  return 0;
}

}  // namespace
}  // namespace tw

int main(int argc, char** argv) { return tw::Main(argc, argv); }
