#include "tensorweave/tensor_shape.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

TEST(TensorShapeTest, ScalarHasRankZeroAndOneElement) {
  TensorShape s;
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_TRUE(s.IsFullyDefined());
  EXPECT_EQ(s.DebugString(), "[]");
}

TEST(TensorShapeTest, CountsElements) {
  TensorShape s({2, 3, 4});
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.dim(1), 3);
  EXPECT_EQ(s.num_elements(), 24);
  EXPECT_EQ(TensorShape({5, 0, 7}).num_elements(), 0);
  EXPECT_EQ(s.DebugString(), "[2,3,4]");
}

TEST(TensorShapeTest, UnknownDimsMakeAPartialShape) {
  auto s = TensorShape::Create({-1, 3});
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->IsFullyDefined());
  EXPECT_EQ(s->num_elements(), -1);
  EXPECT_EQ(s->DebugString(), "[?,3]");
  EXPECT_TRUE(s->IsCompatibleWith(TensorShape({8, 3})));
  EXPECT_FALSE(s->IsCompatibleWith(TensorShape({8, 4})));
  EXPECT_FALSE(s->IsCompatibleWith(TensorShape({3})));
}

TEST(TensorShapeTest, RejectsNegativeDims) {
  auto s = TensorShape::Create({2, -2});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("dimension 1 of shape [2,-2] is -2"));
}

TEST(TensorShapeTest, RejectsElementCountOverflow) {
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  auto s = TensorShape::Create({big, 3});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("more elements than fit in int64"));
  // The largest count that fits is fine.
  EXPECT_TRUE(TensorShape::Create({std::numeric_limits<int64_t>::max()}).ok());
}

TEST(TensorShapeTest, Equality) {
  EXPECT_EQ(TensorShape({2, 3}), TensorShape({2, 3}));
  EXPECT_FALSE(TensorShape({2, 3}) == TensorShape({3, 2}));
}

}  // namespace
}  // namespace tw
