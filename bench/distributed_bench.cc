// Cross-task step latency and tensor throughput over loopback, beside the floor: a raw
// gRPC unary round trip (the worker service's GetStatus) measured in the same run.
//
//   build/bench/distributed_bench [iterations [sizes]]
// `sizes`: the tensor sizes in MB to push and pull, comma-separated (default 1,16,64,256);
// handy for profiling one size.
// Prints tables; the ps task is a `tw server` process, the worker task (master and client)
// is this process. Also: iperf3 one-stream loopback figures (Debian's iperf3) and the ps
// process's resident memory.
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
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "tensorweave/ops.h"
#include "tensorweave/protobuf/service.grpc.pb.h"
#include "tensorweave/run_config.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"
#include "testing/subprocess.h"

namespace tw {
namespace {

using Clock = std::chrono::steady_clock;

struct Percentiles {
  double p50_us, p99_us;
};

// Times `fns` in turns (one call of each per round), so that all of them see the same
// machine: this VM's speed drifts by tens of percent within seconds, and measuring one
// after the other would put that drift into their ratios.
std::vector<Percentiles> MeasureInTurns(int iterations,
                                        const std::vector<std::function<void()>>& fns) {
  std::vector<std::vector<double>> us(fns.size());
  for (int i = 0; i < iterations / 10; ++i) {
    for (const auto& fn : fns) fn();  // warm up
  }
  for (int i = 0; i < iterations; ++i) {
    for (size_t f = 0; f < fns.size(); ++f) {
      const auto start = Clock::now();
      fns[f]();
      us[f].push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
  }
  std::vector<Percentiles> out;
  for (std::vector<double>& u : us) {
    std::sort(u.begin(), u.end());
    out.push_back({u[u.size() / 2], u[u.size() * 99 / 100]});
  }
  return out;
}

template <typename Fn>
Percentiles Measure(int iterations, Fn&& fn) {
  std::vector<double> us;
  us.reserve(iterations);
  for (int i = 0; i < iterations / 10; ++i) fn();  // warm up
  for (int i = 0; i < iterations; ++i) {
    const auto start = Clock::now();
    fn();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

// Resident memory of a process, from /proc (0 when unreadable).
long RssKiB(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

// One-stream loopback throughput of iperf3 with `write` bytes per write, GB/s; 0 when
// iperf3 is not installed or fails.
double Iperf3GBps(const std::string& write) {
  const int port = testing::PickUnusedPort();
  auto server = testing::ChildProcess::Start(
      {"/usr/bin/iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", std::to_string(port)}, {},
      "/dev/null");
  if (!server.ok()) return 0;
  absl::SleepFor(absl::Milliseconds(300));  // iperf3 has no readiness signal but its port
  auto client = testing::RunProcess({"/usr/bin/iperf3", "-c", "127.0.0.1", "-p",
                                     std::to_string(port), "-l", write, "-t", "3", "-J"},
                                    {}, absl::Seconds(30));
  if (!client.ok() || client->exit_code != 0) return 0;
  auto json = nlohmann::json::parse(client->out, nullptr, false);
  if (json.is_discarded()) return 0;
  return json["end"]["sum_received"]["bits_per_second"].get<double>() / 8 / 1e9;
}

int Main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  std::vector<int> sizes_mb = {1, 16, 64, 256};
  if (argc > 2) {
    sizes_mb.clear();
    for (absl::string_view mb : absl::StrSplit(argv[2], ',')) {
      int v = 0;
      if (!absl::SimpleAtoi(mb, &v) || v <= 0) {
        std::fprintf(stderr, "sizes: '%s' is not a positive number of MB\n", argv[2]);
        return 2;
      }
      sizes_mb.push_back(v);
    }
  }
  const std::string ps_address = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string worker_address = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string tf_config = R"({"cluster":{"ps":[")" + ps_address + R"("],"worker":[")" +
                                worker_address + R"("]},"task":{"type":"ps","index":0}})";
  // The ps task is a `tw server` process beside this benchmark's binary directory.
  const std::string tw = std::filesystem::path(argv[0]).parent_path().parent_path() / "tools/tw";
  auto ps =
      testing::ChildProcess::Start({tw, "server", "--bind-host", "127.0.0.1"},
                                   {{"TF_CONFIG", tf_config}}, "/tmp/distributed_bench_ps.log");
  if (!ps.ok()) {
    std::fprintf(stderr, "cannot start %s: %s\n", tw.c_str(), ps.status().ToString().c_str());
    return 1;
  }
  ClusterSpec cluster;
  if (!cluster.AddJob("ps", std::vector<std::string>{ps_address}).ok() ||
      !cluster.AddJob("worker", std::vector<std::string>{worker_address}).ok()) {
    return 1;
  }
  // TW_NUM_THREADS, TW_SHARED_MEMORY, TW_BUFFER_POOL_MB apply to this task as to the ps's
  // `tw server`.
  const RuntimeSettings runtime = RuntimeSettings::FromEnvironment();
  auto worker = Server::Create(cluster, "worker", 0,
                               {.bind_host = "127.0.0.1",
                                .num_threads = runtime.num_threads,
                                .shared_memory = runtime.shared_memory,
                                .buffer_pool_mb = runtime.buffer_pool_mb});
  if (!worker.ok() || !(*worker)->Start().ok()) {
    std::fprintf(stderr, "cannot start the worker server\n");
    return 1;
  }

