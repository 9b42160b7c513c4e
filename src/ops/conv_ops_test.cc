// Conv2D and its gradient ops against hand-computed values and a direct loop written here
// (every stride, dilation and padding), the gradients against central differences, and
// every error with TF's words.
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/nn_ops.h"
#include "tensorweave/session.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// Distinct values in [-1, 1), deterministic.
Tensor Values(const TensorShape& shape, double phase) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + phase);
  return Tensor::FromVector<double>(v, shape);
}

// The convolution by its definition: out[n, i, j, o] = sum over the taps inside the image
// of x[n, i*s - top + a*d, j*s - left + b*d, c] * f[a, b, c, o].
Tensor DirectConv(const Tensor& x, const Tensor& f, int64_t stride, int64_t dilation, int64_t top,
                  int64_t left, int64_t out_h, int64_t out_w) {
  const int64_t n_ = x.dim(0), h = x.dim(1), w = x.dim(2), c_ = x.dim(3);
  const int64_t kh = f.dim(0), kw = f.dim(1), o_ = f.dim(3);
  std::vector<double> out(static_cast<size_t>(n_ * out_h * out_w * o_), 0.0);
  auto xv = x.flat<double>();
  auto fv = f.flat<double>();
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t i = 0; i < out_h; ++i)
      for (int64_t j = 0; j < out_w; ++j)
        for (int64_t o = 0; o < o_; ++o) {
          double sum = 0;
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kw; ++b) {
              const int64_t r = i * stride - top + a * dilation;
              const int64_t col = j * stride - left + b * dilation;
              if (r < 0 || r >= h || col < 0 || col >= w) continue;
              for (int64_t c = 0; c < c_; ++c) {
                sum += xv[((n * h + r) * w + col) * c_ + c] * fv[((a * kw + b) * c_ + c) * o_ + o];
              }
            }
          out[static_cast<size_t>(((n * out_h + i) * out_w + j) * o_ + o)] = sum;
        }
  return Tensor::FromVector<double>(out, {n_, out_h, out_w, o_});
}

StatusOr<Tensor> RunConv(const Tensor& x, const Tensor& f, const ops::Conv2DOptions& options) {
  Scope root = Scope::NewRootScope();
  auto y = ops::Conv2D(root, ops::Const(root, x), ops::Const(root, f), options);
  TW_RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, session.Run({}, {y}));
  return out[0];
}

void ExpectNear(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    EXPECT_NEAR(got.flat<double>()[i], want.flat<double>()[i], 1e-12) << "element " << i;
  }
}

TEST(Conv2DTest, HandComputedValidWindow) {
  Scope root = Scope::NewRootScope();
  auto x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  auto f = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2, 1, 1});
  auto y = ops::Conv2D(root, ops::Const(root, x), ops::Const(root, f));
  ClientSession session(root);
  auto out = session.Run({}, {y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({37, 47, 67, 77}, {1, 2, 2, 1}));
}

struct ConvCase {
  const char* name;
  int64_t h, w, kh, kw, stride, dilation;
  const char* padding;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
};

class Conv2DAgainstDefinitionTest : public ::testing::TestWithParam<ConvCase> {};

// The case's options, and the padding at its output's top and left and its output's size.
struct Window {
  ops::Conv2DOptions options;
  int64_t top = 0, left = 0, out_h = 0, out_w = 0;
};

