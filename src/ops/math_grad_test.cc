// Numeric checks of the gradient functions of the math family (math_ops.cc,
// arithmetic_ops.cc, reduction_ops.cc, nn_ops.cc): each symbolic gradient against central
// differences in double precision, with broadcasting, transposes, keep_dims and negative
// axes; and hand-computed values where TensorFlow defines the gradient at a kink.
#include <cmath>
#include <functional>
#include <vector>

#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/session.h"
#include "tensorweave/train/gradients.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using Build = std::function<Output(const Scope&, const std::vector<Output>&)>;

// Positive distinct values: 0.5, 0.8, 1.1, ...
Tensor Positive(const TensorShape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + 0.3 * static_cast<double>(i);
  return Tensor::FromVector<double>(v, shape);
}

// The gradient of build(placeholders) with respect to every placeholder, fed `values`.
void ExpectGradient(const Build& build, const std::vector<Tensor>& values, double tol = 1e-7) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> xs;
  for (const Tensor& v : values) xs.push_back(ops::Placeholder(root, v.dtype()));
  const Output y = build(root, xs);
  auto error = testing::MaxGradientError(root, xs, values, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, tol);
}

using BinaryBuilder = Output (*)(const Scope&, Input, Input);

void ExpectBinaryGradient(BinaryBuilder op, const TensorShape& sx, const TensorShape& sy,
                          bool positive_y = false) {
  SCOPED_TRACE(sx.DebugString() + " with " + sy.DebugString());
  ExpectGradient(
      [op](const Scope& s, const std::vector<Output>& x) { return op(s, x[0], x[1]); },
      {testing::DistinctValues(sx), positive_y ? Positive(sy) : testing::DistinctValues(sy, 0.1)});
}

const std::vector<std::pair<TensorShape, TensorShape>>& BroadcastCases() {
  static const auto* cases = new std::vector<std::pair<TensorShape, TensorShape>>{
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3}, {2, 3}},
      {{3, 1}, {1, 4}}, {{}, {2, 2}},  {{2, 1, 3}, {2, 1}}};
  return *cases;
}

TEST(MathGradTest, AddBroadcasting) {
  for (const auto& [sx, sy] : BroadcastCases()) ExpectBinaryGradient(&ops::Add, sx, sy);
}
TEST(MathGradTest, SubBroadcasting) {
  for (const auto& [sx, sy] : BroadcastCases()) ExpectBinaryGradient(&ops::Sub, sx, sy);
}
TEST(MathGradTest, MulBroadcasting) {
  for (const auto& [sx, sy] : BroadcastCases()) ExpectBinaryGradient(&ops::Mul, sx, sy);
}
TEST(MathGradTest, DivBroadcasting) {
  for (const auto& [sx, sy] : BroadcastCases()) ExpectBinaryGradient(&ops::Div, sx, sy, true);
}
TEST(MathGradTest, MaximumAndMinimumBroadcasting) {
  for (const auto& [sx, sy] : BroadcastCases()) {
    ExpectBinaryGradient(&ops::Maximum, sx, sy);
    ExpectBinaryGradient(&ops::Minimum, sx, sy);
  }
}

TEST(MathGradTest, Unary) {
  const TensorShape shape({2, 3});
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Neg(s, x[0]); },
                 {testing::DistinctValues(shape)});
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Square(s, x[0]); },
                 {testing::DistinctValues(shape)});
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Sqrt(s, x[0]); },
                 {Positive(shape)});
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Exp(s, x[0]); },
                 {testing::DistinctValues(shape)}, 1e-6);
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Log(s, x[0]); },
                 {Positive(shape)});
}

// FloorMod is smooth away from the jumps where x / y is an integer: these y (offset 0.13)
// keep every x / y of the cases at least 0.08 away from one.
TEST(MathGradTest, FloorModBroadcasting) {
  for (const auto& [sx, sy] : BroadcastCases()) {
    SCOPED_TRACE(sx.DebugString() + " with " + sy.DebugString());
    ExpectGradient(
        [](const Scope& s, const std::vector<Output>& x) { return ops::FloorMod(s, x[0], x[1]); },
        {testing::DistinctValues(sx), testing::DistinctValues(sy, 0.13)});
  }
}

// Positive bases, exponents of both signs.
TEST(MathGradTest, PowBroadcasting) {
  for (const auto& [sx, sy] : BroadcastCases()) {
    SCOPED_TRACE(sx.DebugString() + " with " + sy.DebugString());
    ExpectGradient(
        [](const Scope& s, const std::vector<Output>& x) { return ops::Pow(s, x[0], x[1]); },
        {Positive(sx), testing::DistinctValues(sy, 0.1)}, 1e-6);
  }
}

