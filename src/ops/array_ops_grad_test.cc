// Numeric checks of the gradients of the array ops that move elements (transpose_ops.cc,
// reshape_ops.cc's ExpandDims and Squeeze, sequence_ops.cc): each symbolic gradient against
// central differences in double precision, with negative axes, dimensions of 1 and int64
// index inputs.
#include <functional>
#include <vector>

#include "gtest/gtest.h"
#include "tensorweave/ops/array_ops.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using Build = std::function<Output(const Scope&, const Output&)>;

// The gradient of build(x) with respect to x, x fed distinct values of `shape`; y is
// multiplied by distinct weights first so that a gradient routed to the wrong element fails.
void ExpectGradient(const Build& build, const TensorShape& shape) {
  SCOPED_TRACE(shape.DebugString());
  Scope root = Scope::NewRootScope();
  const Output x = ops::Placeholder(root, DT_DOUBLE);
  const Output y = build(root, x);
  auto error = testing::MaxGradientError(root, {x}, {testing::DistinctValues(shape)}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

TEST(ArrayGradTest, Transpose) {
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::Transpose(s, x, {1, 0});
      },
      {2, 3});
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::Transpose(s, x, Tensor::FromVector<int64_t>({2, 0, 1}));
      },
      {2, 3, 4});
}

TEST(ArrayGradTest, ExpandDimsAndSqueeze) {
  ExpectGradient([](const Scope& s, const Output& x) { return ops::ExpandDims(s, x, -1); }, {2, 3});
  ExpectGradient([](const Scope& s, const Output& x) { return ops::ExpandDims(s, x, 0); }, {3});
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Squeeze(s, x); }, {2, 1, 3, 1});
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Squeeze(s, x, {-1}); },
                 {1, 3, 1});
}

TEST(ArrayGradTest, Tile) {
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Tile(s, x, {2, 3}); }, {2, 2});
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::Tile(s, x, Tensor::FromVector<int64_t>({1, 2, 1}));
      },
      {2, 1, 3});
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Tile(s, x, {3}); }, {2});
}

TEST(ArrayGradTest, BroadcastTo) {
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::BroadcastTo(s, x, {2, 3, 2});
      },
      {3, 1});
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::BroadcastTo(s, x, {2, 3});
      },
      {});
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::BroadcastTo(s, x, {2, 3});
      },
      {2, 3});
}

}  // namespace
}  // namespace tw
