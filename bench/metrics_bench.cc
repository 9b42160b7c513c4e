// What counting RPCs costs (docs/metrics.md): the round trip of an empty call (GetStatus) to
// two servers of this process, one serving metrics (its calls go through the counting
// interceptor, src/rpc/rpc_metrics.h) and one not, timed in turns so that both see the same
// machine. bench/metrics_cost.sh measures whole steps and pushes, process against process.
//
//   build/bench/metrics_bench [calls]          (default 20000 per server)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "tensorweave/protobuf/service.grpc.pb.h"
#include "tensorweave/server.h"

namespace tw {
namespace {

int Main(int argc, char** argv) {
  const int calls = argc > 1 ? std::max(100, std::atoi(argv[1])) : 20000;
  auto without = Server::CreateLocal({.num_threads = 1});
  auto with = Server::CreateLocal({.num_threads = 1, .metrics_port = 0});
  if (!without.ok() || !with.ok()) {
    std::fprintf(stderr, "cannot start the servers\n");
    return 1;
  }
  auto stub = [](int port) {
    return proto::WorkerService::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                             grpc::InsecureChannelCredentials()));
  };
  auto plain = stub((*without)->port());
  auto counted = stub((*with)->port());
  auto round_trip_us = [](proto::WorkerService::Stub& s) {
    grpc::ClientContext ctx;
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    const auto start = std::chrono::steady_clock::now();
    (void)s.GetStatus(&ctx, req, &resp);
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
        .count();
  };
  for (int i = 0; i < calls / 20; ++i) {  // warm up both connections
    round_trip_us(*plain);
    round_trip_us(*counted);
  }
  std::vector<double> off, on;
  for (int i = 0; i < calls; ++i) {  // the order alternates: a call right after another is
    if (i % 2 == 0) {                // a little faster
      off.push_back(round_trip_us(*plain));
      on.push_back(round_trip_us(*counted));
    } else {
      on.push_back(round_trip_us(*counted));
      off.push_back(round_trip_us(*plain));
    }
  }
  auto pct = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * (v.size() - 1))];
  };
  std::printf("| GetStatus round trip, %d calls each, in turns | p50 | p90 |\n|---|---|---|\n",
              calls);
  std::printf("| server without metrics | %.1f us | %.1f us |\n", pct(off, 0.5), pct(off, 0.9));
  std::printf("| server with metrics (counting interceptor) | %.1f us (%.3fx) | %.1f us |\n",
              pct(on, 0.5), pct(on, 0.5) / pct(off, 0.5), pct(on, 0.9));
  return 0;
}

}  // namespace
}  // namespace tw

int main(int argc, char** argv) { return tw::Main(argc, argv); }
