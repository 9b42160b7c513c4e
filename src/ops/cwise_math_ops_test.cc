// Floor, Ceil, Round, Sign, Reciprocal, Rsqrt, Erf, ClipByValue and L2Loss: hand-computed
// values, error paths, and the gradients against central differences (or TF's values).
#include "tensorweave/ops/cwise_math_ops.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/session.h"
#include "tensorweave/train/gradients.h"
#include "testing/gradient_checker.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::KernelTest;
using testing::NodeBuilder;

StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs) {
  KernelTest t;
  auto out = t.Run(
      NodeBuilder("m", op).Attr("T", inputs[0].dtype()).NumInputs(static_cast<int>(inputs.size())),
      inputs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

void ExpectEq(const StatusOr<Tensor>& got, const Tensor& want) {
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, want);
}

// Equal values, -0 equal to 0 (Tensor's == compares the bytes).
template <typename T>
void ExpectValues(const StatusOr<Tensor>& got, const std::vector<T>& want) {
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got->flat<T>()[i], want[i]) << i;
}

TEST(CwiseMathOpsTest, FloorCeil) {
  const Tensor x = Tensor::FromVector<double>({-1.5, -0.2, 0, 0.2, 1.5, 2});
  ExpectValues<double>(RunOp("Floor", {x}), {-2, -1, 0, 0, 1, 2});
  ExpectValues<double>(RunOp("Ceil", {x}), {-1, 0, 0, 1, 2, 2});
}

TEST(CwiseMathOpsTest, RoundHalvesToEven) {
  ExpectValues<float>(
      RunOp("Round", {Tensor::FromVector<float>({0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.6f, -1.4f})}),
      {0, 2, 2, 0, -2, 3, -1});
  ExpectEq(RunOp("Round", {Tensor::FromVector<int32_t>({-3, 7})}),
           Tensor::FromVector<int32_t>({-3, 7}));
}

TEST(CwiseMathOpsTest, Sign) {
  ExpectEq(RunOp("Sign", {Tensor::FromVector<int64_t>({-5, 0, 9})}),
           Tensor::FromVector<int64_t>({-1, 0, 1}));
  auto y = RunOp(
      "Sign", {Tensor::FromVector<double>({-0.1, 0, 2, std::numeric_limits<double>::quiet_NaN()})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->flat<double>()[0], -1);
  EXPECT_EQ(y->flat<double>()[1], 0);
  EXPECT_EQ(y->flat<double>()[2], 1);
  EXPECT_TRUE(std::isnan(y->flat<double>()[3]));
}

TEST(CwiseMathOpsTest, ReciprocalRsqrtErf) {
  ExpectEq(RunOp("Reciprocal", {Tensor::FromVector<double>({2, -0.25})}),
           Tensor::FromVector<double>({0.5, -4}));
  ExpectEq(RunOp("Rsqrt", {Tensor::FromVector<double>({4, 0.25})}),
           Tensor::FromVector<double>({0.5, 2}));
  auto erf = RunOp("Erf", {Tensor::FromVector<double>({0, 0.5, -1})});
  ASSERT_TRUE(erf.ok()) << erf.status();
  EXPECT_EQ(erf->flat<double>()[0], 0);
  EXPECT_NEAR(erf->flat<double>()[1], 0.5204998778130465, 1e-15);
  EXPECT_NEAR(erf->flat<double>()[2], -0.8427007929497149, 1e-15);
  auto cos = RunOp("Cos", {Tensor::FromVector<double>({0, M_PI / 3})});
  ASSERT_TRUE(cos.ok()) << cos.status();
  EXPECT_NEAR(cos->flat<double>()[0], 1, 1e-15);
  EXPECT_NEAR(cos->flat<double>()[1], 0.5, 1e-15);
  auto sin = RunOp("Sin", {Tensor::FromVector<double>({0, M_PI / 6})});
  ASSERT_TRUE(sin.ok()) << sin.status();
  EXPECT_NEAR(sin->flat<double>()[0], 0, 1e-15);
  EXPECT_NEAR(sin->flat<double>()[1], 0.5, 1e-15);
  // RsqrtGrad(y, dy) = dy * -0.5 * y^3.
  ExpectEq(
      RunOp("RsqrtGrad", {Tensor::FromVector<double>({2, -1}), Tensor::FromVector<double>({3, 4})}),
      Tensor::FromVector<double>({-12, 2}));
}

// Float Erf is Eigen's vectorized approximation: within a few float ulps of std::erf.
TEST(CwiseMathOpsTest, FloatErfIsAccurate) {
  std::vector<float> x;
  for (int i = -400; i <= 400; ++i) x.push_back(static_cast<float>(i) / 80);
  auto y = RunOp("Erf", {Tensor::FromVector<float>(x)});
  ASSERT_TRUE(y.ok()) << y.status();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(y->flat<float>()[i], std::erf(static_cast<double>(x[i])), 3e-7) << x[i];
  }
}

