// How `tw launch`'s planning scales with the number of tasks: the TF_CONFIG of every task
// (PlanTasks) and the job policy fed every task's exit. Run with
// --benchmark_filter=. and read the BigO line: the policy is O(n); planning is O(n^2) in
// bytes by TFJob's format (n TF_CONFIGs listing n tasks) but only memcpy-like per byte,
// the JSON work being done once. Compare against BM_CopyTfConfigBytes (the same bytes
// copied) and BM_SerializeClusterPerTask (the old way), measured in the same run.
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "tools/launch/launch_plan.h"
#include "tools/launch/launch_policy.h"

namespace tw::launch {
namespace {

ClusterSpec Cluster(int tasks) {
  std::vector<int> ports;
  for (int i = 0; i < tasks; ++i) ports.push_back(20000 + i);
  return *MakeLocalCluster({{"worker", tasks}}, ports);
}

void BM_PlanTasks(benchmark::State& state) {
  const ClusterSpec cluster = Cluster(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(PlanTasks(cluster));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_PlanTasks)->RangeMultiplier(2)->Range(125, 1000)->Complexity();

// What planning did before: the cluster serialized again for each task's TF_CONFIG
// (TfJobTfConfig alone still does).
void BM_SerializeClusterPerTask(benchmark::State& state) {
  const ClusterSpec cluster = Cluster(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    for (int i = 0; i < state.range(0); ++i) {
      benchmark::DoNotOptimize(TfJobTfConfig(cluster, {"worker", i}));
    }
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_SerializeClusterPerTask)->RangeMultiplier(2)->Range(125, 1000)->Complexity();

// The floor: the bytes of every task's TF_CONFIG, copied.
void BM_CopyTfConfigBytes(benchmark::State& state) {
  const std::vector<TaskPlan> plan = PlanTasks(Cluster(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    std::vector<std::string> copies;
    for (const TaskPlan& t : plan) copies.push_back(*t.tf_config);
    benchmark::DoNotOptimize(copies);
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_CopyTfConfigBytes)->RangeMultiplier(2)->Range(125, 1000)->Complexity();

void BM_EveryWorkerExits(benchmark::State& state) {
  std::vector<TaskId> tasks;
  for (int i = 0; i < state.range(0); ++i) tasks.push_back({"worker", i});
  for (auto _ : state) {
    JobPolicy policy(tasks, SuccessPolicy::kAllWorkers, RestartPolicy::kNever, 0);
    for (size_t i = 0; i < tasks.size(); ++i) benchmark::DoNotOptimize(policy.OnExit(i, 0));
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_EveryWorkerExits)->RangeMultiplier(2)->Range(125, 1000)->Complexity();

}  // namespace
}  // namespace tw::launch

BENCHMARK_MAIN();
