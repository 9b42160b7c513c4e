// The deep-MNIST conv net's training step (examples/mnist_model.h with Adam, as mnist_ps
// trains it) reuses its memory: after the first steps, a step maps no fresh block from the
// kernel; every large tensor it makes (activations, gradients, Adam's updates) lands in a
// block an earlier step freed (src/core/buffer_pool.h).
#include "examples/mnist_model.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "src/core/buffer_pool.h"

namespace tw::examples {
namespace {

TEST(MnistConvModelTest, StepsAfterTheFirstMapNoFreshMemory) {
  Scope root = Scope::NewRootScope();
  train::ModelVariables variables;
  const MnistModel model =
      BuildMnistModel(root, &variables, {.architecture = MnistArchitecture::kConv, .seed = 3});
  auto optimizer = train::AdamOptimizer(1e-3f);
  auto train_op = optimizer->Minimize(root, model.loss, &variables, model.global_step);
  ASSERT_TRUE(train_op.ok()) << train_op.status();
  const Operation init = variables.InitOp(root);
  ASSERT_TRUE(root.status().ok()) << root.status();

  constexpr int64_t kBatch = 16;  // activations of 1.6 MB and more: pooled blocks
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> images(kBatch * 784);
  for (float& v : images) v = pixel(gen);
  std::vector<int32_t> labels(kBatch);
  for (int64_t i = 0; i < kBatch; ++i)
    labels[static_cast<size_t>(i)] = static_cast<int32_t>(i % 10);
  const ClientSession::FeedList feed = {
      {model.images, Tensor::FromVector<float>(images, {kBatch, 784})},
      {model.labels, Tensor::FromVector<int32_t>(labels)},
      {model.keep_prob, Tensor::Scalar<float>(0.5f)}};

  // One thread: the order of allocations, hence which freed blocks are at hand, is the same
  // every step.
  ClientSession session(root, {.num_threads = 1});
  ASSERT_TRUE(session.Run({}, {}, {init}).ok());
  auto step = [&]() -> float {
    auto out = session.Run(feed, {model.loss}, {*train_op});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].scalar<float>() : 0.0f;
  };
  for (int i = 0; i < 2; ++i) step();
  const uint64_t mapped = BufferPool::Default()->blocks_mapped();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isfinite(step()));
  EXPECT_EQ(BufferPool::Default()->blocks_mapped(), mapped)
      << "steps 3-6 mapped fresh blocks: a tensor of the step found no freed block to reuse";
  EXPECT_GT(mapped, 0u);  // the first steps did map the large activations
}

}  // namespace
}  // namespace tw::examples
