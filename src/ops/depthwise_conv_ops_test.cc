// DepthwiseConv2dNative against a direct loop written here (strides, dilations, SAME and
// VALID, channel multipliers 1 and 3), its gradients against central differences, the
// shape function and the errors.
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

Tensor Values(const TensorShape& shape, double phase) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + phase);
  return Tensor::FromVector<double>(v, shape);
}

// out[n, i, j, c * M + m] = sum over the taps inside the image of
// x[n, i*s - top + a*d, j*s - left + b*d, c] * f[a, b, c, m].
Tensor DirectDepthwise(const Tensor& x, const Tensor& f, int64_t stride, int64_t dilation,
                       int64_t top, int64_t left, int64_t out_h, int64_t out_w) {
  const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
  const int64_t KH = f.dim(0), KW = f.dim(1), M = f.dim(3);
  std::vector<double> out(static_cast<size_t>(N * out_h * out_w * C * M), 0.0);
  auto xv = x.flat<double>();
  auto fv = f.flat<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < out_h; ++i)
      for (int64_t j = 0; j < out_w; ++j)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t m = 0; m < M; ++m) {
            double sum = 0;
            for (int64_t a = 0; a < KH; ++a)
              for (int64_t b = 0; b < KW; ++b) {
                const int64_t r = i * stride - top + a * dilation;
                const int64_t col = j * stride - left + b * dilation;
                if (r < 0 || r >= H || col < 0 || col >= W) continue;
                sum += xv[((n * H + r) * W + col) * C + c] * fv[((a * KW + b) * C + c) * M + m];
              }
            out[static_cast<size_t>(((n * out_h + i) * out_w + j) * C * M + c * M + m)] = sum;
          }
  return Tensor::FromVector<double>(out, {N, out_h, out_w, C * M});
}

StatusOr<Tensor> RunDepthwise(const Tensor& x, const Tensor& f,
                              const ops::DepthwiseConv2dOptions& options) {
  Scope root = Scope::NewRootScope();
  auto y = ops::DepthwiseConv2dNative(root.WithOpName("dw"), ops::Const(root, x),
                                      ops::Const(root, f), options);
  TW_RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, session.Run({}, {y}));
  return out[0];
}

TEST(DepthwiseConv2dTest, HandComputed) {
  // Two channels, a 2x2 filter per channel, multiplier 1.
  auto x = Tensor::FromVector<float>({1, 10, 2, 20, 3, 30, 4, 40}, {1, 2, 2, 2});
  auto f = Tensor::FromVector<float>({1, 0, 2, 1, 3, 0, 4, 2}, {2, 2, 2, 1});
  Scope root = Scope::NewRootScope();
  auto y = ops::DepthwiseConv2dNative(root, ops::Const(root, x), ops::Const(root, f));
  ClientSession session(root);
  auto out = session.Run({}, {y});
  ASSERT_TRUE(out.ok()) << out.status();
  // Channel 0: 1*1 + 2*2 + 3*3 + 4*4 = 30; channel 1: 10*0 + 20*1 + 30*0 + 40*2 = 100.
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({30, 100}, {1, 1, 1, 2}));
}

struct DwCase {
  const char* name;
  int64_t h, w, kh, kw, stride, dilation, mult;
  const char* padding;
};

class DepthwiseAgainstDefinitionTest : public ::testing::TestWithParam<DwCase> {};

