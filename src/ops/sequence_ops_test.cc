// Tests of Range, OneHot, ReverseV2 and Cumsum (sequence_ops.cc): kernels against hand-computed
// values, every error path with its message.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/ops/array_test_util.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using testing::I32;
using testing::I64;
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Vec;

NodeBuilder RangeNode(DataType t) { return NodeBuilder("n", "Range").Attr("Tidx", t).NumInputs(3); }

template <typename T>
StatusOr<Tensor> Range(T start, T limit, T delta) {
  return RunOne(RangeNode(DataTypeToEnum<T>::value),
                {Tensor::Scalar<T>(start), Tensor::Scalar<T>(limit), Tensor::Scalar<T>(delta)});
}

TEST(RangeOpTest, IntegersUpAndDown) {
  auto out = Range<int32_t>(3, 18, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I32({3, 6, 9, 12, 15}));
  out = Range<int64_t>(5, -2, -3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I64({5, 2, -1}));
  out = Range<int32_t>(4, 4, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I32({}));
}

TEST(RangeOpTest, FloatsCountAsTensorFlowDoes) {
  auto out = Range<float>(3, 1, -0.5f);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<float>({3, 2.5f, 2, 1.5f}));
  auto d = Range<double>(0, 1, 0.3);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->num_elements(), 4);  // ceil(1 / 0.3)
  EXPECT_DOUBLE_EQ(d->flat<double>()[3], 0.3 + 0.3 + 0.3);
}

TEST(RangeOpTest, BadArgumentsAreInvalidArguments) {
  EXPECT_EQ(Message(Range<int32_t>(0, 5, 0)), "node n: Requires delta != 0: 0");
  EXPECT_EQ(Message(Range<int32_t>(5, 0, 1)),
            "node n: Requires start <= limit when delta > 0: 5/0");
  EXPECT_EQ(Message(Range<float>(0, 5, -1)), "node n: Requires start >= limit when delta < 0: 0/5");
  auto out = RunOne(RangeNode(DT_INT32),
                    {I32({0, 1}), Tensor::Scalar<int32_t>(3), Tensor::Scalar<int32_t>(1)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node n: start must be a scalar, not shape [2]");
}

// ---- OneHot ----

NodeBuilder OneHotNode(int axis, DataType t = DT_FLOAT, DataType ti = DT_INT32) {
  return NodeBuilder("n", "OneHot").Attr("axis", axis).Attr("T", t).Attr("TI", ti).NumInputs(4);
}

StatusOr<Tensor> OneHot(const Tensor& indices, int depth, int axis) {
  return RunOne(OneHotNode(axis, DT_FLOAT, indices.dtype()),
                {indices, Tensor::Scalar<int32_t>(depth), Tensor::Scalar<float>(5),
                 Tensor::Scalar<float>(-1)});
}

TEST(OneHotOpTest, OnAndOffValuesAlongTheAxis) {
  // Out-of-range indices (-1, 3) give a row of off_value, as TF.
  auto out = OneHot(I32({0, 2, -1, 3}), 3, -1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            Tensor::FromVector<float>({5, -1, -1, -1, -1, 5, -1, -1, -1, -1, -1, -1}, {4, 3}));
  out = OneHot(Tensor::FromVector<int64_t>({1, 0, 2, 1}, {2, 2}), 3, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  // [2, 3, 2]: out[i][d][j] = indices[i][j] == d.
  EXPECT_EQ(*out,
            Tensor::FromVector<float>({-1, 5, 5, -1, -1, -1, -1, -1, -1, 5, 5, -1}, {2, 3, 2}));
  out = OneHot(Tensor::FromVector<uint8_t>({1}), 2, 0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({-1, 5}, {2, 1}));
  out = RunOne(OneHotNode(-1, DT_STRING),
               {I32({1}), Tensor::Scalar<int32_t>(2), Tensor::Scalar<std::string>("y"),
                Tensor::Scalar<std::string>("n")});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"n", "y"}, {1, 2}));
}