Window WindowOf(const ConvCase& c) {
  Window w;
  w.options = {.strides = {1, c.stride, c.stride, 1},
               .padding = c.padding,
               .dilations = {1, c.dilation, c.dilation, 1}};
  const int64_t eff_h = (c.kh - 1) * c.dilation + 1, eff_w = (c.kw - 1) * c.dilation + 1;
  if (std::string(c.padding) == "VALID") {
    w.out_h = (c.h - eff_h) / c.stride + 1;
    w.out_w = (c.w - eff_w) / c.stride + 1;
  } else if (std::string(c.padding) == "SAME") {
    w.out_h = (c.h + c.stride - 1) / c.stride;
    w.out_w = (c.w + c.stride - 1) / c.stride;
    w.top = std::max<int64_t>(0, (w.out_h - 1) * c.stride + eff_h - c.h) / 2;
    w.left = std::max<int64_t>(0, (w.out_w - 1) * c.stride + eff_w - c.w) / 2;
  } else {
    w.options.explicit_paddings = {0, 0, c.pad_top, c.pad_bottom, c.pad_left, c.pad_right, 0, 0};
    w.out_h = (c.h + c.pad_top + c.pad_bottom - eff_h) / c.stride + 1;
    w.out_w = (c.w + c.pad_left + c.pad_right - eff_w) / c.stride + 1;
    w.top = c.pad_top;
    w.left = c.pad_left;
  }
  return w;
}

TEST_P(Conv2DAgainstDefinitionTest, MatchesTheDirectLoop) {
  const ConvCase& c = GetParam();
  const Tensor x = Values({2, c.h, c.w, 3}, 0.1);
  const Tensor f = Values({c.kh, c.kw, 3, 4}, 0.7);
  const Window w = WindowOf(c);
  auto y = RunConv(x, f, w.options);
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, DirectConv(x, f, c.stride, c.dilation, w.top, w.left, w.out_h, w.out_w));
}

const ConvCase kWindowCases[] = {
    {"valid", 5, 6, 3, 2, 1, 1, "VALID"},
    {"valid_stride2", 7, 7, 3, 3, 2, 1, "VALID"},
    {"same", 5, 6, 3, 3, 1, 1, "SAME"},
    {"same_stride2_even", 6, 8, 3, 3, 2, 1, "SAME"},
    {"same_stride3", 7, 5, 2, 2, 3, 1, "SAME"},
    {"dilated_valid", 9, 9, 3, 3, 1, 2, "VALID"},
    {"dilated_same", 8, 7, 3, 2, 1, 3, "SAME"},
    {"explicit", 5, 5, 3, 3, 2, 1, "EXPLICIT", 1, 2, 0, 3},
    {"one_by_one", 4, 4, 1, 1, 1, 1, "VALID"},
};

