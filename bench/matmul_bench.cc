// MatMul: the CPU kernel (created through the kernel registry and run with an
// OpKernelContext, as the executor does) against calling Eigen directly on the same data, to
// measure what the kernel layer costs on top of the product itself.
//
//   matmul_bench --benchmark_min_time=0.5
#include <random>
#include <vector>

#include "Eigen/Core"
#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"

namespace tw {
namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Tensor RandomMatrix(int64_t rows, int64_t cols, unsigned seed) {
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

void BM_MatMulKernel(benchmark::State& state) {
  const int64_t n = state.range(0);
  proto::NodeDef node;
  node.set_name("mm");
  node.set_op("MatMul");
  node.add_input("a");
  node.add_input("b");
  (*node.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  bench::RunKernel(state, node, {RandomMatrix(n, n, 1), RandomMatrix(n, n, 2)});
  state.SetItemsProcessed(state.iterations() * 2 * n * n * n);  // flops
}

void BM_MatMulEigenDirect(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = RandomMatrix(n, n, 1);
  const Tensor b = RandomMatrix(n, n, 2);
  Tensor c(DT_FLOAT, TensorShape({n, n}));
  Eigen::Map<const RowMajorMatrix> ma(a.flat<float>().data(), n, n);
  Eigen::Map<const RowMajorMatrix> mb(b.flat<float>().data(), n, n);
  Eigen::Map<RowMajorMatrix> mc(c.flat<float>().data(), n, n);
  for (auto _ : state) {
    mc.noalias() = ma * mb;
    benchmark::DoNotOptimize(mc.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * 2 * n * n * n);
}

BENCHMARK(BM_MatMulKernel)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatMulEigenDirect)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tw

BENCHMARK_MAIN();