TEST(CwiseMathOpsTest, ClipByValueScalarAndTensorBounds) {
  const Tensor t = Tensor::FromVector<float>({-3, -1, 0, 2, 5}, {5});
  ExpectEq(RunOp("ClipByValue", {t, Tensor::Scalar(-1.5f), Tensor::Scalar(2.5f)}),
           Tensor::FromVector<float>({-1.5f, -1, 0, 2, 2.5f}));
  ExpectEq(
      RunOp("ClipByValue", {t, Tensor::FromVector<float>({0, 0, 1, 1, 1}), Tensor::Scalar(3.0f)}),
      Tensor::FromVector<float>({0, 0, 1, 2, 3}));
  ExpectEq(RunOp("ClipByValue", {Tensor::FromVector<int32_t>({-7, 7}), Tensor::Scalar<int32_t>(-2),
                                 Tensor::Scalar<int32_t>(2)}),
           Tensor::FromVector<int32_t>({-2, 2}));
}

TEST(CwiseMathOpsTest, ClipByValueRejectsOtherBoundShapes) {
  auto out = RunOp("ClipByValue", {Tensor::FromVector<float>({1, 2, 3}),
                                   Tensor::FromVector<float>({0, 0}), Tensor::Scalar(1.0f)});
  ASSERT_TRUE(IsInvalidArgument(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("node m: clip_value_min and clip_value_max must be either scalars or "
                        "have the same shape as t: t shape [3], clip_value_min shape [2]"));
}

TEST(CwiseMathOpsTest, L2Loss) {
  auto out = RunOp("L2Loss", {Tensor::FromVector<double>({1, -2, 3, 0.5}, {2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({}));
  EXPECT_DOUBLE_EQ(out->flat<double>()[0], (1 + 4 + 9 + 0.25) / 2);
  auto empty = RunOp("L2Loss", {Tensor::FromVector<float>({}, {0, 3})});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->flat<float>()[0], 0);
}

TEST(CwiseMathOpsTest, RejectsIntegersWhereTfDoes) {
  EXPECT_TRUE(IsInvalidArgument(RunOp("Floor", {Tensor::Scalar<int32_t>(1)}).status()));
  EXPECT_TRUE(IsInvalidArgument(RunOp("L2Loss", {Tensor::Scalar<int32_t>(1)}).status()));
}

// ---- Gradients ----

void ExpectGradient(const std::vector<Tensor>& values,
                    const std::function<Output(const Scope&, const std::vector<Output>&)>& f) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> xs;
  for (const Tensor& v : values) xs.push_back(ops::Placeholder(root, v.dtype()));
  auto error = testing::MaxGradientError(root, xs, values, f(root, xs));
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

TEST(CwiseMathGradTest, MatchesNumeric) {
  const Tensor positive = Tensor::FromVector<double>({0.5, 0.8, 1.1, 2.3, 4, 9}, {2, 3});
  const Tensor mixed = Tensor::FromVector<double>({-1.2, -0.4, 0.3, 0.9, 1.7, -2}, {2, 3});
  using V = std::vector<Output>;
  ExpectGradient({mixed}, [](const Scope& s, const V& x) { return ops::Reciprocal(s, x[0]); });
  ExpectGradient({positive}, [](const Scope& s, const V& x) { return ops::Rsqrt(s, x[0]); });
  ExpectGradient({mixed}, [](const Scope& s, const V& x) { return ops::Erf(s, x[0]); });
  ExpectGradient({mixed}, [](const Scope& s, const V& x) { return ops::Cos(s, x[0]); });
  ExpectGradient({mixed}, [](const Scope& s, const V& x) { return ops::Sin(s, x[0]); });
  ExpectGradient({mixed}, [](const Scope& s, const V& x) { return ops::L2Loss(s, x[0]); });
  ExpectGradient({positive, mixed},
                 [](const Scope& s, const V& x) { return ops::RsqrtGrad(s, x[0], x[1]); });
  ExpectGradient({mixed}, [](const Scope& s, const V& x) { return ops::Sign(s, x[0]); });
  // Scalar bounds and bounds of t's shape; no t sits on a bound.
  ExpectGradient({mixed, Tensor::Scalar(-1.0), Tensor::Scalar(1.0)},
                 [](const Scope& s, const V& x) { return ops::ClipByValue(s, x[0], x[1], x[2]); });
  ExpectGradient({mixed, Tensor::FromVector<double>({-2, 0, 0, 0, 2, -1}, {2, 3}),
                  Tensor::FromVector<double>({0, 1, 1, 0.5, 3, 0}, {2, 3})},
                 [](const Scope& s, const V& x) { return ops::ClipByValue(s, x[0], x[1], x[2]); });
}

TEST(CwiseMathGradTest, RoundingOpsHaveNoGradient) {
  Scope root = Scope::NewRootScope();
  const Output x = ops::Placeholder(root, DT_DOUBLE);
  const Output y = ops::Add(root, ops::Floor(root, x), ops::Mul(root, x, 2.0));
  auto grads = Gradients(root, {y}, {x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ClientSession session(root);
  auto out = session.Run({{x, Tensor::FromVector<double>({0.3, 1.7})}}, {(*grads)[0].dense});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<double>({2, 2}));
}

}  // namespace
}  // namespace tw
