// FusedBatchNorm against a direct loop written here (training and inference, NHWC and
// NCHW), its gradient against central differences, the shape function and every error.
#include <cmath>
#include <optional>
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

Tensor Values(const TensorShape& shape, double phase, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = scale * std::sin(0.7 * static_cast<double>(i) + phase);
  }
  return Tensor::FromVector<double>(v, shape);
}

// The flat index of x[b, h, w, c] of an NHWC or NCHW tensor of `shape`.
int64_t Index(const Tensor& x, bool nchw, int64_t b, int64_t h, int64_t w, int64_t c) {
  if (nchw) return ((b * x.dim(1) + c) * x.dim(2) + h) * x.dim(3) + w;
  return ((b * x.dim(1) + h) * x.dim(2) + w) * x.dim(3) + c;
}

struct Reference {
  Tensor y;
  std::vector<double> mean, var;  // var: biased
};

// Batch normalization by its definition, each element through its four indices.
Reference DirectBatchNorm(const Tensor& x, const std::vector<double>& scale,
                          const std::vector<double>& offset, double eps, bool nchw,
                          std::optional<std::vector<double>> mean = std::nullopt,
                          std::optional<std::vector<double>> var = std::nullopt) {
  const int64_t N = x.dim(0), H = nchw ? x.dim(2) : x.dim(1), W = nchw ? x.dim(3) : x.dim(2);
  const int64_t C = nchw ? x.dim(1) : x.dim(3);
  auto xv = x.flat<double>();
  Reference r;
  r.mean.assign(static_cast<size_t>(C), 0.0);
  r.var.assign(static_cast<size_t>(C), 0.0);
  const double n = static_cast<double>(N * H * W);
  for (int64_t c = 0; c < C; ++c) {
    double sum = 0, sq = 0;
    for (int64_t b = 0; b < N; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) sum += xv[Index(x, nchw, b, h, w, c)];
    const double m = mean ? (*mean)[c] : sum / n;
    for (int64_t b = 0; b < N; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          const double d = xv[Index(x, nchw, b, h, w, c)] - m;
          sq += d * d;
        }
    r.mean[c] = m;
    r.var[c] = var ? (*var)[c] : sq / n;
  }
  std::vector<double> y(static_cast<size_t>(x.num_elements()));
  for (int64_t b = 0; b < N; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        for (int64_t c = 0; c < C; ++c) {
          const int64_t i = Index(x, nchw, b, h, w, c);
          y[i] = (xv[i] - r.mean[c]) / std::sqrt(r.var[c] + eps) * scale[c] + offset[c];
        }
  r.y = Tensor::FromVector<double>(y, x.shape());
  return r;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    EXPECT_NEAR(got.flat<double>()[i], want[i], tol) << "element " << i;
  }
}
std::vector<double> ToVector(const Tensor& t) {
  return std::vector<double>(t.flat<double>().begin(), t.flat<double>().end());
}

StatusOr<std::vector<Tensor>> RunBatchNorm(const Tensor& x, const Tensor& scale,
                                           const Tensor& offset, const Tensor& mean,
                                           const Tensor& var,
                                           const ops::FusedBatchNormOptions& options) {
  Scope root = Scope::NewRootScope();
  auto bn = ops::FusedBatchNorm(root.WithOpName("bn"), ops::Const(root, x), ops::Const(root, scale),
                                ops::Const(root, offset), ops::Const(root, mean),
                                ops::Const(root, var), options);
  TW_RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  return session.Run({}, {bn.y, bn.batch_mean, bn.batch_variance, bn.reserve_space_1,
                          bn.reserve_space_2, bn.reserve_space_3});
}

TEST(FusedBatchNormTest, HandComputedTraining) {
  // One channel, values 1..4: mean 2.5, biased variance 1.25, corrected 5/3.
  auto x = Tensor::FromVector<double>({1, 2, 3, 4}, {1, 2, 2, 1});
  auto one = Tensor::FromVector<double>({1.0});
  auto zero = Tensor::FromVector<double>({0.0});
  auto empty = Tensor::FromVector<double>({}, {0});
  auto out = RunBatchNorm(x, one, zero, empty, empty, {.epsilon = 0});
  ASSERT_TRUE(out.ok()) << out.status();
  const double s = 1 / std::sqrt(1.25);
  ExpectNear((*out)[0], {-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s});
  ExpectNear((*out)[1], {2.5});
  ExpectNear((*out)[2], {5.0 / 3.0});
  ExpectNear((*out)[3], {2.5});
  ExpectNear((*out)[4], {1.25});
  EXPECT_EQ((*out)[5].shape(), TensorShape({}));
}

class FusedBatchNormFormatTest : public ::testing::TestWithParam<bool> {};

