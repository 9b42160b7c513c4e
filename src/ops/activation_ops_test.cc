// Elu, Selu, LeakyRelu, Relu6, Softplus, Softsign and their gradient ops: hand-computed
// values, error paths, and each gradient against central differences.
#include "tensorweave/ops/activation_ops.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "testing/gradient_checker.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::KernelTest;
using testing::NodeBuilder;

constexpr double kScale = 1.0507009873554804934193349852946;
constexpr double kAlpha = 1.6732632423543772848170429916717;

StatusOr<Tensor> RunNode(const NodeBuilder& node, const std::vector<Tensor>& inputs) {
  KernelTest t;
  auto out = t.Run(node, inputs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs) {
  return RunNode(NodeBuilder("act", op)
                     .Attr("T", inputs[0].dtype())
                     .NumInputs(static_cast<int>(inputs.size())),
                 inputs);
}

void ExpectValues(const StatusOr<Tensor>& got, const std::vector<double>& want,
                  double tol = 1e-12) {
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got->flat<double>()[i], want[i], tol) << "element " << i;
  }
}

const Tensor& Xs() {
  static const Tensor* x = new Tensor(Tensor::FromVector<double>({-2, -0.5, 0, 0.5, 3, 7}));
  return *x;
}

TEST(ActivationOpsTest, Elu) {
  ExpectValues(RunOp("Elu", {Xs()}), {std::exp(-2.0) - 1, std::exp(-0.5) - 1, 0, 0.5, 3, 7});
}

TEST(ActivationOpsTest, Selu) {
  ExpectValues(RunOp("Selu", {Xs()}),
               {kScale * kAlpha * (std::exp(-2.0) - 1), kScale * kAlpha * (std::exp(-0.5) - 1), 0,
                kScale * 0.5, kScale * 3, kScale * 7});
}

TEST(ActivationOpsTest, LeakyReluDefaultAndGivenAlpha) {
  // alpha is a float attribute: 0.2f in double arithmetic, as in TF.
  const double alpha = 0.2f;
  ExpectValues(RunOp("LeakyRelu", {Xs()}), {-2 * alpha, -0.5 * alpha, 0, 0.5, 3, 7});
  ExpectValues(
      RunNode(NodeBuilder("act", "LeakyRelu").Attr("T", DT_DOUBLE).Attr("alpha", 0.5f).NumInputs(1),
              {Xs()}),
      {-1, -0.25, 0, 0.5, 3, 7});
}

TEST(ActivationOpsTest, Relu6) { ExpectValues(RunOp("Relu6", {Xs()}), {0, 0, 0, 0.5, 3, 6}); }

TEST(ActivationOpsTest, SoftplusIncludingExtremes) {
  ExpectValues(RunOp("Softplus", {Tensor::FromVector<double>({-2, 0, 3, 1000, -1000})}),
               {std::log1p(std::exp(-2.0)), std::log(2.0), std::log1p(std::exp(3.0)), 1000, 0});
  auto big = RunOp("Softplus", {Tensor::FromVector<float>({100, -100})});
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_FLOAT_EQ(big->flat<float>()[0], 100);
  EXPECT_FLOAT_EQ(big->flat<float>()[1], std::exp(-100.0f));
}

TEST(ActivationOpsTest, Softsign) {
  ExpectValues(RunOp("Softsign", {Xs()}), {-2.0 / 3, -0.5 / 1.5, 0, 0.5 / 1.5, 0.75, 7.0 / 8});
}

// The vectorized selects keep NaN, as TF's kernels (a false comparison takes x).
TEST(ActivationOpsTest, NaNStaysNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"Elu", "Selu", "LeakyRelu"}) {
    auto y = RunOp(op, {Tensor::FromVector<float>({nan, -1, 2, nan, 0, 3, -4, nan, 5})});
    ASSERT_TRUE(y.ok()) << y.status();
    for (int i : {0, 3, 7}) EXPECT_TRUE(std::isnan(y->flat<float>()[i])) << op << " " << i;
    EXPECT_FALSE(std::isnan(y->flat<float>()[1])) << op;
  }
}

