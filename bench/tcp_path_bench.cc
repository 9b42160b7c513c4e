// The TCP path between tasks, as between hosts: tensor push (AssignAdd of a fed tensor on
// the ps task) and pull (fetching the ps's variable) with shared memory off, against iperf3
// (one stream, 1 MiB writes) on the same path, and the tiny cross-task step against the raw
// gRPC round trip.
//
//   build/bench/tcp_path_bench [--rounds N] [--sizes 1,16,64,256]
//   build/bench/tcp_path_bench --ps HOST:PORT --worker HOST:PORT --iperf3 HOST:PORT ...
//
// Everything is measured in turns: each round runs one iperf3 transfer, then every size's
// pushes and pulls, so all of them see the same machine (this VM's speed drifts by tens of
// percent within seconds). A round's figure for a size is the median of its repetitions;
// the table gives, per size, the median over rounds, the spread (10th to 90th percentile
// over rounds, as a share of the median), and the ratio to iperf3's median.
//
// Without --ps the ps task is a `tw server` process on 127.0.0.1 started here, and iperf3's
// server too; a second ps task with TW_CHUNK_SOCKETS=0 is the baseline: every size is also
// measured there, in turns, with its chunks in gRPC calls instead of on chunk sockets. With --ps
// (bench/between_hosts_bench.py: simulated hosts) both servers run elsewhere and this process is
// the worker task at --worker. With several ps tasks, each size is also measured as a variable
// partitioned over all of them (one part per task), in turns with the whole variable on ps task 0.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

