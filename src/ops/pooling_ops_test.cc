// MaxPool and AvgPool and their gradients: hand-computed values (SAME padding never wins a
// max and is not counted in an average), gradients against central differences, errors.
#include <cmath>
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

StatusOr<Tensor> RunPool(bool max, const Tensor& x, const ops::PoolOptions& options) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, x);
  auto y = max ? ops::MaxPool(root, c, options) : ops::AvgPool(root, c, options);
  TW_RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, session.Run({}, {y}));
  return out[0];
}

// A 1 x 3 x 3 x 1 image of -1 ... -9: every value negative, so a zero of padding would win
// a max if it took part.
Tensor Negative3x3() {
  return Tensor::FromVector<float>({-1, -2, -3, -4, -5, -6, -7, -8, -9}, {1, 3, 3, 1});
}

TEST(MaxPoolTest, ValidAndSameWindows) {
  auto valid = RunPool(true, Negative3x3(), {.ksize = {1, 2, 2, 1}, .strides = {1, 1, 1, 1}});
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(*valid, Tensor::FromVector<float>({-1, -2, -4, -5}, {1, 2, 2, 1}));
  // SAME, stride 2: windows at rows/cols {0,1} and {2}; the padding is not a candidate.
  auto same = RunPool(true, Negative3x3(),
                      {.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, Tensor::FromVector<float>({-1, -3, -7, -9}, {1, 2, 2, 1}));
}

TEST(AvgPoolTest, SamePaddingIsNotCounted) {
  auto same = RunPool(false, Negative3x3(),
                      {.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"});
  ASSERT_TRUE(same.ok()) << same.status();
  // Windows {1,2,4,5}, {3,6}, {7,8}, {9}.
  EXPECT_EQ(*same, Tensor::FromVector<float>({-3, -4.5f, -7.5f, -9}, {1, 2, 2, 1}));
}

TEST(PoolTest, ChannelsArePooledSeparately) {
  auto x = Tensor::FromVector<double>({1, 10, 2, 20, 3, 30, 4, 40}, {1, 2, 2, 2});
  auto mx = RunPool(true, x, {});
  ASSERT_TRUE(mx.ok()) << mx.status();
  EXPECT_EQ(*mx, Tensor::FromVector<double>({4, 40}, {1, 1, 1, 2}));
  auto avg = RunPool(false, x, {});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ(*avg, Tensor::FromVector<double>({2.5, 25}, {1, 1, 1, 2}));
}

TEST(PoolGradientTest, MaxPoolRoutesToTheFirstMaximum) {
  Scope root = Scope::NewRootScope();
  // Two equal maxima in the window: the first (row-major) takes the gradient.
  auto x = ops::Const(root, Tensor::FromVector<float>({5, 5, 1, 2}, {1, 2, 2, 1}));
  auto y = ops::MaxPool(root, x);
  auto dx =
      ops::MaxPoolGrad(root, x, y, ops::Const(root, Tensor::FromVector<float>({3}, {1, 1, 1, 1})));
  ClientSession session(root);
  auto out = session.Run({}, {dx});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({3, 0, 0, 0}, {1, 2, 2, 1}));
}

TEST(PoolGradientTest, MaxPoolRoutesOnlyWhereTheWindowsMaxIs) {
  // Overlapping 2x2 windows (stride 1) over [[1, 7, 7], [2, 3, 7]]: both windows' max is
  // 7, and in both the first 7 (row-major) takes the gradient, so it gets both.
  Scope root = Scope::NewRootScope();
  const ops::PoolOptions options{.ksize = {1, 2, 2, 1}, .strides = {1, 1, 1, 1}};
  auto x = ops::Const(root, Tensor::FromVector<float>({1, 7, 7, 2, 3, 7}, {1, 2, 3, 1}));
  auto dy = ops::Const(root, Tensor::FromVector<float>({10, 100}, {1, 1, 2, 1}));
  auto dx = ops::MaxPoolGrad(root, x, ops::MaxPool(root, x, options), dy, options);
  // A NaN max (as orig_output says) is matched by the window's first NaN.
  auto nan_x = ops::Const(root, Tensor::FromVector<float>({1, 7, 7, 2, 3, NAN}, {1, 2, 3, 1}));
  auto nan_max = ops::Const(root, Tensor::FromVector<float>({7, NAN}, {1, 1, 2, 1}));
  auto nan_dx = ops::MaxPoolGrad(root, nan_x, nan_max, dy, options);
  ClientSession session(root);
  auto out = session.Run({}, {dx, nan_dx});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({0, 110, 0, 0, 0, 0}, {1, 2, 3, 1}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({0, 10, 0, 0, 0, 100}, {1, 2, 3, 1}));
}

// Pools big enough that the kernels split their images across threads give the results of
// a one-thread session (which runs them unsplit).
TEST(PoolTest, KernelsSplitAcrossThreadsGiveTheOneThreadResults) {
  const Tensor x = testing::DistinctValues({64, 32, 32, 32});
  auto run = [&](int threads) -> StatusOr<std::vector<Tensor>> {
    Scope root = Scope::NewRootScope();
    const ops::PoolOptions options{
        .ksize = {1, 3, 3, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
    auto xc = ops::Const(root, x);
    auto mx = ops::MaxPool(root, xc, options);
    auto avg = ops::AvgPool(root, xc, options);
    auto dmx = ops::MaxPoolGrad(root, xc, mx, mx, options);
    auto davg = ops::AvgPoolGrad(root, ops::Shape(root, xc), avg, options);
    TW_RETURN_IF_ERROR(root.status());
    ClientSession session(root, {.num_threads = threads});
    return session.Run({}, {mx, avg, dmx, davg});
  };
  auto split = run(4);
  ASSERT_TRUE(split.ok()) << split.status();
  auto whole = run(1);
  ASSERT_TRUE(whole.ok()) << whole.status();
  for (size_t i = 0; i < split->size(); ++i) EXPECT_EQ((*split)[i], (*whole)[i]) << "output " << i;
}

void ExpectPoolGradient(bool max, const ops::PoolOptions& options, const TensorShape& shape) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto y = max ? ops::MaxPool(root, x, options) : ops::AvgPool(root, x, options);
  // Distinct values (no ties, so the max's gradient is defined everywhere).
  auto error = testing::MaxGradientError(root, {x}, {testing::DistinctValues(shape)}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-8);
}

TEST(PoolGradientTest, MatchCentralDifferences) {
  for (bool max : {true, false}) {
    SCOPED_TRACE(max ? "MaxPool" : "AvgPool");
    ExpectPoolGradient(max, {}, {2, 4, 4, 3});
    ExpectPoolGradient(max, {.ksize = {1, 3, 3, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"},
                       {1, 5, 6, 2});
    ExpectPoolGradient(max, {.ksize = {1, 3, 2, 1}, .strides = {1, 1, 1, 1}, .padding = "VALID"},
                       {1, 4, 3, 1});
  }
}

TEST(PoolErrorTest, TensorFlowsMessages) {
  const Tensor x = Negative3x3();
  auto nchw = RunPool(true, x, {.data_format = "NCHW"});
  EXPECT_THAT(nchw.status().message(), HasSubstr("only supports NHWC on device type CPU"));
  auto depth = RunPool(true, x, {.ksize = {1, 2, 2, 2}});
  EXPECT_TRUE(absl::IsUnimplemented(depth.status())) << depth.status();
  auto ksize = RunPool(false, x, {.ksize = {2, 2}});
  EXPECT_TRUE(IsInvalidArgument(ksize.status())) << ksize.status();
  EXPECT_THAT(ksize.status().message(), HasSubstr("ksize"));
  auto explicit_padding = RunPool(true, x, {.padding = "EXPLICIT"});
  EXPECT_THAT(explicit_padding.status().message(), HasSubstr("padding must be SAME or VALID,"));
  auto too_big = RunPool(true, x, {.ksize = {1, 5, 1, 1}, .strides = {1, 1, 1, 1}});
  EXPECT_THAT(too_big.status().message(), HasSubstr("Computed output size would be negative"));
}

}  // namespace
}  // namespace tw