// The symbolic gradients of `y` with respect to `xs`, fed `values`, with grad_ys of ones.
std::vector<Tensor> RunGradients(const Scope& root, const std::vector<Output>& xs,
                                 const std::vector<Tensor>& values, const Output& y) {
  auto grads = Gradients(root, {y}, xs);
  EXPECT_TRUE(grads.ok()) << grads.status();
  if (!grads.ok()) return {};
  ClientSession::FeedList feeds;
  std::vector<Output> fetch;
  for (size_t i = 0; i < xs.size(); ++i) {
    feeds.emplace_back(xs[i], values[i]);
    fetch.push_back((*grads)[i].dense);
  }
  ClientSession session(root);
  auto out = session.Run(feeds, fetch);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

// TensorFlow's values where the numeric gradient is no guide: dy is 0 for a base <= 0
// (log taken as 0), and dx = y x^(y - 1) holds at x = 0 (0^0 = 1).
TEST(MathGradTest, PowAtZeroAndNegativeBases) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::Placeholder(root, DT_DOUBLE);
  auto grads = RunGradients(
      root, {x, y},
      {Tensor::FromVector<double>({-2, 0, 0, 3}), Tensor::FromVector<double>({3, 2, 1, 2})},
      ops::Pow(root, x, y));
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0], Tensor::FromVector<double>({12, 0, 1, 6}));
  ASSERT_EQ(grads[1].shape(), TensorShape({4}));
  const auto dy = grads[1].flat<double>();
  EXPECT_EQ(dy[0], 0);
  EXPECT_EQ(dy[1], 0);
  EXPECT_EQ(dy[2], 0);
  EXPECT_DOUBLE_EQ(dy[3], 9 * std::log(3.0));  // Log is Eigen's, within an ulp of std::log
}

TEST(MathGradTest, AbsIsTheSignAndZeroAtZero) {
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Abs(s, x[0]); },
                 {testing::DistinctValues({2, 3})});
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto grads =
      RunGradients(root, {x}, {Tensor::FromVector<float>({-2.5f, 0, 4})}, ops::Abs(root, x));
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0], Tensor::FromVector<float>({-1, 0, 1}));
}

TEST(MathGradTest, SelectBroadcasting) {
  const Tensor cond = Tensor::FromVector<bool>({true, false, true, false, false, true}, {2, 3});
  ExpectGradient(
      [&](const Scope& s, const std::vector<Output>& x) {
        return ops::Select(s, ops::Const(s, cond), x[0], x[1]);
      },
      {testing::DistinctValues({2, 3}), testing::DistinctValues({3}, 0.1)});
}

TEST(MathGradTest, MatMulEveryTranspose) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string("transpose_a=") + (ta ? "1" : "0") +
                   " transpose_b=" + (tb ? "1" : "0"));
      const TensorShape sa = ta ? TensorShape({3, 2}) : TensorShape({2, 3});
      const TensorShape sb = tb ? TensorShape({4, 3}) : TensorShape({3, 4});
      ExpectGradient(
          [&](const Scope& s, const std::vector<Output>& x) {
            return ops::MatMul(s, x[0], x[1], {.transpose_a = ta, .transpose_b = tb});
          },
          {testing::DistinctValues(sa), testing::DistinctValues(sb, 0.2)});
    }
  }
}

TEST(MathGradTest, AddN) {
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::AddN(s, {x[0], ops::Mul(s, x[1], x[1]), x[0]});
      },
      {testing::DistinctValues({2, 2}), testing::DistinctValues({2, 2}, 0.3)});
}

// ---- Reductions ----

using ReduceBuilder = Output (*)(const Scope&, Input, Input, const ops::ReduceOptions&);

void ExpectReductionGradient(ReduceBuilder op, const Tensor& axis, bool keep_dims) {
  SCOPED_TRACE(axis.DebugString() + (keep_dims ? " keep_dims" : ""));
  ExpectGradient(
      [&](const Scope& s, const std::vector<Output>& x) {
        return op(s, x[0], ops::Const(s, axis), {.keep_dims = keep_dims});
      },
      {testing::DistinctValues({2, 3, 2})});
}

TEST(ReductionGradTest, SumMeanMaxOverAxes) {
  const std::vector<Tensor> axes = {Tensor::Scalar<int32_t>(0),
                                    Tensor::FromVector<int32_t>({1}),
                                    Tensor::FromVector<int32_t>({0, 2}),
                                    Tensor::FromVector<int64_t>({-1}),
                                    Tensor::FromVector<int32_t>({-3, 1, 2}),
                                    Tensor::FromVector<int32_t>({})};
  for (ReduceBuilder op : {&ops::Sum, &ops::Mean, &ops::Max}) {
    for (const Tensor& axis : axes) {
      ExpectReductionGradient(op, axis, false);
      ExpectReductionGradient(op, axis, true);
    }
  }
}

TEST(ReductionGradTest, MinAndProdOverAxes) {
  const std::vector<Tensor> axes = {Tensor::Scalar<int32_t>(0), Tensor::FromVector<int32_t>({1}),
                                    Tensor::FromVector<int64_t>({0, -1}),
                                    Tensor::FromVector<int32_t>({-3, 1, 2}),
                                    Tensor::FromVector<int32_t>({})};
  for (ReduceBuilder op : {&ops::Min, &ops::Prod}) {
    for (const Tensor& axis : axes) {
      ExpectReductionGradient(op, axis, false);
      ExpectReductionGradient(op, axis, true);
    }
  }
}

