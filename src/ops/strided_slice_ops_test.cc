// StridedSlice against numpy's subscripts worked by hand, its static shapes (also with
// unknown dimensions), TF's errors, and its gradient against central differences.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/graph/strided_slice_spec.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/session.h"
#include "testing/gradient_checker.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Options = ops::StridedSliceOptions;

// x = arange(24).reshape(2, 3, 4) as floats.
Tensor Cube() {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  return Tensor::FromVector<float>(v, TensorShape({2, 3, 4}));
}

StatusOr<Tensor> Slice(const Tensor& x, std::vector<int32_t> begin, std::vector<int32_t> end,
                       std::vector<int32_t> strides, const Options& options) {
  Scope root = Scope::NewRootScope();
  auto in = ops::Placeholder(root, x.dtype());
  auto out = ops::StridedSlice(root, in, Tensor::FromVector<int32_t>(begin),
                               Tensor::FromVector<int32_t>(end),
                               Tensor::FromVector<int32_t>(strides), options);
  if (!root.ok()) return root.status();
  ClientSession session(root);
  auto got = session.Run({{in, x}}, {out});
  if (!got.ok()) return got.status();
  return (*got)[0];
}

TEST(StridedSliceTest, SubscriptsAsNumpyTakesThem) {
  const Tensor x = Cube();
  // x[1] : shrink the first dimension.
  auto one = Slice(x, {1}, {2}, {1}, {.shrink_axis_mask = 1});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->shape(), TensorShape({3, 4}));
  EXPECT_EQ(one->flat<float>()[0], 12.0f);
  // x[:, -1, ::-2] : the last row of each block, every other element backwards.
  auto back = Slice(x, {0, -1, 0}, {0, 0, 0}, {1, 1, -2},
                    {.begin_mask = 0b101, .end_mask = 0b101, .shrink_axis_mask = 0b010});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, Tensor::FromVector<float>({11, 9, 23, 21}, TensorShape({2, 2})));
  // x[..., 1] : an ellipsis for the leading dimensions.
  auto column = Slice(x, {0, 1}, {0, 2}, {1, 1}, {.ellipsis_mask = 1, .shrink_axis_mask = 0b10});
  ASSERT_TRUE(column.ok()) << column.status();
  EXPECT_EQ(*column, Tensor::FromVector<float>({1, 5, 9, 13, 17, 21}, TensorShape({2, 3})));
  // x[None, 1:9, 5:1:-1] clamps past the ends: x[1, 2:1:-1, :] under a new axis.
  auto clamped = Slice(x, {0, 1, 5}, {0, 9, 1}, {1, 1, -1}, {.new_axis_mask = 1});
  ASSERT_TRUE(clamped.ok()) << clamped.status();
  EXPECT_EQ(*clamped, Tensor::FromVector<float>({20, 21, 22, 23}, TensorShape({1, 1, 1, 4})));
  // A string tensor reversed.
  auto words = Slice(Tensor::FromVector<std::string>({"a", "b", "c"}), {0}, {0}, {-1},
                     {.begin_mask = 1, .end_mask = 1});
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_EQ(*words, Tensor::FromVector<std::string>({"c", "b", "a"}));
}

TEST(StridedSliceTest, BadSubscriptsGetTfErrors) {
  auto out_of_range = Slice(Cube(), {2}, {3}, {1}, {.shrink_axis_mask = 1});
  EXPECT_TRUE(IsInvalidArgument(out_of_range.status()));
  EXPECT_THAT(std::string(out_of_range.status().message()),
              HasSubstr("slice index 2 of dimension 0 out of bounds."));
  auto zero = Slice(Cube(), {0}, {1}, {0}, {});
  EXPECT_THAT(std::string(zero.status().message()), HasSubstr("strides[0] must be non-zero"));
  auto two_ellipses = Slice(Cube(), {0, 0}, {0, 0}, {1, 1}, {.ellipsis_mask = 3});
  EXPECT_THAT(std::string(two_ellipses.status().message()),
              HasSubstr("Multiple ellipses in slice spec not allowed"));
  auto too_many = Slice(Cube(), {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}, {});
  EXPECT_THAT(std::string(too_many.status().message()),
              HasSubstr("Index out of range using input dim 3; input has only 3 dims"));
}

TEST(StridedSliceTest, StaticShapesWithUnknownDimensions) {
  auto spec = ComputeStridedSlice({-1, 3}, {0, 1}, {0, 2}, {1, 1},
                                  {.begin = 1, .end = 1, .shrink_axis = 2});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->final_shape, ElementsAre(-1));
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 3}});
  auto y = ops::StridedSlice(
      root, x, Tensor::FromVector<int32_t>({0, 1}), Tensor::FromVector<int32_t>({0, 2}),
      Tensor::FromVector<int32_t>({1, 1}), {.begin_mask = 1, .end_mask = 1, .shrink_axis_mask = 2});
  ASSERT_TRUE(root.ok()) << root.status();
  auto shape = root.InferredShape(y);
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->DebugString(), "[?]");
}

TEST(StridedSliceTest, GradientMatchesCentralDifferences) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE);
  auto y = ops::Square(
      root, ops::StridedSlice(root, x, Tensor::FromVector<int32_t>({1, -1, 0}),
                              Tensor::FromVector<int32_t>({0, 0, 4}),
                              Tensor::FromVector<int32_t>({1, -1, 2}), {.end_mask = 0b011}));
  auto error = testing::MaxGradientError(root, {x}, {testing::DistinctValues({2, 3, 4})}, y);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LT(*error, 1e-7);
}

}  // namespace
}  // namespace tw
