// FloorDiv, FloorMod, Pow and Abs: hand-computed values, TensorFlow's rounding and signs,
// broadcasting, zero divisors, overflow, and types outside the ops' lists.
#include <cmath>
#include <limits>
#include <map>
#include <string>
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

// A binary (unary) op with T = dtype of x; the first output or the error.
StatusOr<Tensor> RunBinary(const std::string& op, const Tensor& x, const Tensor& y) {
  return testing::RunFirstOutput(op, {x, y});
}
StatusOr<Tensor> RunUnary(const std::string& op, const Tensor& x) {
  return testing::RunFirstOutput(op, {x});
}

// ---- FloorDiv ----

TEST(FloorDivOpTest, IntegersRoundTowardMinusInfinity) {
  // Div would give 3, -3, -3, 3, 2, -2, 0.
  auto z = RunBinary("FloorDiv", Tensor::FromVector<int32_t>({7, -7, 7, -7, 6, -6, 0}),
                     Tensor::FromVector<int32_t>({2, 2, -2, -2, 3, 3, -5}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<int32_t>({3, -4, -4, 3, 2, -2, 0}));
  // min / -1 wraps to min instead of trapping; min / 2 is exact.
  const int64_t min = std::numeric_limits<int64_t>::min();
  auto edge = RunBinary("FloorDiv", Tensor::FromVector<int64_t>({min, min, min + 1}),
                        Tensor::FromVector<int64_t>({-1, 2, 2}));
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_EQ(*edge, Tensor::FromVector<int64_t>({min, min / 2, min / 2}));
}

TEST(FloorDivOpTest, BroadcastsAColumnAgainstAMatrix) {
  // Row 0 divided by 2, row 1 by -3.
  auto z = RunBinary("FloorDiv", Tensor::FromVector<int64_t>({-5, -4, -3, 3, 4, 5}, {2, 3}),
                     Tensor::FromVector<int64_t>({2, -3}, {2, 1}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<int64_t>({-3, -2, -2, -1, -2, -2}, {2, 3}));
  // A scalar dividend against a vector.
  auto s = RunBinary("FloorDiv", Tensor::Scalar<int32_t>(-9), Tensor::FromVector<int32_t>({2, 4}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Tensor::FromVector<int32_t>({-5, -3}));
}

TEST(FloorDivOpTest, FloatsFloorTheQuotient) {
  auto z = RunBinary("FloorDiv", Tensor::FromVector<float>({7, -7, 7.5f, -0.5f}),
                     Tensor::FromVector<float>({2, 2, -2, 4}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<float>({3, -4, -4, -1}));
  // A zero divisor is not an error for floats: +-inf, or NaN for 0 / 0.
  auto zero = RunBinary("FloorDiv", Tensor::FromVector<double>({1, -1, 0}), Tensor::Scalar(0.0));
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->flat<double>()[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(zero->flat<double>()[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(zero->flat<double>()[2]));
}

TEST(FloorDivOpTest, IntegerDivisionByZeroIsAnError) {
  auto z = RunBinary("FloorDiv", Tensor::FromVector<int32_t>({1, 2}),
                     Tensor::FromVector<int32_t>({1, 0}));
  EXPECT_TRUE(IsInvalidArgument(z.status())) << z.status();
  EXPECT_EQ(z.status().message(), "node node_FloorDiv: Integer division by zero");
  // Nothing is divided when the output is empty, as with Div.
  auto empty =
      RunBinary("FloorDiv", Tensor(DT_INT64, TensorShape({0})), Tensor::Scalar<int64_t>(0));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({0}));
}

// ---- FloorMod ----

TEST(FloorModOpTest, IntegersTakeTheSignOfTheDivisor) {
  auto z = RunBinary("FloorMod", Tensor::FromVector<int32_t>({7, -7, 7, -7, 6, 0}),
                     Tensor::FromVector<int32_t>({2, 2, -2, -2, 3, -5}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<int32_t>({1, 1, -1, -1, 0, 0}));
  // A scalar divisor broadcasts; min mod -1 is 0 instead of trapping.
  auto s = RunBinary("FloorMod", Tensor::FromVector<int64_t>({-3, -2, -1, 0, 1, 2, 3}),
                     Tensor::Scalar<int64_t>(3));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Tensor::FromVector<int64_t>({0, 1, 2, 0, 1, 2, 0}));
  auto min = RunBinary("FloorMod", Tensor::Scalar(std::numeric_limits<int32_t>::min()),
                       Tensor::Scalar<int32_t>(-1));
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(min->scalar<int32_t>(), 0);
}

TEST(FloorModOpTest, IsTheRemainderOfFloorDiv) {
  // FloorDiv(x, y) * y + FloorMod(x, y) == x, with 0 <= |FloorMod| < |y| of y's sign, over
  // every x in [-7, 7] and nonzero y in [-3, 3]: an outer product by broadcasting.
  std::vector<int32_t> xs, ys;
  for (int32_t x = -7; x <= 7; ++x) xs.push_back(x);
  for (int32_t y = -3; y <= 3; ++y) {
    if (y != 0) ys.push_back(y);
  }
  const Tensor x = Tensor::FromVector<int32_t>(xs, {static_cast<int64_t>(xs.size()), 1});
  const Tensor y = Tensor::FromVector<int32_t>(ys);
  auto div = RunBinary("FloorDiv", x, y);
  auto mod = RunBinary("FloorMod", x, y);
  ASSERT_TRUE(div.ok() && mod.ok()) << div.status() << mod.status();
  ASSERT_EQ(mod->shape(), TensorShape({15, 6}));
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t j = 0; j < ys.size(); ++j) {
      const int32_t q = div->flat<int32_t>()[i * ys.size() + j];
      const int32_t r = mod->flat<int32_t>()[i * ys.size() + j];
      EXPECT_EQ(q * ys[j] + r, xs[i]) << xs[i] << " and " << ys[j];
      EXPECT_LT(std::abs(r), std::abs(ys[j]));
      EXPECT_TRUE(r == 0 || (r < 0) == (ys[j] < 0)) << xs[i] << " mod " << ys[j] << " = " << r;
      EXPECT_EQ(q, static_cast<int32_t>(std::floor(static_cast<double>(xs[i]) / ys[j])));
    }
  }
}

TEST(FloorModOpTest, Floats) {
  auto z = RunBinary("FloorMod", Tensor::FromVector<float>({7.5f, -7.5f, 7.5f, -7.5f, 4}),
                     Tensor::FromVector<float>({2, 2, -2, -2, 2}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<float>({1.5f, 0.5f, -0.5f, -1.5f, 0}));
  auto zero = RunBinary("FloorMod", Tensor::Scalar(3.0), Tensor::Scalar(0.0));
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_TRUE(std::isnan(zero->scalar<double>()));
}

TEST(FloorModOpTest, IntegerDivisionByZeroIsAnError) {
  auto z = RunBinary("FloorMod", Tensor::FromVector<int64_t>({5, 6}, {2, 1}),
                     Tensor::FromVector<int64_t>({3, 0, 2}));
  EXPECT_TRUE(IsInvalidArgument(z.status())) << z.status();
  EXPECT_EQ(z.status().message(), "node node_FloorMod: Integer division by zero");
}

// ---- Pow ----

TEST(PowOpTest, Floats) {
  auto z = RunBinary("Pow", Tensor::FromVector<float>({2, 9, 2, 0, -2}),
                     Tensor::FromVector<float>({3, 0.5f, -1, 0, 2}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<float>({8, 3, 0.5f, 1, 4}));
  // A fractional power of a negative number is NaN.
  auto nan = RunBinary("Pow", Tensor::Scalar(-8.0), Tensor::Scalar(1.0 / 3));
  ASSERT_TRUE(nan.ok()) << nan.status();
  EXPECT_TRUE(std::isnan(nan->scalar<double>()));
}

TEST(PowOpTest, BroadcastsAColumnAgainstARow) {
  auto z = RunBinary("Pow", Tensor::FromVector<double>({2, 3}, {2, 1}),
                     Tensor::FromVector<double>({0, 1, 2}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<double>({1, 2, 4, 1, 3, 9}, {2, 3}));
}

TEST(PowOpTest, IntegersAreExactAndWrap) {
  auto z = RunBinary("Pow", Tensor::FromVector<int32_t>({2, -3, 0, 5, -1, 1}),
                     Tensor::FromVector<int32_t>({10, 3, 0, 0, 7, 1000000}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<int32_t>({1024, -27, 1, 1, -1, 1}));
  // 3^39 is exact in int64 (a double would round it).
  auto big = RunBinary("Pow", Tensor::Scalar<int64_t>(3), Tensor::Scalar<int64_t>(39));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->scalar<int64_t>(), int64_t{4052555153018976267});
  // 2^31 wraps to the lowest int32, 2^32 to 0.
  auto wrap = RunBinary("Pow", Tensor::Scalar<int32_t>(2), Tensor::FromVector<int32_t>({31, 32}));
  ASSERT_TRUE(wrap.ok()) << wrap.status();
  EXPECT_EQ(*wrap, Tensor::FromVector<int32_t>({std::numeric_limits<int32_t>::min(), 0}));
}

TEST(PowOpTest, IntegerNegativeExponentIsAnError) {
  auto z =
      RunBinary("Pow", Tensor::FromVector<int64_t>({2, 3}), Tensor::FromVector<int64_t>({1, -1}));
  EXPECT_TRUE(IsInvalidArgument(z.status())) << z.status();
  EXPECT_EQ(z.status().message(),
            "node node_Pow: Integers to negative integer powers are not allowed");
}

// ---- Abs ----

TEST(AbsOpTest, IntegersWrapLikeNeg) {
  const int32_t min = std::numeric_limits<int32_t>::min();
  auto z = RunUnary("Abs", Tensor::FromVector<int32_t>({-3, 0, 5, min, min + 1}, {5, 1}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<int32_t>({3, 0, 5, min, -(min + 1)}, {5, 1}));
  auto l = RunUnary("Abs", Tensor::Scalar<int64_t>(-1234567890123));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->scalar<int64_t>(), 1234567890123);
}

TEST(AbsOpTest, Floats) {
  const double inf = std::numeric_limits<double>::infinity();
  auto z = RunUnary("Abs", Tensor::FromVector<double>(
                               {-1.5, 2, -0.0, -inf, std::numeric_limits<double>::quiet_NaN()}));
  ASSERT_TRUE(z.ok()) << z.status();
  const auto y = z->flat<double>();
  EXPECT_EQ(y[0], 1.5);
  EXPECT_EQ(y[1], 2);
  EXPECT_EQ(y[2], 0);
  EXPECT_FALSE(std::signbit(y[2]));  // -0 becomes +0
  EXPECT_EQ(y[3], inf);
  EXPECT_TRUE(std::isnan(y[4]));
  auto empty = RunUnary("Abs", Tensor(DT_FLOAT, TensorShape({2, 0})));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({2, 0}));
}

// ---- Types ----

TEST(ArithmeticOpTest, RejectTypesOutsideTheirLists) {
  for (const std::string op : {"FloorDiv", "FloorMod", "Pow"}) {
    auto s = RunBinary(op, Tensor::Scalar<std::string>("a"), Tensor::Scalar<std::string>("b"));
    EXPECT_TRUE(IsInvalidArgument(s.status())) << op << ": " << s.status();
    EXPECT_THAT(std::string(s.status().message()),
                HasSubstr("(op " + op + ") is string, not one of float, double, int32, int64"));
    auto b = RunBinary(op, Tensor::Scalar(true), Tensor::Scalar(true));
    EXPECT_TRUE(IsInvalidArgument(b.status())) << op << ": " << b.status();
    EXPECT_THAT(std::string(b.status().message()), HasSubstr("(op " + op + ") is bool"));
  }
  auto abs = RunUnary("Abs", Tensor::Scalar(true));
  EXPECT_TRUE(IsInvalidArgument(abs.status())) << abs.status();
  EXPECT_THAT(std::string(abs.status().message()),
              HasSubstr("(op Abs) is bool, not one of float, double, int32, int64"));
}

// ---- Builders, through a session ----

TEST(ArithmeticBuilderTest, BuildsAndRuns) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root.WithOpName("x"), Tensor::FromVector<int32_t>({-7, 7}));
  auto div = ops::FloorDiv(root.WithOpName("div"), x, 2);
  auto mod = ops::FloorMod(root.WithOpName("mod"), x, -2);
  auto pow = ops::Pow(root.WithOpName("pow"), x, 2);
  auto abs = ops::Abs(root.WithOpName("abs"), x);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(div.type(), DT_INT32);
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::map<std::string, proto::NodeDef> nodes;
  for (const auto& n : graph->node()) nodes[n.name()] = n;
  EXPECT_EQ(nodes["mod"].op(), "FloorMod");
  EXPECT_EQ(nodes["pow"].attr().at("T").type(), proto::DT_INT32);

  ClientSession session(root);
  auto out = session.Run({}, {div, mod, pow, abs});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({-4, 3}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int32_t>({-1, -1}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<int32_t>({49, 49}));
  EXPECT_EQ((*out)[3], Tensor::FromVector<int32_t>({7, 7}));

  Scope bad = Scope::NewRootScope();
  ops::Pow(bad.WithOpName("bad"), Tensor::Scalar(2.0f), 2);  // float and int32
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("node bad"));
}

}  // namespace
}  // namespace tw
