// Cross-task step latency and tensor throughput over loopback, beside the floor: a raw
// gRPC unary round trip (the worker service's GetStatus) measured in the same run.
//
//   build/bench/distributed_bench [iterations]
// Prints a table; the ps and worker tasks are servers in this process talking over TCP.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "tensorweave/ops.h"
#include "tensorweave/protobuf/service.grpc.pb.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using Clock = std::chrono::steady_clock;

struct Percentiles {
  double p50_us, p99_us;
};

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

int FreePort() {
  // Let the OS choose by starting a throwaway local server would be heavier; a fixed base
  // offset by the process id avoids collisions between concurrent runs.
  return 20000 + static_cast<int>(getpid() % 20000);
}

int Main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int base = FreePort();
  ClusterSpec cluster;
  if (!cluster.AddJob("ps", std::vector<std::string>{"127.0.0.1:" + std::to_string(base)}).ok() ||
      !cluster.AddJob("worker", std::vector<std::string>{"127.0.0.1:" + std::to_string(base + 1)})
           .ok()) {
    return 1;
  }
  ServerOptions options{.bind_host = "127.0.0.1", .num_threads = 1};
  auto ps = Server::Create(cluster, "ps", 0, options);
  auto worker = Server::Create(cluster, "worker", 0, options);
  if (!ps.ok() || !worker.ok() || !(*ps)->Start().ok() || !(*worker)->Start().ok()) {
    std::fprintf(stderr, "cannot start the servers\n");
    return 1;
  }

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(base),
                                           grpc::InsecureChannelCredentials(), args);
  auto stub = proto::WorkerService::NewStub(channel);
  const Percentiles raw = Measure(iterations, [&] {
    grpc::ClientContext ctx;
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    (void)stub->GetStatus(&ctx, req, &resp);
  });

  Scope root = Scope::NewRootScope();
  Scope on_ps = root.WithDevice("/job:ps/task:0");
  auto scalar = ops::MakeVariable(on_ps, "scalar", DT_FLOAT, {});
  auto init = ops::Assign(root, scalar, 1.0f);
  auto read = ops::ReadVariable(root, scalar);
  auto add = ops::AssignAdd(root, scalar, 1.0f);
  ClientSession session(root, {.target = (*worker)->target()});
  if (!session.Run({}, {}, {init.op()}).ok()) return 1;
  const Percentiles fetch = Measure(iterations, [&] { (void)session.Run({}, {read}); });
  const Percentiles update = Measure(iterations, [&] { (void)session.Run({}, {}, {add.op()}); });

  std::printf("| Measurement (loopback, this process) | p50 | p99 |\n|---|---|---|\n");
  std::printf("| raw gRPC unary round trip (GetStatus) | %.0f us | %.0f us |\n", raw.p50_us,
              raw.p99_us);
  std::printf(
      "| cross-task step: fetch a scalar from /job:ps/task:0 | %.0f us (%.2fx) | %.0f us |\n",
      fetch.p50_us, fetch.p50_us / raw.p50_us, fetch.p99_us);
  std::printf("| cross-task step: AssignAdd of a scalar on ps | %.0f us (%.2fx) | %.0f us |\n",
              update.p50_us, update.p50_us / raw.p50_us, update.p99_us);

  std::printf("\n| Tensor (float32) | push GB/s | pull GB/s |\n|---|---|---|\n");
  for (int mb : {1, 16, 64}) {
    const int64_t n = int64_t{mb} * 1024 * 1024 / 4;
    Scope g = Scope::NewRootScope();
    auto big = ops::MakeVariable(g.WithDevice("/job:ps/task:0"), "big" + std::to_string(mb),
                                 DT_FLOAT, {n});
    auto value = ops::Placeholder(g, DT_FLOAT);
    auto set = ops::Assign(g, big, value);
    auto get = ops::ReadVariable(g, big);
    ClientSession s(g, {.target = (*worker)->target()});
    Tensor t(DT_FLOAT, TensorShape({n}));
    std::fill(t.flat<float>().begin(), t.flat<float>().end(), 1.0f);
    const int reps = mb >= 64 ? 3 : 10;
    if (!s.Run({{value, t}}, {}, {set.op()}).ok()) return 1;
    const Percentiles push = Measure(reps, [&] { (void)s.Run({{value, t}}, {}, {set.op()}); });
    const Percentiles pull = Measure(reps, [&] { (void)s.Run({}, {get}); });
    const double bytes = static_cast<double>(n) * 4;
    std::printf("| %d MB | %.2f | %.2f |\n", mb, bytes / push.p50_us / 1e3,
                bytes / pull.p50_us / 1e3);
  }
  (*worker)->Stop();
  (*ps)->Stop();
  return 0;
}

}  // namespace
}  // namespace tw

int main(int argc, char** argv) { return tw::Main(argc, argv); }
