#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::KernelTest;
using testing::NodeBuilder;

StatusOr<Tensor> RunUnary(const std::string& op, const Tensor& x) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("nn", op).Attr("T", x.dtype()).NumInputs(1), {x});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

template <typename T>
void ExpectNear(const Tensor& got, const std::vector<T>& want, double tol) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.flat<T>()[i], want[i], tol) << "element " << i;
  }
}

TEST(ActivationOpTest, Relu) {
  auto y = RunUnary("Relu", Tensor::FromVector<float>({-2, 0, 3.5f, -0.1f}, {2, 2}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, Tensor::FromVector<float>({0, 0, 3.5f, 0}, {2, 2}));
}

TEST(ActivationOpTest, SigmoidIncludingSaturation) {
  auto y = RunUnary("Sigmoid", Tensor::FromVector<double>({0, 2, -2, 1000, -1000}));
  ASSERT_TRUE(y.ok()) << y.status();
  const double s2 = 1 / (1 + std::exp(-2.0));
  ExpectNear<double>(*y, {0.5, s2, 1 - s2, 1, 0}, 1e-12);
  for (double v : y->flat<double>()) EXPECT_FALSE(std::isnan(v));
}

TEST(ActivationOpTest, Tanh) {
  auto y = RunUnary("Tanh", Tensor::FromVector<float>({0, 0.5f, -3}));
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear<float>(*y, {0, std::tanh(0.5f), std::tanh(-3.0f)}, 1e-6);
}

TEST(ActivationOpTest, RejectsIntegers) {
  EXPECT_TRUE(IsInvalidArgument(RunUnary("Relu", Tensor::Scalar<int32_t>(1)).status()));
}

TEST(SoftmaxOpTest, HandComputedValues) {
  auto y = RunUnary("Softmax", Tensor::FromVector<double>({1, 2, 3, 0, 0, 0}, {2, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  ExpectNear<double>(
      *y, {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z, 1.0 / 3, 1.0 / 3, 1.0 / 3},
      1e-12);
  EXPECT_EQ(y->shape(), TensorShape({2, 3}));
}

TEST(SoftmaxOpTest, LargeLogitsStayFiniteAndRowsSumToOne) {
  // exp(1000) overflows float; subtracting the row maximum keeps everything finite.
  auto y = RunUnary(
      "Softmax",
      Tensor::FromVector<float>({1000, 1001, 1002, -1000, 0, 1000, 1e30f, 1e30f, -1e30f}, {3, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  const auto v = y->flat<float>();
  for (int r = 0; r < 3; ++r) {
    float sum = 0;
    for (int c = 0; c < 3; ++c) {
      EXPECT_FALSE(std::isnan(v[r * 3 + c])) << "row " << r;
      sum += v[r * 3 + c];
    }
    EXPECT_NEAR(sum, 1.0f, 1e-6) << "row " << r;
  }
  // Row 0 is softmax([0, 1, 2]).
  const float z = 1 + std::exp(1.0f) + std::exp(2.0f);
  EXPECT_NEAR(v[0], 1 / z, 1e-6);
  EXPECT_NEAR(v[2], std::exp(2.0f) / z, 1e-6);
  EXPECT_NEAR(v[5], 1.0f, 1e-6);
  EXPECT_NEAR(v[6], 0.5f, 1e-6);
}

TEST(SoftmaxOpTest, LastDimensionOfRankThreeAndVectors) {
  auto y = RunUnary("Softmax", Tensor::FromVector<float>({0, 0, 5, 5, 1, 1, 7, 7}, {2, 2, 2}));
  ASSERT_TRUE(y.ok()) << y.status();
  for (float v : y->flat<float>()) EXPECT_NEAR(v, 0.5f, 1e-6);
  auto v = RunUnary("Softmax", Tensor::FromVector<float>({3}));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, Tensor::FromVector<float>({1}));
  auto empty = RunUnary("Softmax", Tensor(DT_FLOAT, TensorShape({2, 0})));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->shape(), TensorShape({2, 0}));
  auto scalar = RunUnary("Softmax", Tensor::Scalar<float>(1));
  EXPECT_TRUE(IsInvalidArgument(scalar.status()));
  EXPECT_THAT(std::string(scalar.status().message()), HasSubstr("at least one dimension"));
}

TEST(LogSoftmaxOpTest, MatchesLogOfSoftmaxAndIsStable) {
  auto y = RunUnary("LogSoftmax", Tensor::FromVector<double>({1, 2, 3, 1000, 0, -1000}, {2, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  ExpectNear<double>(*y, {1 - lse, 2 - lse, 3 - lse, 0, -1000, -2000}, 1e-9);
}

struct XentResult {
  Tensor loss, backprop;
};

StatusOr<XentResult> RunXent(const Tensor& features, const Tensor& labels) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("xent", "SparseSoftmaxCrossEntropyWithLogits")
                       .Attr("T", features.dtype())
                       .Attr("Tlabels", labels.dtype())
                       .NumInputs(2),
                   {features, labels});
  if (!out.ok()) return out.status();
  return XentResult{(*out)[0], (*out)[1]};
}

StatusOr<Tensor> RunInTopK(const Tensor& predictions, const Tensor& targets, const Tensor& k) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("in_top_k", "InTopKV2").Attr("T", targets.dtype()).NumInputs(3),
                   {predictions, targets, k});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// TF's rule: a target is in the top k when fewer than k classes score strictly higher, so
// ties straddling the boundary are all in; non-finite scores and bad targets are out.
TEST(InTopKOpTest, TiesNonFiniteAndOutOfRangeTargets) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor predictions =
      Tensor::FromVector<float>({0.1f, 0.5f, 0.5f, 0.2f,   // row 0: class 2 ties class 1 for first
                                 0.9f, 0.8f, 0.7f, 0.6f,   // row 1: class 3 is last
                                 nan, 0.1f, 0.2f, 0.3f,    // row 2: target's score is NaN
                                 0.4f, 0.3f, 0.2f, 0.1f},  // row 3: target 4 is outside the classes
                                {4, 4});
  auto top1 =
      RunInTopK(predictions, Tensor::FromVector<int32_t>({2, 3, 0, 4}), Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(top1.ok()) << top1.status();
  EXPECT_EQ(*top1, Tensor::FromVector<bool>({true, false, false, false}));
  auto top3 =
      RunInTopK(predictions, Tensor::FromVector<int64_t>({0, 3, 1, 0}), Tensor::Scalar<int64_t>(3));
  ASSERT_TRUE(top3.ok()) << top3.status();
  EXPECT_EQ(*top3, Tensor::FromVector<bool>({false, false, true, true}));
  auto mismatch =
      RunInTopK(predictions, Tensor::FromVector<int32_t>({0, 1}), Tensor::Scalar<int32_t>(1));
  EXPECT_TRUE(IsInvalidArgument(mismatch.status())) << mismatch.status();
  EXPECT_THAT(std::string(mismatch.status().message()),
              HasSubstr("First dimension of predictions 4 must match length of targets 2"));
}

TEST(SparseXentOpTest, LossAndBackpropByHand) {
  // Row 0: logits [1, 2, 3], label 2; row 1: logits [0, 0, 0], label 0.
  auto r = RunXent(Tensor::FromVector<double>({1, 2, 3, 0, 0, 0}, {2, 3}),
                   Tensor::FromVector<int64_t>({2, 0}));
  ASSERT_TRUE(r.ok()) << r.status();
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const double p0 = std::exp(1.0) / z, p1 = std::exp(2.0) / z, p2 = std::exp(3.0) / z;
  EXPECT_EQ(r->loss.shape(), TensorShape({2}));
  EXPECT_EQ(r->backprop.shape(), TensorShape({2, 3}));
  ExpectNear<double>(r->loss, {-std::log(p2), std::log(3.0)}, 1e-12);
  ExpectNear<double>(r->backprop, {p0, p1, p2 - 1, 1.0 / 3 - 1, 1.0 / 3, 1.0 / 3}, 1e-12);
}

TEST(SparseXentOpTest, LargeLogitsAndInt32Labels) {
  auto r = RunXent(Tensor::FromVector<float>({1000, 0, -1000, 1000}, {2, 2}),
                   Tensor::FromVector<int32_t>({1, 1}));
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear<float>(r->loss, {1000, 0}, 1e-3);
  ExpectNear<float>(r->backprop, {1, -1, 0, 0}, 1e-6);
}

TEST(SparseXentOpTest, BadLabelNamesLabelAndRow) {
  auto r = RunXent(Tensor(DT_FLOAT, TensorShape({3, 4})), Tensor::FromVector<int64_t>({0, 3, 4}));
  EXPECT_TRUE(IsInvalidArgument(r.status()));
  EXPECT_EQ(r.status().message(),
            "node xent: label 4 in row 2 is outside the valid range of classes [0, 4)");
  auto negative = RunXent(Tensor(DT_FLOAT, TensorShape({1, 4})), Tensor::FromVector<int32_t>({-1}));
  EXPECT_THAT(std::string(negative.status().message()), HasSubstr("label -1 in row 0"));
}

TEST(SparseXentOpTest, BadShapes) {
  auto rank = RunXent(Tensor(DT_FLOAT, TensorShape({4})), Tensor::FromVector<int64_t>({0}));
  EXPECT_TRUE(IsInvalidArgument(rank.status()));
  EXPECT_THAT(std::string(rank.status().message()), HasSubstr("features must be 2-D"));
  auto batch = RunXent(Tensor(DT_FLOAT, TensorShape({2, 4})), Tensor::FromVector<int64_t>({0}));
  EXPECT_TRUE(IsInvalidArgument(batch.status()));
  EXPECT_THAT(std::string(batch.status().message()), HasSubstr("labels must be 1-D [batch]"));
  auto empty = RunXent(Tensor(DT_FLOAT, TensorShape({0, 4})), Tensor(DT_INT64, TensorShape({0})));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->loss.shape(), TensorShape({0}));
}

TEST(NnBuilderTest, BuildsAGraph) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto h = ops::Relu(root.WithOpName("h"), x);
  auto p = ops::Softmax(root.WithOpName("p"), ops::Tanh(root, ops::Sigmoid(root, h)));
  auto lp = ops::LogSoftmax(root.WithOpName("lp"), h);
  auto labels = ops::Const(root.WithOpName("labels"), Tensor::FromVector<int32_t>({1, 0}));
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root.WithOpName("xent"), h, labels);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(xent.loss.name(), "xent:0");
  EXPECT_EQ(xent.backprop.name(), "xent:1");
  EXPECT_EQ(xent.backprop.type(), DT_FLOAT);
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::map<std::string, proto::NodeDef> nodes;
  for (const auto& n : graph->node()) nodes[n.name()] = n;
  EXPECT_EQ(nodes["h"].op(), "Relu");
  EXPECT_EQ(nodes["h"].attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_EQ(nodes["p"].op(), "Softmax");
  EXPECT_EQ(nodes["p"].input(0), "Tanh");
  EXPECT_EQ(nodes["lp"].op(), "LogSoftmax");
  EXPECT_EQ(nodes["xent"].op(), "SparseSoftmaxCrossEntropyWithLogits");
  EXPECT_EQ(nodes["xent"].attr().at("Tlabels").type(), proto::DT_INT32);
  EXPECT_EQ(nodes["xent"].input(1), "labels");
  EXPECT_TRUE(p.op().valid() && lp.op().valid());
}

TEST(NnBuilderTest, FailedNodeGivesInvalidOutputs) {
  Scope root = Scope::NewRootScope();
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root, 1, 2);  // int32 features
  EXPECT_FALSE(root.ok());
  EXPECT_FALSE(xent.loss.op().valid());
  EXPECT_FALSE(xent.backprop.op().valid());
}

// ---- Activation gradients and BiasAdd ----

TEST(ActivationGradOpTest, FromTheOutputs) {
  Scope root = Scope::NewRootScope();
  const Tensor g = Tensor::FromVector<double>({1, 2, 3});
  auto relu = ops::ReluGrad(root, g, Tensor::FromVector<double>({0, 0.5, 2}));
  auto sigmoid = ops::SigmoidGrad(root, Tensor::FromVector<double>({0.5, 0.25, 0.9}), g);
  auto tanh = ops::TanhGrad(root, Tensor::FromVector<double>({0, 0.5, -1}), g);
  ClientSession s(root);
  auto out = s.Run({}, {relu, sigmoid, tanh});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<double>({0, 2, 3}));
  ExpectNear<double>((*out)[1], {0.25, 2 * 0.25 * 0.75, 3 * 0.9 * 0.1}, 1e-12);
  ExpectNear<double>((*out)[2], {1, 2 * 0.75, 0}, 1e-12);
}

// Vectorized: a length past several vector widths and a tail; activations of -0, NaN and
// negative input (ReluGrad also takes Relu's input) give 0; infinite gradients pass.
TEST(ActivationGradOpTest, ReluGradOfEveryKindOfActivation) {
  Scope root = Scope::NewRootScope();
  constexpr int kN = 53;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> g(kN), y(kN), want(kN);
  for (int i = 0; i < kN; ++i) {
    g[i] = i % 7 == 0 ? -inf : static_cast<float>(i) - 20.5f;
    const float kinds[] = {1.5f, 0.0f, -0.0f, nan, -3.0f, inf, 1e-30f};
    y[i] = kinds[i % 7];
    want[i] = y[i] > 0.0f ? g[i] : 0.0f;
  }
  auto relu = ops::ReluGrad(root, Tensor::FromVector<float>(g), Tensor::FromVector<float>(y));
  ClientSession s(root);
  auto out = s.Run({}, {relu});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>(want));
}

