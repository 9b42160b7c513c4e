// Conv2D and its two gradients: the CPU kernels (made through the kernel registry and run
// with an OpKernelContext, as the executor does, one thread; floats run on oneDNN) against
// one Eigen matrix product of the same size as the convolution's, [pixels, kh*kw*in_c] x
// [kh*kw*in_c, out_c], with the patches already laid out: the arithmetic alone, which is
// what the im2col kernels can at best reach. Shapes: the two convolutions of the MNIST conv net
// (batch 64) and a 3x3 residual block's (batch 8, 56 x 56 x 64).
//
//   conv_bench --benchmark_min_time=0.5
#include <random>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"

namespace tw {
namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct ConvCase {
  int64_t batch, size, in_c, k, out_c;  // SAME padding, stride 1
};
const ConvCase kCases[] = {{64, 28, 1, 5, 32}, {64, 14, 32, 5, 64}, {8, 56, 64, 3, 64}};

Tensor Random(const TensorShape& shape, unsigned seed) {
  Tensor t(DT_FLOAT, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

int64_t Flops(const ConvCase& c) {
  return 2 * c.batch * c.size * c.size * c.k * c.k * c.in_c * c.out_c;
}

// Runs `op` (Conv2D or Conv2DBackpropFilter, SAME, stride 1) on `inputs` each iteration.
void RunKernel(benchmark::State& state, const char* op, const std::vector<Tensor>& inputs,
               const ConvCase& c) {
  proto::NodeDef node;
  node.set_name("conv");
  node.set_op(op);
  for (size_t i = 0; i < inputs.size(); ++i) node.add_input("in:" + std::to_string(i));
  (*node.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  (*node.mutable_attr())["strides"] = MakeAttr(std::vector<int64_t>{1, 1, 1, 1});
  (*node.mutable_attr())["padding"] = MakeAttr("SAME");
  if (std::string(op) != "Conv2D") (*node.mutable_attr())["Tsizes"] = MakeAttr(DT_INT32);
  bench::RunKernel(state, node, inputs);
  state.SetItemsProcessed(state.iterations() * Flops(c));
}

void BM_Conv2DKernel(benchmark::State& state) {
  const ConvCase& c = kCases[state.range(0)];
  RunKernel(state, "Conv2D",
            {Random({c.batch, c.size, c.size, c.in_c}, 1), Random({c.k, c.k, c.in_c, c.out_c}, 2)},
            c);
}

void BM_Conv2DBackpropFilterKernel(benchmark::State& state) {
  const ConvCase& c = kCases[state.range(0)];
  RunKernel(
      state, "Conv2DBackpropFilter",
      {Random({c.batch, c.size, c.size, c.in_c}, 1),
       Tensor::FromVector<int32_t>({static_cast<int32_t>(c.k), static_cast<int32_t>(c.k),
                                    static_cast<int32_t>(c.in_c), static_cast<int32_t>(c.out_c)}),
       Random({c.batch, c.size, c.size, c.out_c}, 3)},
      c);
}

void BM_Conv2DBackpropInputKernel(benchmark::State& state) {
  const ConvCase& c = kCases[state.range(0)];
  RunKernel(
      state, "Conv2DBackpropInput",
      {Tensor::FromVector<int32_t>({static_cast<int32_t>(c.batch), static_cast<int32_t>(c.size),
                                    static_cast<int32_t>(c.size), static_cast<int32_t>(c.in_c)}),
       Random({c.k, c.k, c.in_c, c.out_c}, 2), Random({c.batch, c.size, c.size, c.out_c}, 3)},
      c);
}

// MaxPoolGrad of the MNIST net's first pooling (64 x 28x28x32, 2x2, stride 2), against a
// copy of the same bytes (the least any kernel reading its input does).
void BM_MaxPoolGradKernel(benchmark::State& state) {
  const Tensor x = Random({64, 28, 28, 32}, 1);
  const Tensor pooled = Random({64, 14, 14, 32}, 2);
  proto::NodeDef node;
  node.set_name("pool_grad");
  node.set_op("MaxPoolGrad");
  for (int i = 0; i < 3; ++i) node.add_input("in:" + std::to_string(i));
  (*node.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  (*node.mutable_attr())["ksize"] = MakeAttr(std::vector<int64_t>{1, 2, 2, 1});
  (*node.mutable_attr())["strides"] = MakeAttr(std::vector<int64_t>{1, 2, 2, 1});
  (*node.mutable_attr())["padding"] = MakeAttr("VALID");
  bench::RunKernel(state, node, {x, pooled, pooled});
  state.SetBytesProcessed(state.iterations() * x.num_elements() * 4);
}
BENCHMARK(BM_MaxPoolGradKernel)->Unit(benchmark::kMillisecond);

// The baseline: the convolution's matrix product, patches given.
void BM_EquivalentEigenProduct(benchmark::State& state) {
  const ConvCase& c = kCases[state.range(0)];
  const int64_t pixels = c.batch * c.size * c.size, patch = c.k * c.k * c.in_c;
  const Tensor a = Random({pixels, patch}, 1);
  const Tensor b = Random({patch, c.out_c}, 2);
  Tensor out(DT_FLOAT, TensorShape({pixels, c.out_c}));
  Eigen::Map<const RowMajorMatrix> ma(a.flat<float>().data(), pixels, patch);
  Eigen::Map<const RowMajorMatrix> mb(b.flat<float>().data(), patch, c.out_c);
  Eigen::Map<RowMajorMatrix> mc(out.flat<float>().data(), pixels, c.out_c);
  for (auto _ : state) {
    mc.noalias() = ma * mb;
    benchmark::DoNotOptimize(mc.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * Flops(c));
}

BENCHMARK(BM_EquivalentEigenProduct)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Conv2DKernel)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Conv2DBackpropInputKernel)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Conv2DBackpropFilterKernel)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tw

BENCHMARK_MAIN();