TEST(ActivationOpsTest, GradOpsByHand) {
  const Tensor g = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6});
  // EluGrad and SeluGrad read the outputs.
  const Tensor y = Tensor::FromVector<double>({-0.5, -0.25, 0, 1, 2, 3});
  ExpectValues(RunOp("EluGrad", {g, y}), {0.5, 1.5, 3, 4, 5, 6});
  ExpectValues(RunOp("SeluGrad", {g, y}),
               {1 * (-0.5 + kScale * kAlpha), 2 * (-0.25 + kScale * kAlpha), 3 * kScale, 4 * kScale,
                5 * kScale, 6 * kScale});
  const double alpha = 0.2f;
  ExpectValues(RunOp("LeakyReluGrad", {g, Xs()}), {alpha, 2 * alpha, 3 * alpha, 4, 5, 6});
  // 0 and 6 themselves pass no gradient.
  ExpectValues(RunOp("Relu6Grad", {g, Tensor::FromVector<double>({-1, 0, 0.5, 5.9, 6, 7})}),
               {0, 0, 3, 4, 0, 0});
  ExpectValues(RunOp("SoftplusGrad", {g, Xs()}),
               {1 / (1 + std::exp(2.0)), 2 / (1 + std::exp(0.5)), 1.5, 4 / (1 + std::exp(-0.5)),
                5 / (1 + std::exp(-3.0)), 6 / (1 + std::exp(-7.0))});
  ExpectValues(RunOp("SoftsignGrad", {g, Xs()}),
               {1.0 / 9, 2 / 2.25, 3, 4 / 2.25, 5.0 / 16, 6.0 / 64});
}

// The vectorized kernels in float (several packets and a tail) agree with the double ones.
TEST(ActivationOpsTest, FloatMatchesDoubleAcrossPackets) {
  std::vector<double> xd, gd;
  for (int i = 0; i < 37; ++i) {
    xd.push_back(-7.3 + 0.41 * i);
    gd.push_back(0.5 + 0.1 * i);
  }
  const std::vector<float> xf(xd.begin(), xd.end()), gf(gd.begin(), gd.end());
  for (const char* op : {"Elu", "Selu", "LeakyRelu", "Relu6", "Softplus"}) {
    auto d = RunOp(op, {Tensor::FromVector<double>(xd)});
    auto f = RunOp(op, {Tensor::FromVector<float>(xf)});
    ASSERT_TRUE(d.ok() && f.ok()) << op;
    for (size_t i = 0; i < xd.size(); ++i) {
      EXPECT_NEAR(f->flat<float>()[i], d->flat<double>()[i], 1e-5) << op << " " << i;
    }
  }
  for (const char* op : {"EluGrad", "SeluGrad", "LeakyReluGrad", "Relu6Grad", "SoftplusGrad"}) {
    auto d = RunOp(op, {Tensor::FromVector<double>(gd), Tensor::FromVector<double>(xd)});
    auto f = RunOp(op, {Tensor::FromVector<float>(gf), Tensor::FromVector<float>(xf)});
    ASSERT_TRUE(d.ok() && f.ok()) << op;
    for (size_t i = 0; i < xd.size(); ++i) {
      EXPECT_NEAR(f->flat<float>()[i], d->flat<double>()[i], 1e-5) << op << " " << i;
    }
  }
}

TEST(ActivationOpsTest, ErrorPaths) {
  auto ints = RunOp("Elu", {Tensor::FromVector<int32_t>({1})});
  EXPECT_TRUE(IsInvalidArgument(ints.status())) << ints.status();
  auto mismatch = RunOp("EluGrad", {Tensor::FromVector<double>({1, 2}), Xs()});
  ASSERT_TRUE(IsInvalidArgument(mismatch.status())) << mismatch.status();
  EXPECT_THAT(std::string(mismatch.status().message()),
              HasSubstr("node act: EluGrad inputs must have one shape"));
}

// ---- Numeric gradient checks ----

using Unary = std::function<Output(const Scope&, const Output&)>;

void ExpectGradient(const Unary& f, const Tensor& x, double tol = 1e-7) {
  Scope root = Scope::NewRootScope();
  const Output p = ops::Placeholder(root, DT_DOUBLE);
  auto error = testing::MaxGradientError(root, {p}, {x}, f(root, p));
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, tol);
}

// Values away from the kinks at 0 and 6, on both sides of each.
Tensor KinkFree() {
  return Tensor::FromVector<double>({-2.1, -0.7, 0.3, 1.4, 5.2, 6.9, -0.05, 0.05}, {2, 4});
}

TEST(ActivationGradTest, MatchesNumeric) {
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Elu(s, x); }, KinkFree());
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Selu(s, x); }, KinkFree());
  ExpectGradient([](const Scope& s, const Output& x) { return ops::LeakyRelu(s, x); }, KinkFree());
  ExpectGradient(
      [](const Scope& s, const Output& x) { return ops::LeakyRelu(s, x, {.alpha = 0.7f}); },
      KinkFree());
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Relu6(s, x); }, KinkFree());
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Softplus(s, x); }, KinkFree());
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Softsign(s, x); }, KinkFree());
}

