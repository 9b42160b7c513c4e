// LRN against its definition (a direct loop written here), LRNGrad through the numeric
// gradient check, the shape function and the errors.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/ops/nn_ops.h"
#include "tensorweave/session.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

Tensor Values(const TensorShape& shape, double phase) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + phase);
  return Tensor::FromVector<double>(v, shape);
}

Tensor DirectLrn(const Tensor& x, const ops::LrnOptions& o) {
  const int64_t depth = x.dim(3), rows = x.num_elements() / depth;
  auto xv = x.flat<double>();
  std::vector<double> out(static_cast<size_t>(x.num_elements()));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t d = 0; d < depth; ++d) {
      double sum = 0;
      for (int64_t k = d - o.depth_radius; k <= d + o.depth_radius; ++k) {
        if (k >= 0 && k < depth) sum += xv[r * depth + k] * xv[r * depth + k];
      }
      out[r * depth + d] = xv[r * depth + d] / std::pow(o.bias + o.alpha * sum, o.beta);
    }
  return Tensor::FromVector<double>(out, x.shape());
}

StatusOr<Tensor> RunLrn(const Tensor& x, const ops::LrnOptions& o) {
  Scope root = Scope::NewRootScope();
  auto y = ops::LRN(root.WithOpName("lrn"), ops::Const(root, x), o);
  TW_RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, session.Run({}, {y}));
  return out[0];
}

TEST(LrnTest, HandComputed) {
  // depth 3, radius 1, bias 1, alpha 1, beta 1: x = [1, 2, 3];
  // sums [5, 14, 13] -> [1/6, 2/15, 3/14].
  auto y = RunLrn(Tensor::FromVector<double>({1, 2, 3}, {1, 1, 1, 3}),
                  {.depth_radius = 1, .bias = 1, .alpha = 1, .beta = 1});
  ASSERT_TRUE(y.ok()) << y.status();
  const std::vector<double> want = {1.0 / 6, 2.0 / 15, 3.0 / 14};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(y->flat<double>()[i], want[i], 1e-15);
}

TEST(LrnTest, MatchesTheDefinition) {
  const Tensor x = Values({2, 3, 2, 7}, 0.3);
  for (const ops::LrnOptions& o :
       {ops::LrnOptions{},
        ops::LrnOptions{.depth_radius = 2, .bias = 2, .alpha = 1e-4f, .beta = 0.75f},
        ops::LrnOptions{.depth_radius = 0, .bias = 0.5f, .alpha = 3, .beta = 1.5f}}) {
    auto y = RunLrn(x, o);
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor want = DirectLrn(x, o);
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      EXPECT_NEAR(y->flat<double>()[i], want.flat<double>()[i], 1e-12) << i;
    }
  }
}

TEST(LrnTest, GradientMatchesCentralDifferences) {
  for (const ops::LrnOptions& o :
       {ops::LrnOptions{.depth_radius = 1, .bias = 1, .alpha = 0.5f, .beta = 0.75f},
        ops::LrnOptions{.depth_radius = 5, .bias = 2, .alpha = 1, .beta = 0.5f}}) {
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root, DT_DOUBLE);
    auto y = ops::LRN(root, x, o);
    auto error = testing::MaxGradientError(root, {x}, {Values({1, 2, 2, 6}, 0.4)}, y);
    ASSERT_TRUE(error.ok()) << error.status();
    EXPECT_LT(*error, 1e-8);
  }
}

TEST(LrnTest, ShapesAndErrors) {
  auto rank3 = RunLrn(Values({2, 2, 3}, 0), {});
  EXPECT_THAT(rank3.status().message(), HasSubstr("Shape must be rank 4 but is rank 3"));
  auto negative = RunLrn(Values({1, 1, 1, 3}, 0), {.depth_radius = -1});
  EXPECT_TRUE(IsInvalidArgument(negative.status()));
  EXPECT_THAT(negative.status().message(), HasSubstr("node lrn: depth_radius = -1"));

  Scope root = Scope::NewRootScope();
  auto p = ops::Placeholder(root, DT_DOUBLE);
  auto lrn = ops::LRN(root.WithOpName("lrn"), p);
  auto grad = ops::LRNGrad(root.WithOpName("g"), p, ops::Const(root, Values({1, 1, 1, 3}, 0)),
                           ops::Const(root, Values({1, 1, 1, 3}, 0)));
  ClientSession session(root);
  auto rank2 = session.Run({{p, Values({2, 3}, 0)}}, {lrn});
  EXPECT_THAT(rank2.status().message(), HasSubstr("node lrn: input must be 4-dimensional"));
  auto mismatch = session.Run({{p, Values({1, 1, 1, 4}, 0)}}, {grad});
  EXPECT_THAT(mismatch.status().message(),
              HasSubstr("node g: input_grads, input_image, and out_image should have the "
                        "same shape"));
}

}  // namespace
}  // namespace tw