TEST_P(DepthwiseAgainstDefinitionTest, MatchesTheDirectLoop) {
  const DwCase& c = GetParam();
  const Tensor x = Values({2, c.h, c.w, 3}, 0.1);
  const Tensor f = Values({c.kh, c.kw, 3, c.mult}, 0.7);
  const int64_t eff_h = (c.kh - 1) * c.dilation + 1, eff_w = (c.kw - 1) * c.dilation + 1;
  int64_t out_h, out_w, top = 0, left = 0;
  if (std::string(c.padding) == "VALID") {
    out_h = (c.h - eff_h) / c.stride + 1;
    out_w = (c.w - eff_w) / c.stride + 1;
  } else {
    out_h = (c.h + c.stride - 1) / c.stride;
    out_w = (c.w + c.stride - 1) / c.stride;
    top = std::max<int64_t>(0, (out_h - 1) * c.stride + eff_h - c.h) / 2;
    left = std::max<int64_t>(0, (out_w - 1) * c.stride + eff_w - c.w) / 2;
  }
  auto y = RunDepthwise(x, f,
                        {.strides = {1, c.stride, c.stride, 1},
                         .padding = c.padding,
                         .dilations = {1, c.dilation, c.dilation, 1}});
  ASSERT_TRUE(y.ok()) << y.status();
  const Tensor want = DirectDepthwise(x, f, c.stride, c.dilation, top, left, out_h, out_w);
  ASSERT_EQ(y->shape(), want.shape());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    EXPECT_NEAR(y->flat<double>()[i], want.flat<double>()[i], 1e-12) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Windows, DepthwiseAgainstDefinitionTest,
                         ::testing::Values(DwCase{"valid", 5, 6, 3, 2, 1, 1, 1, "VALID"},
                                           DwCase{"valid_mult3", 5, 5, 3, 3, 1, 1, 3, "VALID"},
                                           DwCase{"same_stride2", 6, 7, 3, 3, 2, 1, 2, "SAME"},
                                           DwCase{"dilated_same", 7, 6, 2, 3, 1, 2, 1, "SAME"},
                                           DwCase{"one_by_one", 3, 4, 1, 1, 1, 1, 2, "VALID"}),
                         [](const ::testing::TestParamInfo<DwCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

void ExpectDepthwiseGradients(const ops::DepthwiseConv2dOptions& options,
                              const TensorShape& x_shape, const TensorShape& f_shape) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto f = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::DepthwiseConv2dNative(root, x, f, options);
  auto error =
      testing::MaxGradientError(root, {x, f}, {Values(x_shape, 0.2), Values(f_shape, 1.3)}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-8);
}

TEST(DepthwiseConv2dGradientTest, MatchesCentralDifferences) {
  ExpectDepthwiseGradients({.padding = "VALID"}, {2, 4, 4, 2}, {2, 2, 2, 1});
  ExpectDepthwiseGradients({.strides = {1, 2, 2, 1}, .padding = "SAME"}, {1, 5, 4, 2},
                           {3, 3, 2, 2});
  ExpectDepthwiseGradients({.padding = "SAME", .dilations = {1, 2, 2, 1}}, {1, 5, 5, 1},
                           {2, 2, 1, 3});
}

std::string ShapeOf(const Scope& scope, const Output& o) {
  std::optional<TensorShape> s = scope.InferredShape(o);
  return s ? s->DebugString() : "?";
}

TEST(DepthwiseConv2dErrorTest, ShapesAndErrors) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 28, 28, 3}});
  auto f = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{5, 5, 3, 4}});
  EXPECT_EQ(ShapeOf(root, ops::DepthwiseConv2dNative(root, x, f,
                                                     {.strides = {1, 2, 2, 1}, .padding = "SAME"})),
            "[?,14,14,12]");
  ASSERT_TRUE(root.ok()) << root.status();
  auto wrong = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{5, 5, 2, 1}});
  ops::DepthwiseConv2dNative(root.WithOpName("bad"), x, wrong);
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("Dimensions must be equal, but are 3 and 2"));

  // Checked when the step runs too, naming the node.
  Scope run = Scope::NewRootScope();
  auto px = ops::Placeholder(run, DT_DOUBLE);
  auto pf = ops::Placeholder(run, DT_DOUBLE);
  auto dw = ops::DepthwiseConv2dNative(run.WithOpName("dw"), px, pf);
  auto nchw = ops::DepthwiseConv2dNative(run.WithOpName("nchw"), px, pf, {.data_format = "NCHW"});
  ClientSession session(run);
  auto depth = session.Run({{px, Values({1, 4, 4, 2}, 0)}, {pf, Values({2, 2, 3, 1}, 0)}}, {dw});
  EXPECT_TRUE(IsInvalidArgument(depth.status()));
  EXPECT_THAT(depth.status().message(),
              HasSubstr("node dw: input and filter must have the same depth: 2 vs 3"));
  auto format = session.Run({{px, Values({1, 4, 4, 2}, 0)}, {pf, Values({2, 2, 2, 1}, 0)}}, {nchw});
  EXPECT_THAT(format.status().message(), HasSubstr("only supports NHWC"));
  auto big = session.Run({{px, Values({1, 4, 4, 2}, 0)}, {pf, Values({6, 2, 2, 1}, 0)}}, {dw});
  EXPECT_THAT(big.status().message(), HasSubstr("Computed output size would be negative"));
}

}  // namespace
}  // namespace tw