TEST_P(FusedBatchNormFormatTest, TrainingMatchesTheDirectLoop) {
  const bool nchw = GetParam();
  const Tensor x = Values({3, 4, 5, 2}, 0.3, 2.0);
  const int64_t c = nchw ? 4 : 2;
  const Tensor scale = Values({c}, 1.1), offset = Values({c}, 2.2);
  const Tensor empty = Tensor::FromVector<double>({}, {0});
  auto out = RunBatchNorm(x, scale, offset, empty, empty,
                          {.epsilon = 1e-3f, .data_format = nchw ? "NCHW" : "NHWC"});
  ASSERT_TRUE(out.ok()) << out.status();
  const Reference want =
      DirectBatchNorm(x, ToVector(scale), ToVector(offset), static_cast<double>(1e-3f), nchw);
  ExpectNear((*out)[0], ToVector(want.y));
  ExpectNear((*out)[1], want.mean);
  const double n = static_cast<double>(x.num_elements() / c);
  std::vector<double> corrected = want.var;
  for (double& v : corrected) v *= n / (n - 1);
  ExpectNear((*out)[2], corrected);
  ExpectNear((*out)[3], want.mean);
  ExpectNear((*out)[4], want.var);
}

TEST_P(FusedBatchNormFormatTest, InferenceUsesTheGivenStatistics) {
  const bool nchw = GetParam();
  const Tensor x = Values({2, 3, 3, 3}, 0.5, 3.0);
  const Tensor scale = Values({3}, 1.1), offset = Values({3}, 2.2);
  const Tensor mean = Values({3}, 0.4), var = Values({3}, 0.9, 0.5);  // |var| < 0.5 < 1
  const Tensor pos_var = Tensor::FromVector<double>(
      {1 + var.flat<double>()[0], 1 + var.flat<double>()[1], 1 + var.flat<double>()[2]});
  auto out =
      RunBatchNorm(x, scale, offset, mean, pos_var,
                   {.epsilon = 0.01f, .data_format = nchw ? "NCHW" : "NHWC", .is_training = false});
  ASSERT_TRUE(out.ok()) << out.status();
  const Reference want =
      DirectBatchNorm(x, ToVector(scale), ToVector(offset), static_cast<double>(0.01f), nchw,
                      ToVector(mean), ToVector(pos_var));
  ExpectNear((*out)[0], ToVector(want.y));
  ExpectNear((*out)[1], ToVector(mean));
  ExpectNear((*out)[2], ToVector(pos_var));
}

INSTANTIATE_TEST_SUITE_P(Formats, FusedBatchNormFormatTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return std::string(param_info.param ? "NCHW" : "NHWC");
                         });

TEST(FusedBatchNormTest, FloatMatchesDouble) {
  const Tensor xd = Values({4, 3, 3, 8}, 0.2, 5.0);
  std::vector<float> xf;
  for (double v : xd.flat<double>()) xf.push_back(static_cast<float>(v) + 10.0f);
  std::vector<double> xs;
  for (float v : xf) xs.push_back(static_cast<double>(v));
  const Tensor x = Tensor::FromVector<float>(xf, xd.shape());
  const Tensor ones = Tensor::FromVector<float>(std::vector<float>(8, 1.0f));
  const Tensor zeros = Tensor::FromVector<float>(std::vector<float>(8, 0.0f));
  const Tensor empty = Tensor::FromVector<float>({}, {0});
  auto out = RunBatchNorm(x, ones, zeros, empty, empty, {});
  ASSERT_TRUE(out.ok()) << out.status();
  const Reference want =
      DirectBatchNorm(Tensor::FromVector<double>(xs, xd.shape()), std::vector<double>(8, 1.0),
                      std::vector<double>(8, 0.0), static_cast<double>(1e-4f), false);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    EXPECT_NEAR((*out)[0].flat<float>()[i], want.y.flat<double>()[i], 1e-4) << i;
  }
}

void ExpectBatchNormGradients(const ops::FusedBatchNormOptions& options, const TensorShape& shape,
                              int64_t c) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto scale = ops::Placeholder(root, DT_DOUBLE);
  auto offset = ops::Placeholder(root, DT_DOUBLE);
  auto mean = ops::Const(root, Values({c}, 0.3));
  auto var = ops::Const(root, Tensor::FromVector<double>(std::vector<double>(c, 0.7)));
  auto bn = ops::FusedBatchNorm(root, x, scale, offset, mean, var, options);
  // A non-uniform weighting of y, so that the sum over a channel is not trivially zero.
  auto y = ops::Mul(root, bn.y, ops::Const(root, Values(shape, 0.9)));
  auto error = testing::MaxGradientError(
      root, {x, scale, offset}, {Values(shape, 0.2, 2.0), Values({c}, 1.3), Values({c}, 0.6)}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

TEST(FusedBatchNormGradientTest, MatchesCentralDifferences) {
  ExpectBatchNormGradients({.epsilon = 1e-3f}, {2, 3, 2, 3}, 3);
  ExpectBatchNormGradients({.epsilon = 1e-3f, .data_format = "NCHW"}, {2, 3, 2, 2}, 3);
  ExpectBatchNormGradients({.epsilon = 1e-3f, .is_training = false}, {2, 2, 3, 2}, 2);
  ExpectBatchNormGradients({.epsilon = 1e-3f, .data_format = "NCHW", .is_training = false},
                           {1, 2, 3, 2}, 2);
}

TEST(FusedBatchNormGradientTest, GradOpByItsFormula) {
  // Inference: dx = dy * scale * rsqrt(var + eps); scale_backprop = sum(dy * (x - mean)) *
  // rsqrt(var + eps); offset_backprop = sum(dy).
  Scope root = Scope::NewRootScope();
  auto dy = ops::Const(root, Tensor::FromVector<double>({1, 2, 3, 4}, {1, 1, 4, 1}));
  auto x = ops::Const(root, Tensor::FromVector<double>({0, 1, 2, 5}, {1, 1, 4, 1}));
  auto g = ops::FusedBatchNormGrad(root, dy, x, ops::Const(root, Tensor::FromVector<double>({2})),
                                   ops::Const(root, Tensor::FromVector<double>({1})),
                                   ops::Const(root, Tensor::FromVector<double>({3})),
                                   {.epsilon = 1, .is_training = false});
  ClientSession session(root);
  auto out = session.Run({}, {g.x_backprop, g.scale_backprop, g.offset_backprop});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], {1, 2, 3, 4});  // 2 * rsqrt(4) = 1
  ExpectNear((*out)[1], {(-1 + 0 + 3 + 16) * 0.5});
  ExpectNear((*out)[2], {10});
}

