// Numeric checks of the gradient functions of the basic, array and state families
// (basic_ops.cc, the array ops' files, state_ops.cc) against central differences in double
// precision.
#include <functional>
#include <vector>

#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/ops/state_ops.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using Build = std::function<Output(const Scope&, const std::vector<Output>&)>;

// The gradient of build(placeholders) with respect to every placeholder. The result is
// squared so that the Jacobian depends on the values (a permutation bug cannot hide).
void ExpectGradient(const Build& build, const std::vector<Tensor>& values, double tol = 1e-7) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> xs;
  for (const Tensor& v : values) xs.push_back(ops::Placeholder(root, v.dtype()));
  const Output y = ops::Square(root, build(root, xs));
  auto error = testing::MaxGradientError(root, xs, values, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, tol);
}

TEST(ArrayGradTest, Reshape) {
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::Reshape(s, x[0], {3, -1});
      },
      {testing::DistinctValues({2, 3})});
}

TEST(ArrayGradTest, ConcatAlongEachAxis) {
  for (int axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    const bool rows = axis == 0;
    ExpectGradient(
        [axis](const Scope& s, const std::vector<Output>& x) {
          return ops::Concat(s, {x[0], x[1], x[2]}, axis);
        },
        {testing::DistinctValues({2, 2}),
         testing::DistinctValues(rows ? TensorShape({1, 2}) : TensorShape({2, 1}), 0.1),
         testing::DistinctValues(rows ? TensorShape({3, 2}) : TensorShape({2, 3}), 0.2)});
  }
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) { return ops::Concat(s, {x[0]}, 0); },
      {testing::DistinctValues({3})});
}

TEST(ArrayGradTest, Slice) {
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::Slice(s, x[0], {1, 0, 1}, {1, -1, 2});
      },
      {testing::DistinctValues({3, 2, 4})});
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::Slice(s, x[0], Tensor::FromVector<int64_t>({1}),
                          Tensor::FromVector<int64_t>({2}));
      },
      {testing::DistinctValues({4})});
}

TEST(ArrayGradTest, PackAndUnpack) {
  for (int axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    ExpectGradient(
        [axis](const Scope& s, const std::vector<Output>& x) {
          return ops::Pack(s, {x[0], x[1]}, axis);
        },
        {testing::DistinctValues({2, 3}), testing::DistinctValues({2, 3}, 0.1)});
    ExpectGradient(
        [axis](const Scope& s, const std::vector<Output>& x) {
          const int n = axis == 0 ? 2 : 3;
          std::vector<Output> pieces = ops::Unpack(s, x[0], n, axis);
          // Only some pieces are used: the others get zeros.
          return ops::Mul(s, pieces[0], pieces[n - 1]);
        },
        {testing::DistinctValues({2, 3})});
  }
}

TEST(ArrayGradTest, Gather) {
  // Repeated rows, and 2-D indices (flattened in the gradient).
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::Gather(s, x[0], {2, 0, 2});
      },
      {testing::DistinctValues({3, 2})});
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::Gather(s, x[0], Tensor::FromVector<int64_t>({1, 0, 1, 3}, {2, 2}));
      },
      {testing::DistinctValues({4})});
}

TEST(ArrayGradTest, FillPadAndUnsortedSegmentSum) {
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::Fill(s, {2, 3}, x[0]);
      },
      {Tensor::Scalar<double>(0.7)});
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::Pad(s, x[0], Tensor::FromVector<int32_t>({1, 0, 2, 1}, {2, 2}));
      },
      {testing::DistinctValues({2, 3})});
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) {
        return ops::UnsortedSegmentSum(s, x[0], {2, 0, 2}, 4);
      },
      {testing::DistinctValues({3, 2})});
}

TEST(BasicGradTest, IdentityAndCast) {
  ExpectGradient(
      [](const Scope& s, const std::vector<Output>& x) { return ops::Identity(s, x[0]); },
      {testing::DistinctValues({2})});
  // double -> float -> double: float precision in the middle.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::Cast(root, ops::Mul(root, ops::Cast(root, x, DT_FLOAT), 3.0f), DT_DOUBLE);
  auto error =
      testing::MaxGradientError(root, {x}, {testing::DistinctValues({3})}, y, {}, {.delta = 1e-2});
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-4);
}

// Variables: the checker assigns each perturbed value, so the gradient is taken with
// respect to the handle, through ReadVariable and ResourceGather.
TEST(StateGradTest, ReadVariableAndResourceGather) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "v", DT_DOUBLE, {3, 2});
  auto rows = ops::ResourceGather(root, v, {2, 0, 2});
  auto whole = ops::ReadVariable(root, v);
  auto y = ops::Add(root, ops::Sum(root, ops::Square(root, rows), 0),
                    ops::Sum(root, ops::Mul(root, whole, whole), 0));
  auto error = testing::MaxGradientError(root, {v.handle}, {testing::DistinctValues({3, 2})}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

}  // namespace
}  // namespace tw
