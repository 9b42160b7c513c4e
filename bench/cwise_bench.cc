// Element-wise kernels (src/ops/cwise_binary.h, CastOp) against Eigen's vectorized
// expressions of the same arithmetic on one thread, in the same run: a float tensor
// divided by a scalar and added to another, uint8 cast to float (an image pipeline's
// `tf.cast(decode_raw(...), tf.float32) / 255`). Report the ratio of the times.
#include <vector>

#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"
#include "src/framework/attr_value.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tw::bench {
namespace {

constexpr int64_t kElements = 100 * 784;  // a batch of Fashion-MNIST images

Tensor Floats() {
  std::vector<float> v(kElements);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 256);
  return Tensor::FromVector<float>(v, TensorShape({kElements}));
}

Tensor Bytes() {
  std::vector<uint8_t> v(kElements);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i);
  return Tensor::FromVector<uint8_t>(v, TensorShape({kElements}));
}

proto::NodeDef Binary(const char* op) {
  proto::NodeDef node;
  node.set_name("n");
  node.set_op(op);
  node.add_input("x");
  node.add_input("y");
  (*node.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  return node;
}

void Elements(benchmark::State& state) { state.SetItemsProcessed(state.iterations() * kElements); }

using Vec = Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>>;
using ConstVec = Eigen::TensorMap<const Eigen::Tensor<float, 1, Eigen::RowMajor>>;

void BM_DivByScalar(benchmark::State& state) {
  RunKernel(state, Binary("Div"), {Floats(), Tensor::Scalar<float>(255.0f)});
  Elements(state);
}
BENCHMARK(BM_DivByScalar);

void BM_EigenDivByScalar(benchmark::State& state) {
  Tensor in = Floats();
  for (auto _ : state) {
    std::vector<float> out(kElements);  // a fresh output, as the kernel allocates one
    Vec(out.data(), kElements) = ConstVec(in.flat<float>().data(), kElements) / 255.0f;
    benchmark::DoNotOptimize(out.data());
  }
  Elements(state);
}
BENCHMARK(BM_EigenDivByScalar);

void BM_Add(benchmark::State& state) {
  RunKernel(state, Binary("Add"), {Floats(), Floats()});
  Elements(state);
}
BENCHMARK(BM_Add);

void BM_EigenAdd(benchmark::State& state) {
  Tensor a = Floats(), b = Floats();
  for (auto _ : state) {
    std::vector<float> out(kElements);
    Vec(out.data(), kElements) =
        ConstVec(a.flat<float>().data(), kElements) + ConstVec(b.flat<float>().data(), kElements);
    benchmark::DoNotOptimize(out.data());
  }
  Elements(state);
}
BENCHMARK(BM_EigenAdd);

void BM_CastUint8ToFloat(benchmark::State& state) {
  proto::NodeDef node;
  node.set_name("n");
  node.set_op("Cast");
  node.add_input("x");
  (*node.mutable_attr())["SrcT"] = MakeAttr(DT_UINT8);
  (*node.mutable_attr())["DstT"] = MakeAttr(DT_FLOAT);
  RunKernel(state, node, {Bytes()});
  Elements(state);
}
BENCHMARK(BM_CastUint8ToFloat);

void BM_EigenCastUint8ToFloat(benchmark::State& state) {
  Tensor in = Bytes();
  for (auto _ : state) {
    std::vector<float> out(kElements);
    Vec(out.data(), kElements) = Eigen::TensorMap<const Eigen::Tensor<uint8_t, 1, Eigen::RowMajor>>(
                                     in.flat<uint8_t>().data(), kElements)
                                     .cast<float>();
    benchmark::DoNotOptimize(out.data());
  }
  Elements(state);
}
BENCHMARK(BM_EigenCastUint8ToFloat);

}  // namespace
}  // namespace tw::bench

BENCHMARK_MAIN();