std::string ShapeOf(const Scope& scope, const Output& o) {
  std::optional<TensorShape> s = scope.InferredShape(o);
  return s ? s->DebugString() : "?";
}

TEST(FusedBatchNormShapeTest, ShapesFromXAndTheVectors) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 8, 8, 16}});
  auto v = ops::Placeholder(root, DT_FLOAT);
  auto bn = ops::FusedBatchNorm(root, x, v, v, v, v);
  EXPECT_EQ(ShapeOf(root, bn.y), "[?,8,8,16]");
  EXPECT_EQ(ShapeOf(root, bn.batch_mean), "[16]");
  EXPECT_EQ(ShapeOf(root, bn.reserve_space_3), "[]");
  auto nchw = ops::FusedBatchNorm(root, x, v, v, v, v, {.data_format = "NCHW"});
  EXPECT_EQ(ShapeOf(root, nchw.batch_variance), "[8]");
  ASSERT_TRUE(root.ok()) << root.status();
  auto wrong = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{3}});
  ops::FusedBatchNorm(root.WithOpName("bad_bn"), x, wrong, v, v, v);
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("Dimensions must be equal, but are 16 and 3"));
}

TEST(FusedBatchNormErrorTest, BadInputsNameTheNode) {
  const Tensor empty = Tensor::FromVector<double>({}, {0});
  const Tensor two = Values({2}, 0);
  auto rank3 = RunBatchNorm(Values({2, 2, 2}, 0), two, two, empty, empty, {});
  EXPECT_TRUE(IsInvalidArgument(rank3.status()));
  EXPECT_THAT(rank3.status().message(), HasSubstr("Shape must be rank 4 but is rank 3"));

  // Placeholders: the shapes are unknown until the step, where the kernel checks them.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto scale = ops::Placeholder(root, DT_DOUBLE);
  auto bn = ops::FusedBatchNorm(root.WithOpName("bn"), x, scale, scale, scale, scale,
                                {.is_training = false});
  auto fmt = ops::FusedBatchNorm(root.WithOpName("fmt"), x, scale, scale, scale, scale,
                                 {.data_format = "NDHWC"});
  auto dy = ops::Placeholder(root, DT_DOUBLE);
  auto g = ops::FusedBatchNormGrad(root.WithOpName("g"), dy, x, scale, scale, scale);
  ClientSession session(root);
  auto wrong_c = session.Run({{x, Values({1, 2, 2, 3}, 0)}, {scale, two}}, {bn.y});
  EXPECT_TRUE(IsInvalidArgument(wrong_c.status()));
  EXPECT_THAT(wrong_c.status().message(),
              HasSubstr("node bn: scale must have the same number of elements as the channels "
                        "of x, got 2 and 3"));
  auto matrix = session.Run({{x, Values({1, 2, 2, 2}, 0)}, {scale, Values({2, 1}, 0)}}, {bn.y});
  EXPECT_THAT(matrix.status().message(), HasSubstr("node bn: scale must be 1-dimensional"));
  auto format = session.Run({{x, Values({1, 2, 2, 2}, 0)}, {scale, two}}, {fmt.y});
  EXPECT_THAT(format.status().message(), HasSubstr("node fmt: Invalid data format: NDHWC"));

  auto mismatch = session.Run(
      {{dy, Values({1, 2, 2, 2}, 0)}, {x, Values({1, 2, 3, 2}, 0)}, {scale, two}}, {g.x_backprop});
  EXPECT_TRUE(IsInvalidArgument(mismatch.status()));
  EXPECT_THAT(mismatch.status().message(),
              HasSubstr("node g: x and y_backprop must have same shape"));
}

}  // namespace
}  // namespace tw