TEST(OneHotOpTest, ErrorsNameTheNode) {
  EXPECT_EQ(Message(OneHot(I32({0}), 3, 2)),
            "node n: Expected axis to be -1 or between [0, 2).  But received: 2");
  EXPECT_EQ(Message(OneHot(I32({0}), -1, -1)), "node n: depth must be non-negative, got: -1");
  auto out = RunOne(OneHotNode(-1), {I32({0}), Tensor::Scalar<int32_t>(2), Vec<float>({1}),
                                     Tensor::Scalar<float>(0)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node n: on_value must be a scalar, but got: [1]");
}

// ---- ReverseV2 ----

NodeBuilder ReverseNode(DataType t = DT_FLOAT) {
  return NodeBuilder("n", "ReverseV2").Attr("T", t).Attr("Tidx", DT_INT32).NumInputs(2);
}

TEST(ReverseV2OpTest, ReversesTheListedAxes) {
  auto out = RunOne(ReverseNode(), {testing::Iota({2, 3}), I32({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({2, 1, 0, 5, 4, 3}, {2, 3}));
  out = RunOne(ReverseNode(), {testing::Iota({2, 3, 2}), I32({0, -2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1}, {2, 3, 2}));
  out = RunOne(ReverseNode(DT_STRING), {Vec<std::string>({"a", "b"}), I32({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<std::string>({"b", "a"}));
  Tensor in = testing::Iota({1, 3});
  out = RunOne(ReverseNode(), {in, I32({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(in));  // a dimension of 1 reversed: nothing moves
}

TEST(ReverseV2OpTest, ErrorsNameTheNode) {
  auto out = RunOne(ReverseNode(), {testing::Iota({2, 3}), I32({2})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node n: 'axis'[0] = 2 is out of valid range [0, 1]");
  out = RunOne(ReverseNode(), {testing::Iota({2, 3}), I32({1, -1})});
  EXPECT_EQ(Message(out), "node n: axis 1 specified more than once.");
  out = RunOne(ReverseNode(), {testing::Iota({2, 3}), Tensor::Scalar<int32_t>(0)});
  EXPECT_EQ(Message(out), "node n: 'dims' must be 1-dimension, not 0");
}

// ---- Cumsum ----

NodeBuilder CumsumNode(bool exclusive, bool reverse, DataType t = DT_FLOAT) {
  return NodeBuilder("n", "Cumsum")
      .Attr("exclusive", exclusive)
      .Attr("reverse", reverse)
      .Attr("T", t)
      .Attr("Tidx", DT_INT32)
      .NumInputs(2);
}

TEST(CumsumOpTest, ExclusiveAndReverse) {
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor axis1 = Tensor::Scalar<int32_t>(1);
  auto out = RunOne(CumsumNode(false, false), {x, axis1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({1, 3, 6, 4, 9, 15}, {2, 3}));
  out = RunOne(CumsumNode(true, false), {x, axis1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({0, 1, 3, 0, 4, 9}, {2, 3}));
  out = RunOne(CumsumNode(false, true), {x, axis1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({6, 5, 3, 15, 11, 6}, {2, 3}));
  out = RunOne(CumsumNode(true, true), {x, Tensor::Scalar<int32_t>(-2)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({4, 5, 6, 0, 0, 0}, {2, 3}));
  out = RunOne(CumsumNode(false, false, DT_INT64), {I64({1, 2, 3}), Tensor::Scalar<int32_t>(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I64({1, 3, 6}));
}

TEST(CumsumOpTest, ErrorsNameTheNode) {
  auto out = RunOne(CumsumNode(false, false), {testing::Iota({2, 3}), Tensor::Scalar<int32_t>(2)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node n: ScanOp: Expected scan axis in the range [-2, 2), but got 2");
  out = RunOne(CumsumNode(false, false), {testing::Iota({2, 3}), I32({0})});
  EXPECT_EQ(Message(out), "node n: ScanOp: axis must be a scalar, not [1]");
}

}  // namespace
}  // namespace tw
