// TopKV2 and GatherNd: the CPU kernels (made through the kernel registry and run with an
// OpKernelContext, as the executor does) against a direct baseline in the same run:
// TopKV2 against std::stable_sort of every row's positions (what a full sort costs), and
// GatherNd against one memcpy of the same bytes (the copy alone).
//
//   index_bench --benchmark_min_time=0.5
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"

namespace tw {
namespace {

constexpr int64_t kRows = 256, kCols = 4096;

Tensor Random(const TensorShape& shape, unsigned seed) {
  Tensor t(DT_FLOAT, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

proto::NodeDef Node(const char* op, int inputs) {
  proto::NodeDef node;
  node.set_name("n");
  node.set_op(op);
  for (int i = 0; i < inputs; ++i) node.add_input("in:" + std::to_string(i));
  return node;
}

void BM_TopK(benchmark::State& state) {
  proto::NodeDef node = Node("TopKV2", 2);
  (*node.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  bench::RunKernel(state, node,
                   {Random({kRows, kCols}, 1), Tensor::Scalar<int32_t>(state.range(0))});
  state.SetItemsProcessed(state.iterations() * kRows * kCols);
}
BENCHMARK(BM_TopK)->Arg(1)->Arg(10)->Arg(100)->Arg(kCols);

void BM_FullSortBaseline(benchmark::State& state) {
  const Tensor x = Random({kRows, kCols}, 1);
  const float* data = x.flat<float>().data();
  std::vector<int32_t> order(kCols);
  for (auto _ : state) {
    for (int64_t r = 0; r < kRows; ++r) {
      const float* row = data + r * kCols;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [row](int32_t a, int32_t b) { return row[a] > row[b]; });
      benchmark::DoNotOptimize(order.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * kRows * kCols);
}
BENCHMARK(BM_FullSortBaseline);

// 4096 rows of 256 floats picked by (i, j) tuples from a [64, 64, 256] tensor.
void BM_GatherNd(benchmark::State& state) {
  std::vector<int32_t> idx;
  std::mt19937 gen(2);
  for (int i = 0; i < 4096; ++i) {
    idx.push_back(static_cast<int32_t>(gen() % 64));
    idx.push_back(static_cast<int32_t>(gen() % 64));
  }
  proto::NodeDef node = Node("GatherNd", 2);
  (*node.mutable_attr())["Tparams"] = MakeAttr(DT_FLOAT);
  (*node.mutable_attr())["Tindices"] = MakeAttr(DT_INT32);
  bench::RunKernel(state, node,
                   {Random({64, 64, 256}, 3), Tensor::FromVector<int32_t>(idx, {4096, 2})});
  state.SetBytesProcessed(state.iterations() * 4096 * 256 * 4);
}
BENCHMARK(BM_GatherNd);

void BM_MemcpyBaseline(benchmark::State& state) {
  std::vector<float> src(4096 * 256), dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size() * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * 4096 * 256 * 4);
}
BENCHMARK(BM_MemcpyBaseline);

}  // namespace
}  // namespace tw

BENCHMARK_MAIN();
