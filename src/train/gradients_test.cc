// Tests of the gradients driver (tw::Gradients, tw::ToDense): paths summed, seeds, variable
// handles, sparse gradients, errors. The gradient functions of the ops are checked
// numerically beside the ops (src/ops/*_grad_test.cc).
#include "tensorweave/train/gradients.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/framework/op_def.h"
#include "src/graph/gradient_registry.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

Tensor Vec(const std::vector<float>& v) { return Tensor::FromVector<float>(v); }

// Runs `fetch` with `feeds` in a fresh session; fails the test on error.
Tensor Eval(const Scope& root, const Output& fetch, const ClientSession::FeedList& feeds = {},
            const std::vector<Operation>& first = {}) {
  ClientSession session(root);
  if (!first.empty()) {
    auto init = session.Run({}, {}, first);
    EXPECT_TRUE(init.ok()) << init.status();
  }
  auto out = session.Run(feeds, {fetch});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

TEST(GradientsTest, SumsTwoPaths) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  // y = x*x + 3x: dy/dx = 2x + 3, through Mul twice and the second Mul.
  auto y = ops::Add(root, ops::Mul(root, x, x), ops::Mul(root, x, 3.0f));
  auto grads = Gradients(root, {y}, {x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_TRUE((*grads)[0].exists());
  EXPECT_FALSE((*grads)[0].sparse.has_value());
  EXPECT_EQ(Eval(root, (*grads)[0].dense, {{x, Vec({1, -2})}}), Vec({5, -1}));
}

TEST(GradientsTest, GradYsSeedEachY) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto y1 = ops::Mul(root, x, 2.0f);
  auto y2 = ops::Mul(root, x, 3.0f);
  auto seeds = ops::Const(root, Vec({10, 100}));
  auto grads = Gradients(root, {y1, y2}, {x}, {seeds, Output()});  // y2 seeded with ones
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ(Eval(root, (*grads)[0].dense, {{x, Vec({1, 1})}}), Vec({23, 203}));

  auto wrong = Gradients(root, {y1, y2}, {x}, {seeds});
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(IsInvalidArgument(wrong.status()));
  EXPECT_THAT(std::string(wrong.status().message()), HasSubstr("1 grad_ys for 2 ys"));
}

TEST(GradientsTest, VariableHandleSumsItsReads) {
  Scope root = Scope::NewRootScope();
  auto w = ops::MakeVariable(root, "w", DT_FLOAT, {2});
  auto init = ops::Assign(root, w, Vec({3, -1}));
  // y = sum(read1 * read2) + sum(read1): dy/dw = 2w + 1, through two ReadVariables.
  auto r1 = ops::ReadVariable(root, w);
  auto r2 = ops::ReadVariable(root, w);
  auto y = ops::Add(root, ops::Sum(root, ops::Mul(root, r1, r2), 0), ops::Sum(root, r1, 0));
  auto grads = Gradients(root, {y}, {w.handle});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_TRUE((*grads)[0].dense.op().valid());
  EXPECT_EQ(Eval(root, (*grads)[0].dense, {}, {init.op()}), Vec({7, -1}));
}

TEST(GradientsTest, GatherGradientIsSparseUntilDensified) {
  Scope root = Scope::NewRootScope();
  auto params = ops::Placeholder(root, DT_FLOAT);
  auto rows = ops::Gather(root, params, {0, 2, 0});
  auto y = ops::Sum(root, ops::Mul(root, rows, 2.0f), {0, 1});
  auto grads = Gradients(root, {y}, {params});
  ASSERT_TRUE(grads.ok()) << grads.status();
  const Gradient& g = (*grads)[0];
  ASSERT_TRUE(g.sparse.has_value());
  EXPECT_FALSE(g.dense.op().valid());
  auto dense = ToDense(root, g);
  ASSERT_TRUE(dense.ok()) << dense.status();
  ClientSession session(root);
  const Tensor p = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  auto out = session.Run({{params, p}}, {g.sparse->indices, g.sparse->dense_shape, *dense});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({0, 2, 0}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int64_t>({4, 2}));
  // Row 0 is picked twice: the duplicates add up.
  EXPECT_EQ((*out)[2], Tensor::FromVector<float>({4, 4, 0, 0, 2, 2, 0, 0}, {4, 2}));
}

TEST(GradientsTest, ResourceGatherSparseSumsStaySparseAndMixedSumsDensify) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "embedding", DT_FLOAT, {3, 2});
  auto init = ops::Assign(root, v, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  auto a = ops::Sum(root, ops::ResourceGather(root, v, {1}), {0, 1});
  auto b =
      ops::Sum(root, ops::ResourceGather(root, v, Tensor::FromVector<int64_t>({2, 1})), {0, 1});
  auto sparse = Gradients(root, {a, b}, {v.handle});
  ASSERT_TRUE(sparse.ok()) << sparse.status();
  ASSERT_TRUE((*sparse)[0].sparse.has_value());
  auto dense = ToDense(root, (*sparse)[0]);
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_EQ(Eval(root, *dense, {}, {init.op()}),
            Tensor::FromVector<float>({0, 0, 2, 2, 1, 1}, {3, 2}));

  // With a dense read of the whole variable too, the sum is dense.
  auto c = ops::Sum(root, ops::ReadVariable(root, v), {0, 1});
  auto mixed = Gradients(root, {a, c}, {v.handle});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_FALSE((*mixed)[0].sparse.has_value());
  EXPECT_EQ(Eval(root, (*mixed)[0].dense, {}, {init.op()}),
            Tensor::FromVector<float>({1, 1, 2, 2, 1, 1}, {3, 2}));
}

