// Tests of Gather and UnsortedSegmentSum (gather_scatter_ops.cc): kernels against hand-computed
// values, every error path, and the builders.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ops/array_test_util.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using testing::Floats;
using ::testing::HasSubstr;
using testing::I32;
using testing::I64;
using testing::Iota;
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Vec;

// ---- Gather ----

NodeBuilder GatherNode(DataType params, DataType indices = DT_INT32) {
  return NodeBuilder("g", "Gather").Attr("Tparams", params).Attr("Tindices", indices).NumInputs(2);
}

TEST(GatherOpTest, RowsOfAMatrix) {
  auto out = RunOne(GatherNode(DT_FLOAT), {Iota({3, 2}), I32({2, 0, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({4, 5, 0, 1, 4, 5}, {3, 2}));
}

TEST(GatherOpTest, MatrixOfIndicesIntoAVector) {
  auto out = RunOne(
      GatherNode(DT_STRING, DT_INT64),
      {Vec<std::string>({"a", "b", "c"}), Tensor::FromVector<int64_t>({2, 1, 0, 0}, {2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"c", "b", "a", "a"}, {2, 2}));
}

TEST(GatherOpTest, ScalarIndexDropsTheFirstDimension) {
  auto out = RunOne(GatherNode(DT_FLOAT), {Iota({3, 2}), Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<float>({2, 3}));
}

TEST(GatherOpTest, EmptyIndicesAndEmptyRows) {
  auto out = RunOne(GatherNode(DT_FLOAT), {Iota({3, 2}), I32({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 2}));
  out = RunOne(GatherNode(DT_FLOAT), {Iota({3, 0}), I32({1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 0}));
  out = RunOne(GatherNode(DT_FLOAT), {Iota({0, 2}), I32({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 2}));
}

TEST(GatherOpTest, OutOfRangeIndexNamesValueAndPosition) {
  auto out = RunOne(GatherNode(DT_FLOAT),
                    {Iota({3, 2}), Tensor::FromVector<int32_t>({0, 1, 3, 2}, {2, 2})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node g: Gather indices[1,0] = 3 is not in [0, 3) (params shape [3,2])");
  out = RunOne(GatherNode(DT_FLOAT, DT_INT64), {Iota({3, 2}), I64({0, -1})});
  EXPECT_EQ(Message(out), "node g: Gather indices[1] = -1 is not in [0, 3) (params shape [3,2])");
  out = RunOne(GatherNode(DT_FLOAT), {Iota({0, 2}), Tensor::Scalar<int32_t>(0)});
  EXPECT_EQ(Message(out), "node g: Gather indices = 0 is not in [0, 0) (params shape [0,2])");
}

TEST(GatherOpTest, ScalarParamsAreInvalid) {
  auto out = RunOne(GatherNode(DT_FLOAT), {Tensor::Scalar<float>(1), I32({0})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node g: Gather params must be at least 1-D, got shape []");
}

TEST(GatherOpTest, FloatIndicesAreRejectedByTheDefinition) {
  auto out = RunOne(GatherNode(DT_FLOAT, DT_FLOAT), {Iota({3}), Vec<float>({0})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(Message(out), HasSubstr("Tindices"));
}

TEST(UnsortedSegmentSumOpTest, SumsRowsBySegment) {
  Scope root = Scope::NewRootScope();
  const Tensor data = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  auto sum = ops::UnsortedSegmentSum(root, data, {2, 0, 2, -1}, 3);
  auto bad = ops::UnsortedSegmentSum(root.WithOpName("bad"), data, {0, 1, 3, 0}, 3);
  ClientSession s(root);
  auto out = s.Run({}, {sum});
  ASSERT_TRUE(out.ok()) << out.status();
  // Row 3 has id -1 and is dropped; segment 1 is empty.
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({3, 4, 0, 0, 6, 8}, {3, 2}));
  out = s.Run({}, {bad});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("node bad: segment_ids[2] = 3 is not in [0, 3)"));
}

}  // namespace
}  // namespace tw