TEST(ActivationGradOpTest, RejectsShapesThatDiffer) {
  Scope root = Scope::NewRootScope();
  auto relu = ops::ReluGrad(root.WithOpName("rg"), Tensor::FromVector<float>({1, 2}),
                            Tensor::FromVector<float>({1}));
  ClientSession s(root);
  auto out = s.Run({}, {relu});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node rg: ReluGrad inputs must"));
}

TEST(BiasAddOpTest, AddsAlongTheLastDimensionAndSumsBack) {
  Scope root = Scope::NewRootScope();
  const Tensor value = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto sum = ops::BiasAdd(root, value, Tensor::FromVector<float>({10, 20, 30}));
  auto grad = ops::BiasAddGrad(root, value);
  // A bias of the wrong size, known only when the step runs (when building, the builder
  // refuses it: src/graph/shape_fns_test.cc).
  auto bias = ops::Placeholder(root, DT_FLOAT);
  auto bad = ops::BiasAdd(root.WithOpName("bad"), value, bias);
  ClientSession s(root);
  auto out = s.Run({}, {sum, grad});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({11, 22, 33, 14, 25, 36}, {2, 3}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({5, 7, 9}));
  out = s.Run({{bias, Tensor::FromVector<float>({1, 2})}}, {bad});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node bad: BiasAdd needs a bias"));
}

}  // namespace
}  // namespace tw
