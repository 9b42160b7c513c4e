// Numeric checks of the gradients of the array ops that move elements (transpose_ops.cc,
// reshape_ops.cc's ExpandDims and Squeeze, split_ops.cc, sequence_ops.cc): each symbolic gradient
// against central differences in double precision, with negative axes, dimensions of 1 and int64
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

// The first piece, and the last scaled, so that both pieces' gradients are checked and
// one piece's is sometimes missing.
TEST(ArrayGradTest, SplitAndSplitV) {
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        auto pieces = ops::Split(s, 1, x, 3);
        return ops::Add(s, pieces[0], ops::Mul(s, pieces[2], 2.0));
      },
      {2, 6});
  ExpectGradient([](const Scope& s, const Output& x) { return ops::Split(s, -1, x, 2)[1]; },
                 {2, 4});
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        auto pieces = ops::SplitV(s, x, Tensor::FromVector<int64_t>({1, -1}), 0, 2);
        return ops::Sum(s, ops::Mul(s, pieces[1], pieces[1]), {0});
      },
      {3, 2});
}

TEST(ArrayGradTest, ReverseV2) {
  ExpectGradient(
      [](const Scope& s, const Output& x) {
        return ops::ReverseV2(s, x, {0, -1});
      },
      {2, 3, 2});
}

TEST(ArrayGradTest, Cumsum) {
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      ExpectGradient(
          [&](const Scope& s, const Output& x) {
            return ops::Cumsum(s, x, 1, {.exclusive = exclusive, .reverse = reverse});
          },
          {2, 3, 2});
      ExpectGradient(
          [&](const Scope& s, const Output& x) {
            return ops::Cumsum(s, x, -1, {.exclusive = exclusive, .reverse = reverse});
          },
          {4});
    }
  }
}

TEST(ArrayGradTest, MirrorPadAndItsGradient) {
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    SCOPED_TRACE(mode);
    const Tensor paddings = Tensor::FromVector<int32_t>({1, 2, 2, 0}, {2, 2});
    ExpectGradient(
        [&](const Scope& s, const Output& x) { return ops::MirrorPad(s, x, paddings, mode); },
        {3, 3});
    ExpectGradient(
        [&](const Scope& s, const Output& x) { return ops::MirrorPadGrad(s, x, paddings, mode); },
        {6, 5});
  }
}

}  // namespace
}  // namespace tw
