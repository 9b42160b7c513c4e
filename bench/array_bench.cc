// The element-moving array kernels (src/ops/transpose_ops.cc) against Eigen's tensor
// shuffle and broadcast on one thread, in the same run: Transpose of a large matrix and
// NHWC -> NCHW, Tile of a matrix. Report the ratio of the times, not the times.
#include <array>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"
#include "src/framework/attr_value.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tw::bench {
namespace {

Tensor Floats(const TensorShape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000);
  return Tensor::FromVector<float>(v, shape);
}

proto::NodeDef Node(const char* op, const char* index_attr) {
  proto::NodeDef node;
  node.set_name("n");
  node.set_op(op);
  node.add_input("x");
  node.add_input("i");
  (*node.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  (*node.mutable_attr())[index_attr] = MakeAttr(DT_INT32);
  return node;
}

void SetBytes(benchmark::State& state, int64_t elements) {
  state.SetBytesProcessed(state.iterations() * elements * static_cast<int64_t>(sizeof(float)));
}

void BM_TransposeMatrix(benchmark::State& state) {
  RunKernel(state, Node("Transpose", "Tperm"),
            {Floats({1024, 1024}), Tensor::FromVector<int32_t>({1, 0})});
  SetBytes(state, 1024 * 1024);
}
BENCHMARK(BM_TransposeMatrix);

void BM_EigenShuffleMatrix(benchmark::State& state) {
  Tensor in = Floats({1024, 1024});
  std::vector<float> out(1024 * 1024);
  Eigen::TensorMap<const Eigen::Tensor<float, 2, Eigen::RowMajor>> src(in.flat<float>().data(),
                                                                       1024, 1024);
  Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>> dst(out.data(), 1024, 1024);
  for (auto _ : state) {
    dst = src.shuffle(std::array<int, 2>{1, 0});
    benchmark::DoNotOptimize(out.data());
  }
  SetBytes(state, 1024 * 1024);
}
BENCHMARK(BM_EigenShuffleMatrix);

void BM_TransposeNhwcToNchw(benchmark::State& state) {
  RunKernel(state, Node("Transpose", "Tperm"),
            {Floats({8, 56, 56, 64}), Tensor::FromVector<int32_t>({0, 3, 1, 2})});
  SetBytes(state, 8 * 56 * 56 * 64);
}
BENCHMARK(BM_TransposeNhwcToNchw);

void BM_EigenShuffleNhwcToNchw(benchmark::State& state) {
  Tensor in = Floats({8, 56, 56, 64});
  std::vector<float> out(8 * 56 * 56 * 64);
  Eigen::TensorMap<const Eigen::Tensor<float, 4, Eigen::RowMajor>> src(in.flat<float>().data(), 8,
                                                                       56, 56, 64);
  Eigen::TensorMap<Eigen::Tensor<float, 4, Eigen::RowMajor>> dst(out.data(), 8, 64, 56, 56);
  for (auto _ : state) {
    dst = src.shuffle(std::array<int, 4>{0, 3, 1, 2});
    benchmark::DoNotOptimize(out.data());
  }
  SetBytes(state, 8 * 56 * 56 * 64);
}
BENCHMARK(BM_EigenShuffleNhwcToNchw);

void BM_TileMatrix(benchmark::State& state) {
  RunKernel(state, Node("Tile", "Tmultiples"),
            {Floats({256, 256}), Tensor::FromVector<int32_t>({4, 4})});
  SetBytes(state, 1024 * 1024);
}
BENCHMARK(BM_TileMatrix);

void BM_EigenBroadcastMatrix(benchmark::State& state) {
  Tensor in = Floats({256, 256});
  std::vector<float> out(1024 * 1024);
  Eigen::TensorMap<const Eigen::Tensor<float, 2, Eigen::RowMajor>> src(in.flat<float>().data(), 256,
                                                                       256);
  Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>> dst(out.data(), 1024, 1024);
  for (auto _ : state) {
    dst = src.broadcast(std::array<int, 2>{4, 4});
    benchmark::DoNotOptimize(out.data());
  }
  SetBytes(state, 1024 * 1024);
}
BENCHMARK(BM_EigenBroadcastMatrix);

}  // namespace
}  // namespace tw::bench

BENCHMARK_MAIN();