double SecondsOf(const std::function<void()>& fn) {
  const auto start = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The value at quantile q (0..1) of `v`, nearest rank.
double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

// Median over rounds, and the 10th-90th percentile spread as a share of it.
struct Summary {
  double median = 0, spread = 0;
};
Summary Summarize(const std::vector<double>& rounds) {
  Summary s;
  s.median = Quantile(rounds, 0.5);
  s.spread = s.median > 0 ? (Quantile(rounds, 0.9) - Quantile(rounds, 0.1)) / s.median : 0;
  return s;
}

// Runs `argv` and returns its standard output (empty when it cannot run or fails). Through
// posix_spawn, which does not fork this process's memory: a fork would make the next writes
// to every tensor page copy-on-write faults, and the transfers after an iperf3 round would
// pay for them.
std::string OutputOf(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while (spawned == 0 && ((n = read(out[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))) {
    if (n > 0) text.append(buf, n);
  }
  close(out[0]);
  int status = 0;
  if (spawned != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return "";
  }
  return text;
}

// One iperf3 transfer of `bytes` from this host to `server` (HOST:PORT), 1 MiB writes, one
// stream; GB/s, or 0 when iperf3 is missing or fails.
double Iperf3GBps(const std::string& server, int64_t bytes) {
  const size_t colon = server.rfind(':');
  const std::string out =
      OutputOf({"/usr/bin/iperf3", "-c", server.substr(0, colon), "-p", server.substr(colon + 1),
                "-l", "1M", "-n", std::to_string(bytes), "-J"});
  auto json = nlohmann::json::parse(out, nullptr, false);
  if (json.is_discarded() || !json.contains("end")) return 0;
  return json["end"]["sum_received"]["bits_per_second"].get<double>() / 8 / 1e9;
}

// A variable of `mb` MB pushed to and pulled from the ps tasks: whole on ps task 0, or
// partitioned along its only dimension into one part per ps task (as a partitioned
// variable's parts are placed), pushed and pulled in one step.
struct Transfer {
  int mb = 0;
  int parts = 1;
  std::string label;  // what is measured besides the size, for the table
  int reps = 0;
  std::unique_ptr<ClientSession> session;
  ClientSession::FeedList feeds;  // per part: placeholder, value
  std::vector<Operation> push;
  std::vector<Output> pull;
  double bytes = 0;
  std::vector<double> push_gbps, pull_gbps;  // per round
};

// On ps tasks first_task .. first_task + parts - 1.
StatusOr<Transfer> MakeTransfer(const std::string& target, int mb, int parts, int first_task,
                                std::string label) {
  Transfer t;
  t.mb = mb;
  t.parts = parts;
  t.label = std::move(label);
  t.reps = std::max(3, 160 / mb);
  const int64_t n = int64_t{mb} * 1024 * 1024 / 4;
  Scope g = Scope::NewRootScope();
  std::vector<Operation> assign;
  for (int p = 0; p < parts; ++p) {
    const int64_t rows = n / parts + (p < n % parts ? 1 : 0);
    auto var =
        ops::MakeVariable(g.WithDevice(absl::StrCat("/job:ps/task:", first_task + p)),
                          absl::StrCat("big", mb, "/part_", p, "_of_", parts), DT_FLOAT, {rows});
    auto value = ops::Placeholder(g, DT_FLOAT);
    Tensor fed(DT_FLOAT, TensorShape({rows}));
    std::fill(fed.flat<float>().begin(), fed.flat<float>().end(), 1.0f);
    assign.push_back(ops::Assign(g, var, value).op());
    t.push.push_back(ops::AssignAdd(g, var, value).op());
    t.pull.push_back(ops::ReadVariable(g, var));
    t.feeds.emplace_back(value, std::move(fed));
    t.bytes += rows * 4.0;
  }
  t.session = std::make_unique<ClientSession>(g, SessionOptions{.target = target});
  TW_RETURN_IF_ERROR(t.session->Run(t.feeds, {}, assign).status());
  for (int i = 0; i < 2; ++i) {  // warm up: graphs registered, buffers pooled
    TW_RETURN_IF_ERROR(t.session->Run(t.feeds, {}, t.push).status());
    TW_RETURN_IF_ERROR(t.session->Run({}, t.pull).status());
  }
  return t;
}

int Main(int argc, char** argv) {
  CLI::App app{"tensor push/pull over TCP against iperf3, in turns"};
  int rounds = 9;
  std::vector<int> sizes_mb = {1, 16, 64, 256};
  int tiny_iterations = 2000;
  std::vector<std::string> ps_addresses;
  std::string worker_address, iperf3_address;
  int64_t iperf3_bytes = int64_t{1} << 30;
  app.add_option("--rounds", rounds, "rounds of measurements in turns")->check(CLI::Range(1, 1000));
  app.add_option("--sizes", sizes_mb, "tensor sizes in MB")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--tiny", tiny_iterations, "iterations of the tiny steps (0: skip)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--ps", ps_addresses,
                 "running ps tasks' HOST:PORT, comma-separated (default: start one here)")
      ->delimiter(',');
  app.add_option("--worker", worker_address, "this worker task's HOST:PORT (with --ps)");
  app.add_option("--iperf3", iperf3_address, "a running iperf3 server's HOST:PORT (with --ps)");
  app.add_option("--iperf3-bytes", iperf3_bytes, "bytes per iperf3 transfer")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (!ps_addresses.empty() && (worker_address.empty() || iperf3_address.empty())) {
    std::fprintf(stderr, "--ps needs --worker and --iperf3\n");
    return 2;
  }

  std::vector<std::unique_ptr<testing::ChildProcess>> ps;
  std::unique_ptr<testing::ChildProcess> iperf3;
  int baseline_task = -1;  // the ps task whose chunks travel in gRPC calls, if any
  if (ps_addresses.empty()) {
    for (int i = 0; i < 2; ++i) {
      ps_addresses.push_back("127.0.0.1:" + std::to_string(testing::PickUnusedPort()));
    }
    worker_address = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
    const std::string tw = std::filesystem::path(argv[0]).parent_path().parent_path() / "tools/tw";
    for (int i = 0; i < 2; ++i) {
      const std::string tf_config = absl::StrCat(
          R"({"cluster":{"ps":[")", absl::StrJoin(ps_addresses, R"(",")"), R"("],"worker":[")",
          worker_address, R"("]},"task":{"type":"ps","index":)", i, "}}");
      auto started =
          testing::ChildProcess::Start({tw, "server", "--bind-host", "127.0.0.1"},
                                       {{"TF_CONFIG", tf_config},
                                        {"TW_SHARED_MEMORY", "0"},
                                        {"TW_CHUNK_SOCKETS", i == 0 ? "1" : "0"}},
                                       absl::StrCat("/tmp/tcp_path_bench_ps", i, ".log"));
      if (!started.ok()) {
        std::fprintf(stderr, "cannot start %s: %s\n", tw.c_str(),
                     started.status().ToString().c_str());
        return 1;
      }
      ps.push_back(std::move(*started));
    }
    baseline_task = 1;
    const int port = testing::PickUnusedPort();
    iperf3_address = "127.0.0.1:" + std::to_string(port);
    auto server = testing::ChildProcess::Start(
        {"/usr/bin/iperf3", "-s", "-B", "127.0.0.1", "-p", std::to_string(port)}, {}, "/dev/null");
    if (server.ok()) iperf3 = std::move(*server);
    absl::SleepFor(absl::Milliseconds(300));  // iperf3 has no readiness signal but its port
  }

  ClusterSpec cluster;
  const std::string& ps_address = ps_addresses[0];
  if (!cluster.AddJob("ps", ps_addresses).ok() ||
      !cluster.AddJob("worker", std::vector<std::string>{worker_address}).ok()) {
    std::fprintf(stderr, "bad addresses: --ps %s --worker %s\n",
                 absl::StrJoin(ps_addresses, ",").c_str(), worker_address.c_str());
    return 2;
  }
  const std::string bind_host = worker_address.substr(0, worker_address.rfind(':'));
  // TW_METRICS_PORT (0: any port) gives this task a metrics endpoint, as it does the ps's
  // `tw server`: docs/performance.md compares runs with and without.
  auto worker = Server::Create(cluster, "worker", 0,
                               {.bind_host = bind_host,
                                .shared_memory = false,
                                .metrics_port = RuntimeSettings::FromEnvironment().metrics_port});
  if (!worker.ok() || !(*worker)->Start().ok()) {
    std::fprintf(stderr, "cannot start the worker server on %s\n", worker_address.c_str());
    return 1;
  }

  // The tiny steps, in turns with the raw round trip (GetStatus on the same gRPC stack).
  Scope root = Scope::NewRootScope();
  auto scalar = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "scalar", DT_FLOAT, {});
  auto init = ops::Assign(root, scalar, 1.0f);
  auto read = ops::ReadVariable(root, scalar);
  ClientSession tiny(root, {.target = (*worker)->target()});
  if (auto first = tiny.Run({}, {}, {init.op()}); !first.ok()) {  // waits for the ps task
    std::fprintf(stderr, "first step: %s\n", first.status().ToString().c_str());
    return 1;
  }
  if (tiny_iterations > 0) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    auto stub = proto::WorkerService::NewStub(
        grpc::CreateCustomChannel(ps_address, grpc::InsecureChannelCredentials(), args));
    std::vector<double> raw_us, step_us;
    for (int i = 0; i < tiny_iterations; ++i) {
      raw_us.push_back(1e6 * SecondsOf([&] {
                         grpc::ClientContext ctx;
                         proto::GetStatusRequest req;
                         proto::GetStatusResponse resp;
                         (void)stub->GetStatus(&ctx, req, &resp);
                       }));
      step_us.push_back(1e6 * SecondsOf([&] { (void)tiny.Run({}, {read}); }));
    }
    const double raw = Quantile(raw_us, 0.5), step = Quantile(step_us, 0.5);
    std::printf("| Tiny step (%s to %s) | p50 | ratio |\n|---|---|---|\n", worker_address.c_str(),
                ps_address.c_str());
    std::printf("| raw gRPC unary round trip (GetStatus) | %.0f us | 1 |\n", raw);
    std::printf("| fetch a scalar from /job:ps/task:0 | %.0f us | %.2fx |\n\n", step, step / raw);
  }

  // Each size whole on ps task 0 and then either on the baseline task or, with several ps
  // tasks given, partitioned over all of them.
  std::vector<Transfer> transfers;
  for (int mb : sizes_mb) {
    struct Placement {
      int parts, first_task;
      std::string label;
    };
    std::vector<Placement> placements = {{1, 0, ""}};
    if (baseline_task >= 0) {
      placements.push_back({1, baseline_task, ", chunks in gRPC calls"});
    } else if (ps_addresses.size() > 1) {
      const int n = static_cast<int>(ps_addresses.size());
      placements.push_back({n, 0, absl::StrCat(", ", n, " parts on ", n, " ps tasks")});
    }
    for (const Placement& p : placements) {
      auto t = MakeTransfer((*worker)->target(), mb, p.parts, p.first_task, p.label);
      if (!t.ok()) {
        std::fprintf(stderr, "%d MB%s: %s\n", mb, p.label.c_str(), t.status().ToString().c_str());
        return 1;
      }
      transfers.push_back(*std::move(t));
    }
  }

  std::vector<double> iperf3_gbps;
  for (int r = 0; r < rounds; ++r) {
    iperf3_gbps.push_back(Iperf3GBps(iperf3_address, iperf3_bytes));
    // A size's two placements take turns going first, so that neither is always the
    // first transfer after iperf3's (which runs slower here).
    std::vector<Transfer*> order;
    for (Transfer& t : transfers) order.push_back(&t);
    if (r % 2 == 1) {
      for (size_t i = 0; i + 1 < order.size(); i += 2) std::swap(order[i], order[i + 1]);
    }
    for (Transfer* next : order) {
      Transfer& t = *next;
      std::vector<double> push, pull;
      Status failed;
      for (int i = 0; i < t.reps; ++i) {
        push.push_back(t.bytes / 1e9 / SecondsOf([&] {
                         failed.Update(t.session->Run(t.feeds, {}, t.push).status());
                       }));
      }
      for (int i = 0; i < t.reps; ++i) {
        pull.push_back(t.bytes / 1e9 /
                       SecondsOf([&] { failed.Update(t.session->Run({}, t.pull).status()); }));
      }
      if (!failed.ok()) {  // a failed step would be timed as a fast one
        std::fprintf(stderr, "%d MB%s: %s\n", t.mb, t.label.c_str(), failed.ToString().c_str());
        return 1;
      }
      t.push_gbps.push_back(Quantile(push, 0.5));
      t.pull_gbps.push_back(Quantile(pull, 0.5));
    }
  }

  const Summary ip = Summarize(iperf3_gbps);
  std::printf("| %d rounds in turns | GB/s (median) | spread p10-p90 | x iperf3 |\n", rounds);
  std::printf("|---|---|---|---|\n| iperf3, one stream, 1 MiB writes | %.2f | %.0f%% | 1 |\n",
              ip.median, 100 * ip.spread);
  for (const Transfer& t : transfers) {
    for (const auto& [what, values] : {std::pair{"push", &t.push_gbps}, {"pull", &t.pull_gbps}}) {
      const Summary s = Summarize(*values);
      std::printf("| %d MB%s %s | %.2f | %.0f%% | %.2fx |\n", t.mb, t.label.c_str(), what, s.median,
                  100 * s.spread, ip.median > 0 ? s.median / ip.median : 0.0);
    }
  }
  transfers.clear();
  if (!ps.empty()) {
    (*worker)->StopCluster(absl::Seconds(10)).IgnoreError();
    for (auto& p : ps) (void)p->Wait(absl::Seconds(10));
  }
  (*worker)->Stop();
  return 0;
}

}  // namespace
}  // namespace tw

int main(int argc, char** argv) { return tw::Main(argc, argv); }