  Scope root = Scope::NewRootScope();
  Scope on_ps = root.WithDevice("/job:ps/task:0");
  auto scalar = ops::MakeVariable(on_ps, "scalar", DT_FLOAT, {});
  auto init = ops::Assign(root, scalar, 1.0f);
  auto read = ops::ReadVariable(root, scalar);
  auto add = ops::AssignAdd(root, scalar, 1.0f);
  ClientSession session(root, {.target = (*worker)->target()});
  if (!session.Run({}, {}, {init.op()}).ok()) return 1;  // waits for the ps process
  const long idle_rss_kib = RssKiB((*ps)->pid());

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  auto channel = grpc::CreateCustomChannel(ps_address, grpc::InsecureChannelCredentials(), args);
  auto stub = proto::WorkerService::NewStub(channel);
  const std::vector<Percentiles> small =
      MeasureInTurns(iterations, {[&] {
                                    grpc::ClientContext ctx;
                                    proto::GetStatusRequest req;
                                    proto::GetStatusResponse resp;
                                    (void)stub->GetStatus(&ctx, req, &resp);
                                  },
                                  [&] { (void)session.Run({}, {read}); },
                                  [&] { (void)session.Run({}, {}, {add.op()}); }});
  const Percentiles& raw = small[0];
  const Percentiles& fetch = small[1];
  const Percentiles& update = small[2];

  std::printf("| Measurement (loopback, ps in another process) | p50 | p99 |\n|---|---|---|\n");
  std::printf("| raw gRPC unary round trip (GetStatus) | %.0f us | %.0f us |\n", raw.p50_us,
              raw.p99_us);
  std::printf(
      "| cross-task step: fetch a scalar from /job:ps/task:0 | %.0f us (%.2fx) | %.0f us |\n",
      fetch.p50_us, fetch.p50_us / raw.p50_us, fetch.p99_us);
  std::printf("| cross-task step: AssignAdd of a scalar on ps | %.0f us (%.2fx) | %.0f us |\n",
              update.p50_us, update.p50_us / raw.p50_us, update.p99_us);

  std::printf("\n| Tensor (float32) | push GB/s | pull GB/s |\n|---|---|---|\n");
  for (int mb : sizes_mb) {
    const int64_t n = int64_t{mb} * 1024 * 1024 / 4;
    Scope g = Scope::NewRootScope();
    auto big = ops::MakeVariable(g.WithDevice("/job:ps/task:0"), "big" + std::to_string(mb),
                                 DT_FLOAT, {n});
    auto value = ops::Placeholder(g, DT_FLOAT);
    auto init_big = ops::Assign(g, big, value);
    auto set = ops::AssignAdd(g, big, value);  // push: the issue's "AssignAdd of a fed tensor"
    auto get = ops::ReadVariable(g, big);
    ClientSession s(g, {.target = (*worker)->target()});
    Tensor t(DT_FLOAT, TensorShape({n}));
    std::fill(t.flat<float>().begin(), t.flat<float>().end(), 1.0f);
    const int reps = mb >= 64 ? 5 : 20;
    if (!s.Run({{value, t}}, {}, {init_big.op()}).ok()) return 1;
    const Percentiles push = Measure(reps, [&] { (void)s.Run({{value, t}}, {}, {set.op()}); });
    const Percentiles pull = Measure(reps, [&] { (void)s.Run({}, {get}); });
    const double bytes = static_cast<double>(n) * 4;
    std::printf("| %d MB | %.2f | %.2f |\n", mb, bytes / push.p50_us / 1e3,
                bytes / pull.p50_us / 1e3);
  }
  const long busy_rss_kib = RssKiB((*ps)->pid());
  (*worker)->StopCluster(absl::Seconds(10)).IgnoreError();
  (void)(*ps)->Wait(absl::Seconds(10));

  std::printf("\n| iperf3, one loopback stream | GB/s |\n|---|---|\n");
  std::printf("| 128 KiB writes | %.2f |\n| 1 MiB writes | %.2f |\n", Iperf3GBps("128K"),
              Iperf3GBps("1M"));
  std::printf("\n| ps process resident memory | MB |\n|---|---|\n");
  std::printf(
      "| idle (after start and one step) | %.1f |\n| after the transfers "
      "(BufferPool keeps up to 1 GiB) | %.1f |\n",
      idle_rss_kib / 1024.0, busy_rss_kib / 1024.0);
  return 0;
}

}  // namespace
}  // namespace tw

int main(int argc, char** argv) { return tw::Main(argc, argv); }
