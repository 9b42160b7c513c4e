// Session::Run overhead for cached executables: the cost of a step when the graph work is
// already done. Goal (issue 3): a tiny cached run <= 5 us median on the 2-core VM.
//
//   build/bench/session_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <memory>

#include "benchmark/benchmark.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

// Fetch one Identity of a Const: the smallest useful step.
void BM_SessionRunTiny(benchmark::State& state) {
  Scope root = Scope::NewRootScope();
  auto y = ops::Identity(root, ops::Const(root, Tensor::Scalar<float>(1)));
  ClientSession session(root, {.num_threads = 1});
  if (!session.Run({}, {y}).ok()) state.SkipWithError("first run failed");
  for (auto _ : state) {
    auto out = session.Run({}, {y});
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_SessionRunTiny);

// A fed scalar through a chain of ten ops (Identity and AddN-like adds) and one fetch.
void BM_SessionRunTenOps(benchmark::State& state) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  Output v = x;
  for (int i = 0; i < 5; ++i) {
    v = ops::Identity(root, v);
    v = ops::Add(root, v, x);
  }
  ClientSession session(root, {.num_threads = 1});
  const Tensor feed = Tensor::Scalar<float>(1);
  if (!session.Run({{x, feed}}, {v}).ok()) state.SkipWithError("first run failed");
  for (auto _ : state) {
    auto out = session.Run({{x, feed}}, {v});
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_SessionRunTenOps);

// A variable update step: AssignAdd of a scalar (the core of the word count's reduce).
void BM_SessionRunAssignAdd(benchmark::State& state) {
  Scope root = Scope::NewRootScope();
  auto total = ops::MakeVariable(root, "total", DT_INT64, {});
  auto init = ops::Assign(root, total, int64_t{0});
  auto add = ops::AssignAdd(root, total, int64_t{1});
  ClientSession session(root, {.num_threads = 1});
  if (!session.Run({}, {init}).ok()) state.SkipWithError("init failed");
  for (auto _ : state) {
    auto out = session.Run({}, {}, {add.op()});
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_SessionRunAssignAdd);

}  // namespace
}  // namespace tw

BENCHMARK_MAIN();