TEST(GradientsTest, UnreachableXHasNoGradient) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto unused = ops::Placeholder(root, DT_FLOAT);
  auto y = ops::Square(root, x);
  auto grads = Gradients(root, {y}, {x, unused});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_TRUE((*grads)[0].exists());
  EXPECT_FALSE((*grads)[1].exists());
  auto dense = ToDense(root, (*grads)[1]);
  ASSERT_FALSE(dense.ok());
  EXPECT_TRUE(IsFailedPrecondition(dense.status()));
}

TEST(GradientsTest, NonDifferentiablePathsEndSilently) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  // The ArgMax and Shape paths carry no gradient; only the direct one counts.
  auto index = ops::Cast(root, ops::ArgMax(root, x, 0), DT_FLOAT);
  auto size = ops::Cast(root, ops::Shape(root, x), DT_FLOAT);
  auto y = ops::Add(root, ops::Add(root, x, index), size);
  auto grads = Gradients(root, {y}, {x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ(Eval(root, (*grads)[0].dense, {{x, Vec({1, 5, 2})}}), Vec({1, 1, 1}));
}

TEST(GradientsTest, StopGradientEndsAPathButPassesItsValue) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  // y = x * stop(x): dy/dx is stop(x) = x, not 2x.
  auto stopped = ops::StopGradient(root, x);
  auto y = ops::Mul(root, x, stopped);
  auto grads = Gradients(root, {y}, {x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ(Eval(root, (*grads)[0].dense, {{x, Vec({1, 5, 2})}}), Vec({1, 5, 2}));
  EXPECT_EQ(Eval(root, stopped, {{x, Vec({3})}}), Vec({3}));
  auto none = Gradients(root, {stopped}, {x});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE((*none)[0].exists());
}

TEST(GradientsTest, MissingGradientNamesOpAndNode) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  // ReluGrad has no gradient function (no second derivatives) and is not marked.
  auto y = ops::ReluGrad(root.WithOpName("my_relu_grad"), x, x);
  auto grads = Gradients(root, {y}, {x});
  ASSERT_FALSE(grads.ok());
  EXPECT_TRUE(IsInvalidArgument(grads.status()));
  EXPECT_THAT(std::string(grads.status().message()), HasSubstr("op ReluGrad"));
  EXPECT_THAT(std::string(grads.status().message()), HasSubstr("node my_relu_grad"));
  // The scope stays usable.
  EXPECT_TRUE(root.ok());
}

TEST(GradientsTest, RejectsOutputsOfAnotherGraph) {
  Scope root = Scope::NewRootScope();
  Scope other = Scope::NewRootScope();
  auto x = ops::Placeholder(other.WithOpName("elsewhere"), DT_FLOAT);
  auto y = ops::Placeholder(root, DT_FLOAT);
  auto grads = Gradients(root, {y}, {x});
  ASSERT_FALSE(grads.ok());
  EXPECT_TRUE(IsInvalidArgument(grads.status()));
  EXPECT_THAT(std::string(grads.status().message()), HasSubstr("xs[0] (elsewhere:0)"));
}

TEST(GradientsTest, GradientNodesUseTheScopeAndThePrefix) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto y = ops::Relu(root, ops::MatMul(root, x, x));
  const int before = root.ToGraphDef()->node_size();
  auto grads = Gradients(root.WithDevice("/job:worker/task:1"), {y}, {x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok());
  ASSERT_GT(graph->node_size(), before);
  for (int i = before; i < graph->node_size(); ++i) {
    EXPECT_TRUE(graph->node(i).name().starts_with("gradients/")) << graph->node(i).name();
    EXPECT_EQ(graph->node(i).device(), "/job:worker/task:1") << graph->node(i).name();
  }
}

TEST(GradientsTest, YIsX) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto grads = Gradients(root, {x}, {x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ(Eval(root, (*grads)[0].dense, {{x, Vec({4, 5})}}), Vec({1, 1}));
}

TEST(GradientsTest, EveryRegisteredNameIsAnOp) {
  for (const std::string& op : GradientRegistry::Global().ListOps()) {
    EXPECT_TRUE(OpRegistry::Global().LookUp(op).ok()) << op;
  }
}

// The training step the runtime is tuned for, in small: a two-layer MLP with softmax
// cross-entropy, checked numerically in double with respect to every parameter.
TEST(GradientsTest, MlpMatchesFiniteDifferences) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, Tensor::FromVector<double>({0.1, -0.2, 0.3, 0.5, 0.4, -0.6}, {2, 3}));
  auto labels = ops::Const(root, Tensor::FromVector<int64_t>({1, 0}));
  auto w1 = ops::Placeholder(root, DT_DOUBLE);
  auto b1 = ops::Placeholder(root, DT_DOUBLE);
  auto w2 = ops::Placeholder(root, DT_DOUBLE);
  auto b2 = ops::Placeholder(root, DT_DOUBLE);
  auto h = ops::Relu(root, ops::Add(root, ops::MatMul(root, x, w1), b1));
  auto logits = ops::BiasAdd(root, ops::MatMul(root, h, w2), b2);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root, logits, labels);
  auto loss = ops::Mean(root, xent.loss, 0);
  auto error = testing::MaxGradientError(
      root, {w1, b1, w2, b2},
      {Tensor::FromVector<double>({0.5, -0.3, 0.8, 0.2, 0.1, -0.7, 0.4, 0.9, -0.2, 0.6, 0.3, 0.7},
                                  {3, 4}),
       Tensor::FromVector<double>({0.1, 0.2, 0.05, 0.3}),
       Tensor::FromVector<double>({0.3, -0.5, 0.2, 0.7, -0.1, 0.4, 0.6, 0.8}, {4, 2}),
       Tensor::FromVector<double>({0.01, -0.02})},
      loss);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-8);
}

}  // namespace
}  // namespace tw
