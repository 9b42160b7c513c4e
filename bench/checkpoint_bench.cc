// Checkpoints of a model on 2 ps tasks, saved and restored by the chief (the default Saver:
// values travel to the chief, which writes the files) in TensorFlow's format (the default)
// and in tensorweave's own index, against ps-side writes (write_on_variable_tasks: each ps
// writes its own shard), in turns in one run.
//
//   build/bench/checkpoint_bench [rounds [megabytes]]     (defaults: 5 rounds, 256 MB)
//
// The ps tasks are `tw server` processes on loopback allowed to write one scratch
// directory (under TMPDIR); this process is the worker/chief. Each round saves with each
// Saver (which goes first rotates), then restores each; the
// checkpoint is dropped from the page cache's concern by the save replacing the same
// step's files. Prints the median of each and their ratios, and the disk's own rate for
// the same bytes (one file written and fsynced here) as the floor.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
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
  // The Savers measured, in turns: the chief writing TensorFlow's format (the default) or
  // tensorweave's own, and the ps tasks writing their shards.
  struct Measured {
    const char* name;
    std::unique_ptr<train::Saver> saver;
    std::string prefix;
    std::vector<double> save, restore;
  };
  std::vector<Measured> savers;
  for (const auto& [name, sub, on_tasks, format] :
       std::vector<std::tuple<const char*, const char*, bool, train::CheckpointFormat>>{
           {"by the chief (default)", "/chief", false, train::CheckpointFormat::kTensorFlow},
           {"by the chief, own index", "/own", false, train::CheckpointFormat::kTensorweave},
           {"by the ps tasks", "/ps", true, train::CheckpointFormat::kTensorFlow}}) {
    auto saver = train::Saver::Create(root, vars,
                                      {.checkpoint_dir = dir.string() + sub,
                                       .write_on_variable_tasks = on_tasks,
                                       .format = format});
    if (!saver.ok()) {
      std::fprintf(stderr, "Saver::Create failed: %s\n", saver.status().ToString().c_str());
      return 1;
    }
    savers.push_back({.name = name, .saver = *std::move(saver)});
  }
  ClientSession session(root, {.target = (*worker)->target()});
  if (!session.Run({}, {}, inits).ok()) {  // waits for the ps processes
    std::fprintf(stderr, "cannot initialize the variables\n");
    return 1;
  }

  bool ok = true;
  std::vector<double> disk;
  auto save = [&](Measured& m) {
    auto saved = m.saver->Save(session, 1);
    if (!saved.ok()) std::fprintf(stderr, "save: %s\n", saved.status().ToString().c_str());
    if (saved.ok()) m.prefix = *saved;
    return saved.ok();
  };
  auto restore = [&](Measured& m) {
    Status s = m.saver->Restore(session, m.prefix);
    if (!s.ok()) std::fprintf(stderr, "restore: %s\n", s.ToString().c_str());
    return s.ok();
  };
  const size_t n = savers.size();
  for (int r = 0; r < rounds && ok; ++r) {
    for (size_t turn = 0; turn < n; ++turn) {  // a different one first each round
      Measured& m = savers[(turn + r) % n];
      m.save.push_back(Seconds([&] { return save(m); }, &ok));
    }
    for (size_t turn = 0; turn < n; ++turn) {
      Measured& m = savers[(turn + r) % n];
      m.restore.push_back(Seconds([&] { return restore(m); }, &ok));
    }
    disk.push_back(Seconds(
        [&] { return WriteAndSync(dir.string() + "/floor", int64_t{megabytes} << 20); }, &ok));
  }
  std::filesystem::remove_all(dir);
  if (!ok) return 1;
  const double mb = megabytes;
  std::printf("checkpoint of %d MB on 2 ps tasks, median of %d rounds\n", megabytes, rounds);
  std::printf("%-40s %9s %9s\n", "", "seconds", "MB/s");
  auto row = [&](const std::string& what, double s) {
    std::printf("%-40s %9.3f %9.0f\n", what.c_str(), s, mb / s);
  };
  row("disk floor (one file, fsync)", Median(disk));
  for (const Measured& m : savers) row(std::string("save, ") + m.name, Median(m.save));
  for (const Measured& m : savers) row(std::string("restore, ") + m.name, Median(m.restore));
  std::printf("chief / ps-side: save %.2fx, restore %.2fx of the time\n",
              Median(savers[0].save) / Median(savers[2].save),
              Median(savers[0].restore) / Median(savers[2].restore));
  std::printf("TensorFlow's format / own index (chief): save %.2fx, restore %.2fx\n",
              Median(savers[0].save) / Median(savers[1].save),
              Median(savers[0].restore) / Median(savers[1].restore));
  return 0;
}

}  // namespace
}  // namespace tw

int main(int argc, char** argv) { return tw::Main(argc, argv); }