// The gradient ops' own gradients (second derivatives), in both inputs; the second input
// away from the kinks.
TEST(ActivationGradTest, GradOpsGradientsMatchNumeric) {
  using Binary = Output (*)(const Scope&, Input, Input);
  const Tensor g = testing::DistinctValues(TensorShape({2, 4}), 0.1);
  for (Binary op :
       {static_cast<Binary>(&ops::EluGrad), static_cast<Binary>(&ops::SeluGrad),
        static_cast<Binary>(&ops::Relu6Grad), static_cast<Binary>(&ops::SoftplusGrad)}) {
    Scope root = Scope::NewRootScope();
    const Output a = ops::Placeholder(root, DT_DOUBLE);
    const Output b = ops::Placeholder(root, DT_DOUBLE);
    auto error = testing::MaxGradientError(root, {a, b}, {g, KinkFree()}, op(root, a, b));
    ASSERT_TRUE(error.ok()) << error.status();
    EXPECT_LT(*error, 1e-7);
  }
  Scope root = Scope::NewRootScope();
  const Output a = ops::Placeholder(root, DT_DOUBLE);
  const Output b = ops::Placeholder(root, DT_DOUBLE);
  auto error = testing::MaxGradientError(root, {a, b}, {g, KinkFree()},
                                         ops::LeakyReluGrad(root, a, b, {.alpha = 0.3f}));
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

// ---- SoftmaxCrossEntropyWithLogits ----

TEST(SoftmaxCrossEntropyTest, HandComputedValuesAndLargeLogits) {
  KernelTest t;
  auto out =
      t.Run(NodeBuilder("xent", "SoftmaxCrossEntropyWithLogits").Attr("T", DT_DOUBLE).NumInputs(2),
            {Tensor::FromVector<double>({1, 2, 3, 1000, 0, -1000}, {2, 3}),
             Tensor::FromVector<double>({0, 0.5, 0.5, 1, 0, 0}, {2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const double p1 = std::exp(1.0) / z, p2 = std::exp(2.0) / z, p3 = std::exp(3.0) / z;
  ExpectValues((*out)[0], {-0.5 * std::log(p2) - 0.5 * std::log(p3), 0});
  ExpectValues((*out)[1], {p1, p2 - 0.5, p3 - 0.5, 0, 0, 0});
}

TEST(SoftmaxCrossEntropyTest, RejectsMismatchedAndNonMatrixInputs) {
  KernelTest t;
  auto node = NodeBuilder("xent", "SoftmaxCrossEntropyWithLogits").Attr("T", DT_FLOAT).NumInputs(2);
  auto mismatch = t.Run(node, {Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}),
                               Tensor::FromVector<float>({1, 2, 3}, {1, 3})});
  ASSERT_TRUE(IsInvalidArgument(mismatch.status())) << mismatch.status();
  EXPECT_THAT(std::string(mismatch.status().message()),
              HasSubstr("node xent: logits and labels must be same size: logits_size=[2,2] "
                        "labels_size=[1,3]"));
  auto vector = t.Run(node, {Tensor::FromVector<float>({1, 2}), Tensor::FromVector<float>({1, 0})});
  ASSERT_TRUE(IsInvalidArgument(vector.status())) << vector.status();
  EXPECT_THAT(std::string(vector.status().message()), HasSubstr("must be 2-dimensional"));
}

TEST(SoftmaxCrossEntropyTest, GradientOfLogitsAndLabelsMatchesNumeric) {
  Scope root = Scope::NewRootScope();
  const Output logits = ops::Placeholder(root, DT_DOUBLE);
  const Output labels = ops::Placeholder(root, DT_DOUBLE);
  const auto xent = ops::SoftmaxCrossEntropyWithLogits(root, logits, labels);
  auto error = testing::MaxGradientError(
      root, {logits, labels},
      {testing::DistinctValues(TensorShape({2, 3})),
       Tensor::FromVector<double>({0.2, 0.3, 0.5, 0.6, 0.1, 0.3}, {2, 3})},
      xent.loss);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

// A gradient through backprop (output 1) is the softmax Jacobian applied to it.
TEST(SoftmaxCrossEntropyTest, GradientThroughBackpropMatchesNumeric) {
  Scope root = Scope::NewRootScope();
  const Output logits = ops::Placeholder(root, DT_DOUBLE);
  const Output labels = ops::Const(root, Tensor::FromVector<double>({0.2, 0.3, 0.5}, {1, 3}));
  const auto xent = ops::SoftmaxCrossEntropyWithLogits(root, logits, labels);
  auto error = testing::MaxGradientError(
      root, {logits}, {testing::DistinctValues(TensorShape({1, 3}))}, xent.backprop);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

}  // namespace
}  // namespace tw