INSTANTIATE_TEST_SUITE_P(Windows, Conv2DAgainstDefinitionTest, ::testing::ValuesIn(kWindowCases),
                         [](const ::testing::TestParamInfo<ConvCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

// Float convolutions run on oneDNN's kernels, or on im2col's for what oneDNN declines (one
// input channel's input gradient, a failed call); doubles always on im2col's, checked above
// against the definition and below against central differences. So the float ops must give
// the double ops' results: the forward pass and both gradients, every window, with one
// input channel and with many, on one thread and split across four.
struct FloatCase {
  ConvCase window;
  int64_t batch, in_c, out_c;
};

class Conv2DFloatTest : public ::testing::TestWithParam<std::tuple<FloatCase, int>> {};

Tensor ToFloat(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(t.flat<double>()[i]);
  return Tensor::FromVector<float>(v, t.shape());
}

// y, input gradient and filter gradient of the case, computed in x's type.
StatusOr<std::vector<Tensor>> ConvAndGradients(const Tensor& x, const Tensor& f, const Tensor& dy,
                                               const ops::Conv2DOptions& options, int threads) {
  Scope root = Scope::NewRootScope();
  auto xc = ops::Const(root, x);
  auto fc = ops::Const(root, f);
  auto dyc = ops::Const(root, dy);
  auto y = ops::Conv2D(root, xc, fc, options);
  auto dx = ops::Conv2DBackpropInput(root, ops::Shape(root, xc), fc, dyc, options);
  auto df = ops::Conv2DBackpropFilter(root, xc, ops::Shape(root, fc), dyc, options);
  TW_RETURN_IF_ERROR(root.status());
  ClientSession session(root, {.num_threads = threads});
  return session.Run({}, {y, dx, df});
}

TEST_P(Conv2DFloatTest, GivesTheDoubleKernelsResults) {
  const auto& [c, threads] = GetParam();
  const Window w = WindowOf(c.window);
  const Tensor x = Values({c.batch, c.window.h, c.window.w, c.in_c}, 0.1);
  const Tensor f = Values({c.window.kh, c.window.kw, c.in_c, c.out_c}, 0.7);
  const Tensor dy = Values({c.batch, w.out_h, w.out_w, c.out_c}, 2.3);
  auto want = ConvAndGradients(x, f, dy, w.options, threads);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = ConvAndGradients(ToFloat(x), ToFloat(f), ToFloat(dy), w.options, threads);
  ASSERT_TRUE(got.ok()) << got.status();
  const char* names[] = {"output", "input gradient", "filter gradient"};
  for (size_t out = 0; out < 3; ++out) {
    ASSERT_EQ((*got)[out].shape(), (*want)[out].shape()) << names[out];
    for (int64_t i = 0; i < (*got)[out].num_elements(); ++i) {
      const double expected = (*want)[out].flat<double>()[i];
      ASSERT_NEAR((*got)[out].flat<float>()[i], expected, 1e-4 * std::max(1.0, std::abs(expected)))
          << names[out] << " element " << i;
    }
  }
}

std::vector<FloatCase> FloatCases() {
  std::vector<FloatCase> cases;
  for (const ConvCase& window : kWindowCases) {
    cases.push_back({window, 2, 1, 4});   // one input channel, as an image model's first layer
    cases.push_back({window, 3, 16, 8});  // many: oneDNN's blocked kernels all through
  }
  // Big enough that every kernel splits its images across threads.
  cases.push_back({{"split", 12, 12, 3, 3, 1, 1, "SAME"}, 8, 16, 32});
  return cases;
}

std::string FloatCaseName(const ::testing::TestParamInfo<std::tuple<FloatCase, int>>& info) {
  const FloatCase& c = std::get<0>(info.param);
  return std::string(c.window.name) + "_in" + std::to_string(c.in_c) + "_threads" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Windows, Conv2DFloatTest,
                         ::testing::Combine(::testing::ValuesIn(FloatCases()),
                                            ::testing::Values(1, 4)),
                         FloatCaseName);

TEST(Conv2DTest, LargeImagesAreComputedInBlocksWithTheSameResult) {
  // 1 x 70 x 70 x 16 with a 5x5 filter: 400-element patches over 4900 pixels, more than
  // one block of the kernel's patch matrix.
  const Tensor x = Values({1, 70, 70, 16}, 0.3);
  const Tensor f = Values({5, 5, 16, 2}, 0.9);
  auto y = RunConv(x, f, {.padding = "SAME"});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, DirectConv(x, f, 1, 1, 2, 2, 70, 70));
}

// A convolution big enough that the kernels split it across threads (several shards of
// pixels, of images, and of filter-gradient partial sums): the forward pass matches the
// direct loop, and both gradients match a one-thread session's (which runs unsplit).
TEST(Conv2DTest, KernelsSplitAcrossThreadsGiveTheOneThreadResults) {
  const Tensor x = Values({8, 12, 12, 16}, 0.4);
  const Tensor f = Values({3, 3, 16, 32}, 1.1);
  const Tensor dy = Values({8, 12, 12, 32}, 2.3);
  auto split = ConvAndGradients(x, f, dy, {.padding = "SAME"}, /*threads=*/4);
  ASSERT_TRUE(split.ok()) << split.status();
  auto whole = ConvAndGradients(x, f, dy, {.padding = "SAME"}, /*threads=*/1);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ExpectNear((*split)[0], DirectConv(x, f, 1, 1, 1, 1, 12, 12));
  for (int out = 1; out < 3; ++out) {
    ASSERT_EQ((*split)[out].shape(), (*whole)[out].shape());
    for (int64_t i = 0; i < (*split)[out].num_elements(); ++i) {
      ASSERT_NEAR((*split)[out].flat<double>()[i], (*whole)[out].flat<double>()[i], 1e-9)
          << "output " << out << " element " << i;
    }
  }
}

}  // namespace
}  // namespace tw