// A product is a polynomial in each element, so the numeric check holds at zeros too; and
// the gradient is the product of the others, not prod / x.
TEST(ReductionGradTest, ProdWithZeros) {
  const Tensor x = Tensor::FromVector<double>({2, 0, 3, 0, 0, 5, 1, 2, 4}, {3, 3});
  for (int axis : {0, 1}) {
    SCOPED_TRACE(axis);
    ExpectGradient(
        [axis](const Scope& s, const std::vector<Output>& in) { return ops::Prod(s, in[0], axis); },
        {x});
  }
  Scope root = Scope::NewRootScope();
  auto in = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::Prod(root, in, 1);
  auto grads =
      Gradients(root, {y}, {in}, {ops::Const(root, Tensor::FromVector<double>({1, 1, 10}))});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ClientSession session(root);
  auto out = session.Run({{in, x}}, {(*grads)[0].dense});
  ASSERT_TRUE(out.ok()) << out.status();
  // One zero: only it gets a gradient; two zeros: none does.
  EXPECT_EQ((*out)[0], Tensor::FromVector<double>({0, 6, 0, 0, 0, 0, 80, 40, 20}, {3, 3}));
}

TEST(ReductionGradTest, MinSharesTheGradientAmongTies) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::Min(root, x, 1);
  auto grads = Gradients(root, {y}, {x}, {ops::Const(root, Tensor::FromVector<double>({6, 1}))});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ClientSession session(root);
  auto out = session.Run({{x, Tensor::FromVector<double>({5, 2, 5, 1, 7, 1}, {2, 3})}},
                         {(*grads)[0].dense});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<double>({0, 6, 0, 0.5, 0, 0.5}, {2, 3}));
}

TEST(ReductionGradTest, MaxSharesTheGradientAmongTies) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::Max(root, x, 1);
  auto grads = Gradients(root, {y}, {x}, {ops::Const(root, Tensor::FromVector<double>({6, 1}))});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ClientSession session(root);
  auto out = session.Run({{x, Tensor::FromVector<double>({5, 2, 5, 1, 7, 7}, {2, 3})}},
                         {(*grads)[0].dense});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<double>({3, 0, 3, 0, 0.5, 0.5}, {2, 3}));
}

// ---- Neural-network ops ----

TEST(NnGradTest, Activations) {
  const TensorShape shape({2, 3});
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Relu(s, x[0]); },
                 {testing::DistinctValues(shape)});
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Sigmoid(s, x[0]); },
                 {testing::DistinctValues(shape)});
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Tanh(s, x[0]); },
                 {testing::DistinctValues(shape)});
}

TEST(NnGradTest, SoftmaxAndLogSoftmax) {
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Softmax(s, x[0]); },
                 {testing::DistinctValues({2, 4})});
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) { return ops::LogSoftmax(s, x[0]); },
      {testing::DistinctValues({2, 4})});
  // Softmax over the last of three dimensions.
  ExpectGradient([](const Scope& s, const std::vector<Output>& x) { return ops::Softmax(s, x[0]); },
                 {testing::DistinctValues({2, 1, 3})});
}

TEST(NnGradTest, SparseSoftmaxCrossEntropy) {
  for (const Tensor& labels :
       {Tensor::FromVector<int64_t>({2, 0, 1}), Tensor::FromVector<int32_t>({1, 1, 3})}) {
    ExpectGradient(
        [&](const Scope& s, const std::vector<Output>& x) {
          return ops::SparseSoftmaxCrossEntropyWithLogits(s, x[0], ops::Const(s, labels)).loss;
        },
        {testing::DistinctValues({3, 4})});
  }
}

TEST(NnGradTest, BiasAdd) {
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) { return ops::BiasAdd(s, x[0], x[1]); },
      {testing::DistinctValues({2, 3}), testing::DistinctValues({3}, 0.1)});
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) { return ops::BiasAdd(s, x[0], x[1]); },
      {testing::DistinctValues({2, 2, 3}), testing::DistinctValues({3}, 0.1)});
}

// Float graphs get the same gradients, to float precision.
TEST(NnGradTest, FloatLayer) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, Tensor::FromVector<float>({0.1f, -0.2f, 0.3f, 0.5f}, {2, 2}));
  auto w = ops::Placeholder(root, DT_FLOAT);
  auto y = ops::Tanh(root, ops::MatMul(root, x, w));
  auto error = testing::MaxGradientError(
      root, {w}, {Tensor::FromVector<float>({0.3f, -0.4f, 0.6f, 0.2f}, {2, 2})}, y, {},
      {.delta = 1e-2});
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-3);
}

}  // namespace
}  // namespace tw
