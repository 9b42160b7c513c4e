// The ClusterCoordinator's own cost per scheduled step (issue 32; goal: under 50 us), on
// a ps and one worker server in this process: the same step (a constant made on the worker
// added to a counter on the ps task) run
//   SessionRun          by a Session on the worker, one step at a time (the baseline);
//   ScheduleAndFetch    through the coordinator, one at a time: baseline + the handoff to
//                       the worker's thread and back;
//   ScheduleAndJoin     through the coordinator, 100 queued then joined (per step);
//   Schedule            the program's side alone: queueing one step (per call), for a
//                       worker that never takes it.
//
//   build/bench/coordinator_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "tensorweave/train/cluster_coordinator.h"
#include "testing/ports.h"

namespace tw {
namespace {

using train::ClusterCoordinator;
using train::ScheduledFunction;

class Cluster {
 public:
  Cluster() {
    const std::string ps = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
    const std::string worker = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
    (void)spec_.AddJob("ps", {ps});
    (void)spec_.AddJob("worker", {worker});
    for (const char* job : {"ps", "worker"}) {
      auto server = Server::Create(spec_, job, 0, {.bind_host = "127.0.0.1", .num_threads = 1});
      if (server.ok() && (*server)->Start().ok()) servers_.push_back(*std::move(server));
    }
    Scope root = Scope::NewRootScope();
    auto counter = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "counter", DT_INT64, {});
    ops::Assign(root.WithOpName("init"), counter, int64_t{0});
    auto one = ops::Const(root.WithDevice("/job:worker/task:0").WithOpName("one"),
                          Tensor::Scalar<int64_t>(1));
    ops::AssignAdd(root.WithOpName("add"), counter, one);
    graph_ = *root.ToGraphDef();
    step_ = std::make_shared<ScheduledFunction>();
    step_->name = "add";
    step_->per_worker.push_back({.targets = {"add"}});
  }
  bool ok() const { return servers_.size() == 2; }
  std::string worker_target() const { return servers_[1]->target(); }
  const proto::GraphDef& graph() const { return graph_; }
  std::shared_ptr<const ScheduledFunction> step() const { return step_; }

  std::unique_ptr<ClusterCoordinator> Coordinator() const {
    auto c = ClusterCoordinator::Create({.worker_targets = {worker_target()}});
    if (!c.ok() || !(*c)->ExtendGraph(graph_).ok()) return nullptr;
    auto init = std::make_shared<ScheduledFunction>();
    init->name = "init";
    init->per_worker.push_back({.targets = {"init"}});
    auto done = (*c)->Schedule(init);
    if (!done.ok() || !(*done)->Fetch().ok()) return nullptr;
    return *std::move(c);
  }

 private:
  ClusterSpec spec_;
  std::vector<std::unique_ptr<Server>> servers_;
  proto::GraphDef graph_;
  std::shared_ptr<ScheduledFunction> step_;
};

Cluster& TheCluster() {
  static Cluster* cluster = new Cluster();
  return *cluster;
}

void BM_SessionRun(benchmark::State& state) {
  Cluster& cluster = TheCluster();
  auto session = Session::Create(
      {.target = cluster.worker_target(), .device_filters = {"/job:ps", "/job:worker/task:0"}});
  if (!cluster.ok() || !session.ok() || !(*session)->Extend(cluster.graph()).ok()) {
    state.SkipWithError("no cluster");
    return;
  }
  std::vector<Tensor> out;
  if (!(*session)->Run({}, {}, {"init"}, &out).ok()) state.SkipWithError("init failed");
  for (auto _ : state) {
    Status s = (*session)->Run({}, {}, {"add"}, &out);
    if (!s.ok()) state.SkipWithError("step failed");
  }
}
BENCHMARK(BM_SessionRun)->UseRealTime();

void BM_ScheduleAndFetch(benchmark::State& state) {
  auto coordinator = TheCluster().Coordinator();
  if (coordinator == nullptr) {
    state.SkipWithError("no coordinator");
    return;
  }
  for (auto _ : state) {
    auto value = coordinator->Schedule(TheCluster().step());
    if (!value.ok() || !(*value)->Fetch().ok()) state.SkipWithError("step failed");
  }
}
BENCHMARK(BM_ScheduleAndFetch)->UseRealTime();

void BM_ScheduleAndJoin(benchmark::State& state) {
  auto coordinator = TheCluster().Coordinator();
  if (coordinator == nullptr) {
    state.SkipWithError("no coordinator");
    return;
  }
  constexpr int kBatch = 100;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) (void)coordinator->Schedule(TheCluster().step());
    if (!coordinator->Join().ok()) state.SkipWithError("step failed");
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_ScheduleAndJoin)->UseRealTime();

void BM_Schedule(benchmark::State& state) {
  // A worker that never answers: every step stays queued, so only queueing is timed (the
  // coordinator cancels them when it goes).
  const std::string nowhere = "grpc://127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  auto coordinator = ClusterCoordinator::Create({.worker_targets = {nowhere}});
  if (!coordinator.ok()) {
    state.SkipWithError("no coordinator");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize((*coordinator)->Schedule(TheCluster().step()));
  }
}
BENCHMARK(BM_Schedule);

}  // namespace
}  // namespace tw

BENCHMARK_MAIN();