// libgomp's, the OpenMP runtime oneDNN runs on (see src/ops/onednn_conv.cc).
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int threads);

namespace tw {
namespace {

// oneDNN runs each call on one OpenMP thread; the calling thread, which may be a program's
// own and run another OpenMP library too, gets its setting back. A one-thread session runs
// the kernels here, on the test's thread.
TEST(Conv2DTest, LeavesTheCallingThreadsOpenMpSettingAsItWas) {
  omp_set_num_threads(3);
  const Tensor x = ToFloat(Values({4, 10, 10, 16}, 0.2));
  const Tensor f = ToFloat(Values({3, 3, 16, 16}, 0.5));
  const Tensor dy = ToFloat(Values({4, 10, 10, 16}, 0.8));
  auto out = ConvAndGradients(x, f, dy, {.padding = "SAME"}, /*threads=*/1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(omp_get_max_threads(), 3);
}

void ExpectConvGradients(const ops::Conv2DOptions& options, const TensorShape& x_shape,
                         const TensorShape& f_shape) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto f = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::Conv2D(root, x, f, options);
  auto error =
      testing::MaxGradientError(root, {x, f}, {Values(x_shape, 0.2), Values(f_shape, 1.3)}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-8);
}

TEST(Conv2DGradientTest, MatchesCentralDifferences) {
  ExpectConvGradients({.padding = "VALID"}, {2, 4, 5, 2}, {2, 3, 2, 3});
  ExpectConvGradients({.strides = {1, 2, 2, 1}, .padding = "SAME"}, {1, 5, 6, 2}, {3, 3, 2, 2});
  ExpectConvGradients({.padding = "SAME", .dilations = {1, 2, 2, 1}}, {1, 6, 5, 1}, {2, 2, 1, 2});
  ExpectConvGradients({.strides = {1, 2, 1, 1},
                       .padding = "EXPLICIT",
                       .explicit_paddings = {0, 0, 1, 0, 2, 1, 0, 0}},
                      {1, 5, 4, 2}, {3, 2, 2, 1});
}

TEST(Conv2DGradientTest, TheTransposedConvolutionHasGradientsToo) {
  // Conv2DBackpropInput as a layer (Conv2DTranspose): gradients for its filter and input.
  Scope root = Scope::NewRootScope();
  auto f = ops::Placeholder(root, DT_DOUBLE);
  auto dy = ops::Placeholder(root, DT_DOUBLE);
  auto sizes = ops::Const(root, Tensor::FromVector<int32_t>({1, 5, 5, 2}));
  auto y =
      ops::Conv2DBackpropInput(root, sizes, f, dy, {.strides = {1, 2, 2, 1}, .padding = "SAME"});
  auto error = testing::MaxGradientError(root, {f, dy},
                                         {Values({3, 3, 2, 3}, 0.4), Values({1, 3, 3, 3}, 1.1)}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-8);
}

TEST(Conv2DErrorTest, TensorFlowsMessages) {
  const Tensor x = Values({1, 4, 4, 2}, 0);
  auto nchw = RunConv(x, Values({2, 2, 2, 1}, 0), {.data_format = "NCHW"});
  EXPECT_THAT(nchw.status().message(),
              HasSubstr("Generic conv implementation only supports NHWC tensor format"));
  auto depth = RunConv(x, Values({2, 2, 3, 1}, 0), {});
  EXPECT_TRUE(IsInvalidArgument(depth.status()));
  EXPECT_THAT(depth.status().message(),
              HasSubstr("Depth of input (2) is not a multiple of input depth of filter (3)"));
  // As TF: a window one larger than the input gives an empty output, two larger an error.
  auto empty = RunConv(x, Values({5, 2, 2, 1}, 0), {});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({1, 0, 3, 1}));
  auto too_big = RunConv(x, Values({6, 2, 2, 1}, 0), {});
  EXPECT_THAT(too_big.status().message(), HasSubstr("Computed output size would be negative"));
  auto batch_stride = RunConv(x, Values({2, 2, 2, 1}, 0), {.strides = {2, 1, 1, 1}});
  EXPECT_THAT(batch_stride.status().message(),
              HasSubstr("does not yet support strides in the batch and depth dimensions"));
  auto three_strides = RunConv(x, Values({2, 2, 2, 1}, 0), {.strides = {1, 1, 1}});
  EXPECT_THAT(three_strides.status().message(),
              HasSubstr("Sliding window strides field must specify 4 dimensions"));
  auto padding = RunConv(x, Values({2, 2, 2, 1}, 0), {.padding = "FULL"});
  EXPECT_THAT(padding.status().message(), HasSubstr("padding must be SAME or VALID or EXPLICIT"));
  auto explicit_short =
      RunConv(x, Values({2, 2, 2, 1}, 0), {.padding = "EXPLICIT", .explicit_paddings = {1, 1}});
  EXPECT_THAT(explicit_short.status().message(),
              HasSubstr("explicit_paddings attribute must contain 8 values"));
  auto rank3 = RunConv(Values({4, 4, 2}, 0), Values({2, 2, 2, 1}, 0), {});
  EXPECT_THAT(rank3.status().message(), HasSubstr("Shape must be rank 4 but is rank 3"));
}

TEST(Conv2DErrorTest, BackpropOpsCheckTheirGradientsShape) {
  Scope root = Scope::NewRootScope();
  auto sizes = ops::Const(root, Tensor::FromVector<int32_t>({1, 4, 4, 1}));
  auto f = ops::Const(root, Values({2, 2, 1, 1}, 0));
  auto bad_dy = ops::Placeholder(root, DT_DOUBLE);
  auto dx = ops::Conv2DBackpropInput(root, sizes, f, bad_dy);
  ClientSession session(root);
  auto out = session.Run({{bad_dy, Values({1, 2, 2, 1}, 0)}}, {dx});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(out.status().message(), HasSubstr("out_backprop has shape [1,2,2,1], but the "
                                                "convolution's output is [1,3,3,1]"));
}

std::string ShapeOf(const Scope& scope, const Output& o) {
  std::optional<TensorShape> s = scope.InferredShape(o);
  return s ? s->DebugString() : "?";
}

TEST(WindowShapeFnsTest, OutputSizesFromTheGeometryAndUnknownBatches) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 28, 28, 1}});
  auto f = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{5, 5, 1, 32}});
  auto same = ops::Conv2D(root, x, f, {.strides = {1, 2, 2, 1}, .padding = "SAME"});
  EXPECT_EQ(ShapeOf(root, same), "[?,14,14,32]");
  EXPECT_EQ(ShapeOf(root, ops::Conv2D(root, x, f)), "[?,24,24,32]");
  EXPECT_EQ(ShapeOf(root, ops::MaxPool(root, same)), "[?,7,7,32]");
  EXPECT_EQ(ShapeOf(root, ops::AvgPool(
                              root, same,
                              {.ksize = {1, 3, 3, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"})),
            "[?,7,7,32]");
  auto any_filter = ops::Placeholder(root, DT_FLOAT);
  EXPECT_EQ(ShapeOf(root, ops::Conv2D(root, x, any_filter)), "[?,?,?,?]");
  ASSERT_TRUE(root.ok()) << root.status();
  auto wrong_depth = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{5, 5, 3, 8}});
  ops::Conv2D(root.WithOpName("conv"), x, wrong_depth);
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("Depth of input (1) is not a multiple of input depth of filter (3)"));
}

}  // namespace
}  // namespace tw
