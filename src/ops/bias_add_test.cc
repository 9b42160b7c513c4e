// BiasAdd and BiasAddGrad with data_format NCHW (the bias along dimension 1, any rank >= 2):
// hand-computed values, the gradient against central differences, the shape functions and
// TF's errors. (NHWC: src/ops/nn_ops_test.cc.)
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/session.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

TEST(BiasAddNchwTest, AddsAlongDimensionOneAndSumsBack) {
  Scope root = Scope::NewRootScope();
  // [1, 2, 2, 2]: channel 0 holds 1..4, channel 1 holds 5..8.
  const Tensor value = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2});
  auto sum = ops::BiasAdd(root, value, Tensor::FromVector<float>({10, 20}), "NCHW");
  auto grad = ops::BiasAddGrad(root, value, "NCHW");
  // Rank 3 [2, 3, 1]: NCHW still means dimension 1.
  const Tensor rank3 = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3, 1});
  auto sum3 = ops::BiasAdd(root, rank3, Tensor::FromVector<float>({10, 20, 30}), "NCHW");
  auto grad3 = ops::BiasAddGrad(root, rank3, "NCHW");
  ClientSession s(root);
  auto out = s.Run({}, {sum, grad, sum3, grad3});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({11, 12, 13, 14, 25, 26, 27, 28}, {1, 2, 2, 2}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({10, 26}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<float>({11, 22, 33, 14, 25, 36}, {2, 3, 1}));
  EXPECT_EQ((*out)[3], Tensor::FromVector<float>({5, 7, 9}));
}

TEST(BiasAddNchwTest, GradientMatchesCentralDifferences) {
  for (const char* format : {"NHWC", "NCHW"}) {
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root, DT_DOUBLE);
    auto b = ops::Placeholder(root, DT_DOUBLE);
    auto y = ops::Mul(root, ops::BiasAdd(root, x, b, format),
                      ops::Const(root, testing::DistinctValues({2, 3, 2, 2}, 0.5)));
    const int64_t c = std::string(format) == "NCHW" ? 3 : 2;
    auto error = testing::MaxGradientError(
        root, {x, b}, {testing::DistinctValues({2, 3, 2, 2}), testing::DistinctValues({c})}, y);
    ASSERT_TRUE(error.ok()) << error.status();
    EXPECT_LT(*error, 1e-8) << format;
  }
}

std::string ShapeOf(const Scope& scope, const Output& o) {
  std::optional<TensorShape> s = scope.InferredShape(o);
  return s ? s->DebugString() : "?";
}

TEST(BiasAddNchwTest, ShapesAndErrors) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 16, 8, 8}});
  auto b = ops::Placeholder(root, DT_FLOAT);
  EXPECT_EQ(ShapeOf(root, ops::BiasAdd(root, x, b, "NCHW")), "[?,16,8,8]");
  EXPECT_EQ(ShapeOf(root, ops::BiasAddGrad(root, x, "NCHW")), "[16]");
  EXPECT_EQ(ShapeOf(root, ops::BiasAddGrad(root, x)), "[8]");
  ASSERT_TRUE(root.ok()) << root.status();
  auto wrong = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{8}});
  ops::BiasAdd(root.WithOpName("bad"), x, wrong, "NCHW");
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("Dimensions must be equal, but are 16 and 8"));

  Scope run = Scope::NewRootScope();
  auto v = ops::Placeholder(run, DT_FLOAT);
  auto bias = ops::Placeholder(run, DT_FLOAT);
  auto add = ops::BiasAdd(run.WithOpName("add"), v, bias, "NCHW");
  auto format = ops::BiasAdd(run.WithOpName("fmt"), v, bias, "NDHWC");
  ClientSession session(run);
  auto rank1 = session.Run(
      {{v, Tensor::FromVector<float>({1, 2})}, {bias, Tensor::FromVector<float>({1, 2})}}, {add});
  EXPECT_TRUE(IsInvalidArgument(rank1.status()));
  EXPECT_THAT(rank1.status().message(), HasSubstr("node add: Input tensor must be at least 2D"));
  auto mismatch = session.Run({{v, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {1, 3, 2})},
                               {bias, Tensor::FromVector<float>({1, 2})}},
                              {add});
  EXPECT_THAT(mismatch.status().message(), HasSubstr("node add: BiasAdd needs a bias vector"));
  auto bad_format = session.Run(
      {{v, Tensor::FromVector<float>({1, 2}, {1, 2})}, {bias, Tensor::FromVector<float>({1, 2})}},
      {format});
  EXPECT_THAT(bad_format.status().message(), HasSubstr("node fmt: Invalid data format"));
}

}  // namespace
}  // namespace tw
