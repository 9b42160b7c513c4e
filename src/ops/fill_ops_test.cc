// Tests of Fill (fill_ops.cc): kernels against hand-computed values, every error
// path, and the builders.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ops/array_test_util.h"
#include "tensorweave/ops/basic_ops.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using testing::Floats;
using ::testing::HasSubstr;
using testing::I32;
using testing::I64;
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Vec;

// ---- Fill ----

NodeBuilder FillNode(DataType t, DataType index = DT_INT32) {
  return NodeBuilder("f", "Fill").Attr("T", t).Attr("index_type", index).NumInputs(2);
}

TEST(FillOpTest, FillsEveryElement) {
  auto out = RunOne(FillNode(DT_FLOAT), {I32({2, 3}), Tensor::Scalar<float>(1.5f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f}, {2, 3}));
}

TEST(FillOpTest, StringsBoolsInt64DimsScalarsAndEmpty) {
  auto out = RunOne(FillNode(DT_STRING, DT_INT64), {I64({2}), Tensor::Scalar<std::string>("x")});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<std::string>({"x", "x"}));
  out = RunOne(FillNode(DT_BOOL), {I32({1, 2}), Tensor::Scalar<bool>(true)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<bool>({true, true}, {1, 2}));
  out = RunOne(FillNode(DT_INT32), {I32({}), Tensor::Scalar<int32_t>(4)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::Scalar<int32_t>(4));
  out = RunOne(FillNode(DT_DOUBLE), {I32({0, 5}), Tensor::Scalar<double>(2)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 5}));
}

TEST(FillOpTest, BadArgumentsAreInvalidArguments) {
  auto out = RunOne(FillNode(DT_FLOAT), {Tensor::Scalar<int32_t>(2), Tensor::Scalar<float>(1)});
  EXPECT_EQ(Message(out), "node f: Fill dims must be 1-D, got shape []");
  out = RunOne(FillNode(DT_FLOAT), {I32({2}), Vec<float>({1})});
  EXPECT_EQ(Message(out), "node f: Fill value must be a scalar, got shape [1]");
  out = RunOne(FillNode(DT_FLOAT), {I32({2, -1}), Tensor::Scalar<float>(1)});
  EXPECT_EQ(Message(out), "node f: Fill dims [2,-1] has negative dimension -1 at 1");
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  out = RunOne(FillNode(DT_FLOAT, DT_INT64),
               {I64({int64_t{1} << 40, int64_t{1} << 40}), Tensor::Scalar<float>(1)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(Message(out), HasSubstr("node f: Fill: "));
}

TEST(FillOpTest, RejectsTypesOutsideTheDefinition) {
  auto out = RunOne(FillNode(DT_RESOURCE), {I32({1}), Tensor::Scalar<ResourceHandle>({})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

}  // namespace
}  // namespace tw
