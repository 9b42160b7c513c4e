// Numeric checks of the gradients of GatherNd, ScatterNd, TopKV2, SegmentSum,
// UnsortedSegmentSum, CheckNumerics and Print against central differences in double
// precision.
#include <functional>
#include <vector>

#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/index_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using Build = std::function<Output(const Scope&, const Output&)>;

// The gradient of Square(build(x)) (squared so that a permutation bug cannot hide).
void ExpectGradient(const Build& build, const Tensor& value) {
  Scope root = Scope::NewRootScope();
  const Output x = ops::Placeholder(root, value.dtype());
  const Output y = ops::Square(root, build(root, x));
  auto error = testing::MaxGradientError(root, {x}, {value}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

TEST(IndexGradTest, GatherNdElementsAndSlicesWithRepeats) {
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::GatherNd(s, x, Tensor::FromVector<int32_t>({1, 2, 0, 0, 1, 2}, {3, 2}));
      },
      testing::DistinctValues({2, 3}));
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::GatherNd(s, x, Tensor::FromVector<int64_t>({2, 0, 2}, {3, 1}));
      },
      testing::DistinctValues({3, 2, 2}));
}

TEST(IndexGradTest, ScatterNdUpdates) {
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::ScatterNd(s, Tensor::FromVector<int32_t>({1, 0, 1}, {3, 1}), x, {3, 2});
      },
      testing::DistinctValues({3, 2}));
}

TEST(IndexGradTest, TopKValues) {
  ExpectGradient([](const Scope& s, const Output& x) { return ops::TopK(s, x, 2).values; },
                 testing::DistinctValues({2, 2, 4}));
  ExpectGradient([](const Scope& s, const Output& x) { return ops::TopK(s, x, 1).values; },
                 testing::DistinctValues({5}));
}

TEST(IndexGradTest, SegmentSums) {
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::SegmentSum(s, x, {0, 0, 2, 3});
      },
      testing::DistinctValues({4, 2}));
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::UnsortedSegmentSum(s, x, {2, 0, 2}, 3);
      },
      testing::DistinctValues({3, 2}));
}

TEST(IndexGradTest, CheckNumericsAndPrintPassTheGradient) {
  ExpectGradient([](const Scope& s, const Output& x) { return ops::CheckNumerics(s, x, "x"); },
                 testing::DistinctValues({3}));
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::Print(s, x, {}, {.message = "", .first_n = 0, .summarize = 3});
      },
      testing::DistinctValues({3}));
}

}  // namespace
}  // namespace tw
