// Tests of the array ops of the basic family (array_ops.cc): Reshape, Fill, Concat, Slice,
// Pack, Gather, Pad, UnsortedSegmentSum, ConcatOffset, Unpack, Unique; kernels against
// hand-computed values, every error path, and the builders.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::KernelTest;
using testing::NodeBuilder;

using Strings = std::vector<std::string>;

// Runs a one-output kernel.
StatusOr<Tensor> RunOne(const NodeBuilder& node, const std::vector<Tensor>& inputs) {
  KernelTest t;
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, t.Run(node, inputs));
  if (out.size() != 1) return errors::Internal("expected one output, got ", out.size());
  return out[0];
}

std::string Message(const StatusOr<Tensor>& s) { return std::string(s.status().message()); }

template <typename T>
Tensor Vec(const std::vector<T>& v) {
  return Tensor::FromVector<T>(v);
}
Tensor I32(const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(v); }
Tensor I64(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(v); }
Tensor Floats(const std::vector<float>& v, const TensorShape& shape) {
  return Tensor::FromVector<float>(v, shape);
}
// 0, 1, 2, ... in `shape`.
Tensor Iota(const TensorShape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::FromVector<float>(v, shape);
}

// ---- Reshape ----

NodeBuilder ReshapeNode(DataType t, DataType tshape = DT_INT32) {
  return NodeBuilder("r", "Reshape").Attr("T", t).Attr("Tshape", tshape).NumInputs(2);
}

TEST(ReshapeOpTest, KeepsRowMajorOrder) {
  auto out = RunOne(ReshapeNode(DT_FLOAT), {Iota({2, 3}), I32({3, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Iota({3, 2}));
}

TEST(ReshapeOpTest, InfersTheMinusOneWithInt64Shape) {
  auto out = RunOne(ReshapeNode(DT_FLOAT, DT_INT64), {Iota({2, 3, 2}), I64({-1, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Iota({3, 4}));
  out = RunOne(ReshapeNode(DT_FLOAT), {Iota({2, 3, 2}), I32({-1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Iota({12}));
}

TEST(ReshapeOpTest, ToAndFromScalar) {
  auto out = RunOne(ReshapeNode(DT_INT64), {I64({7}), I32({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::Scalar<int64_t>(7));
  out = RunOne(ReshapeNode(DT_INT64), {Tensor::Scalar<int64_t>(7), I32({1, -1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int64_t>({7}, {1, 1, 1}));
}

TEST(ReshapeOpTest, SameShapeSharesTheBuffer) {
  Tensor in = Iota({2, 2});
  auto out = RunOne(ReshapeNode(DT_FLOAT), {in, I32({2, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(in));
}

TEST(ReshapeOpTest, Strings) {
  auto out = RunOne(ReshapeNode(DT_STRING), {Vec<std::string>({"a", "b", "c", "d"}), I32({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"a", "b", "c", "d"}, {2, 2}));
}

TEST(ReshapeOpTest, EmptyTensors) {
  auto out = RunOne(ReshapeNode(DT_FLOAT), {Iota({0, 3}), I32({3, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({3, 0}));
  out = RunOne(ReshapeNode(DT_FLOAT), {Iota({0, 3}), I32({-1, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 3}));
}

TEST(ReshapeOpTest, CountMismatchNamesBothShapes) {
  auto out = RunOne(ReshapeNode(DT_FLOAT), {Iota({2, 3}), I32({4, 2})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out),
            "node r: Reshape of input shape [2,3] (6 elements) to [4,2] (8 elements)");
}

TEST(ReshapeOpTest, BadShapesAreInvalidArguments) {
  struct Case {
    Tensor shape;
    std::string message;
  };
  const std::vector<Case> cases = {
      {I32({-1, -1}), "node r: Reshape shape [-1,-1] has more than one -1 (0 and 1)"},
      {I32({-2, 3}), "node r: Reshape shape [-2,3] has negative dimension -2 at 0"},
      {I32({-1, 0}),
       "node r: Reshape cannot infer the -1 in [-1,0] when another dimension is 0 (input shape "
       "[2,3])"},
      {I32({-1, 4}),
       "node r: Reshape of input shape [2,3] (6 elements) to [-1,4]: the count is not a "
       "multiple of 4"},
      {Tensor::FromVector<int32_t>({2, 3}, {1, 2}),
       "node r: Reshape shape must be 1-D, got shape [1,2]"},
      {I64({int64_t{1} << 62, 8, -1}),
       "node r: Reshape shape [4611686018427387904,8,-1] has "
       "too many elements"},
  };
  for (const Case& c : cases) {
    const bool is64 = c.shape.dtype() == DT_INT64;
    auto out = RunOne(ReshapeNode(DT_FLOAT, is64 ? DT_INT64 : DT_INT32), {Iota({2, 3}), c.shape});
    EXPECT_TRUE(IsInvalidArgument(out.status())) << c.message;
    EXPECT_EQ(Message(out), c.message);
  }
}

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

// ---- Concat ----

NodeBuilder ConcatNode(int n, DataType t, DataType tidx = DT_INT32) {
  return NodeBuilder("c", "Concat").Attr("N", n).Attr("T", t).Attr("Tidx", tidx).NumInputs(n + 1);
}

TEST(ConcatOpTest, AlongAxis0) {
  auto out = RunOne(ConcatNode(2, DT_FLOAT),
                    {Floats({1, 2}, {1, 2}), Floats({3, 4, 5, 6}, {2, 2}), Tensor::Scalar(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 2, 3, 4, 5, 6}, {3, 2}));
}

TEST(ConcatOpTest, AlongInnerAxisAndNegativeAxis) {
  const std::vector<Tensor> values = {Floats({1, 2}, {2, 1}), Floats({3, 4, 5, 6}, {2, 2})};
  const Tensor expected = Floats({1, 3, 4, 2, 5, 6}, {2, 3});
  auto out = RunOne(ConcatNode(2, DT_FLOAT), {values[0], values[1], Tensor::Scalar(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, expected);
  out = RunOne(ConcatNode(2, DT_FLOAT, DT_INT64),
               {values[0], values[1], Tensor::Scalar<int64_t>(-1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, expected);
}

TEST(ConcatOpTest, ThreeStringInputsInTheMiddleAxis) {
  // [1,2,1] + [1,1,1] + [1,0,1] along axis 1.
  auto out = RunOne(ConcatNode(3, DT_STRING),
                    {Tensor::FromVector<std::string>({"a", "b"}, {1, 2, 1}),
                     Tensor::FromVector<std::string>({"c"}, {1, 1, 1}),
                     Tensor::FromVector<std::string>({}, {1, 0, 1}), Tensor::Scalar(-2)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"a", "b", "c"}, {1, 3, 1}));
}

TEST(ConcatOpTest, EmptyOutputs) {
  auto out =
      RunOne(ConcatNode(2, DT_INT32), {Tensor::FromVector<int32_t>({}, {0, 2}),
                                       Tensor::FromVector<int32_t>({}, {0, 3}), Tensor::Scalar(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 5}));
  out = RunOne(ConcatNode(2, DT_INT32), {I32({}), I32({}), Tensor::Scalar(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0}));
}

TEST(ConcatOpTest, OneInputSharesTheBuffer) {
  Tensor in = Iota({2, 2});
  auto out = RunOne(ConcatNode(1, DT_FLOAT), {in, Tensor::Scalar(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(in));
}

TEST(ConcatOpTest, MismatchesNameTheInput) {
  auto out =
      RunOne(ConcatNode(3, DT_FLOAT), {Iota({2, 2}), Iota({2, 2}), Iota({2}), Tensor::Scalar(0)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out),
            "node c: Concat along axis 0: values[2] has shape [2], incompatible with values[0] "
            "of shape [2,2]");
  out = RunOne(ConcatNode(2, DT_FLOAT), {Iota({2, 2}), Iota({3, 2}), Tensor::Scalar(1)});
  EXPECT_EQ(Message(out),
            "node c: Concat along axis 1: values[1] has shape [3,2], incompatible with values[0] "
            "of shape [2,2]");
}

TEST(ConcatOpTest, BadAxesAndScalars) {
  auto out = RunOne(ConcatNode(2, DT_FLOAT), {Iota({2, 2}), Iota({2, 2}), Tensor::Scalar(2)});
  EXPECT_EQ(Message(out), "node c: Concat axis 2 is not in [-2, 2) for inputs of rank 2");
  out = RunOne(ConcatNode(2, DT_FLOAT), {Iota({2, 2}), Iota({2, 2}), Tensor::Scalar(-3)});
  EXPECT_EQ(Message(out), "node c: Concat axis -3 is not in [-2, 2) for inputs of rank 2");
  out = RunOne(ConcatNode(2, DT_FLOAT), {Iota({2, 2}), Iota({2, 2}), I32({0})});
  EXPECT_EQ(Message(out), "node c: Concat axis must be a scalar, got shape [1]");
  out = RunOne(ConcatNode(2, DT_FLOAT),
               {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2), Tensor::Scalar(0)});
  EXPECT_EQ(Message(out),
            "node c: Concat of scalars (values[0] has shape []); use Pack to join scalars");
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

// ---- Slice ----

NodeBuilder SliceNode(DataType t, DataType index = DT_INT32) {
  return NodeBuilder("s", "Slice").Attr("T", t).Attr("Index", index).NumInputs(3);
}

TEST(SliceOpTest, InnerBox) {
  // Iota({3, 4}) is 0..11 in rows of 4.
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({1, 1}), I32({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({5, 6, 9, 10}, {2, 2}));
}

TEST(SliceOpTest, SizeMinusOneTakesTheRest) {
  auto out = RunOne(SliceNode(DT_FLOAT, DT_INT64), {Iota({3, 4}), I64({1, 2}), I64({-1, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({6, 7, 10, 11}, {2, 2}));
}

TEST(SliceOpTest, WholeRowsShareTheBuffer) {
  Tensor in = Iota({4, 2});
  auto out = RunOne(SliceNode(DT_FLOAT), {in, I32({1, 0}), I32({2, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({2, 3, 4, 5}, {2, 2}));
  EXPECT_TRUE(out->SharesBufferWith(in));
}

TEST(SliceOpTest, ThreeDimensionalStrings) {
  // in[i][j][k] = "ijk" for shape [2,3,2]; take [0:2, 1:3, 1:2].
  Strings values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) values.push_back(std::to_string(i * 100 + j * 10 + k));
  auto out = RunOne(SliceNode(DT_STRING), {Tensor::FromVector<std::string>(values, {2, 3, 2}),
                                           I32({0, 1, 1}), I32({2, 2, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"11", "21", "111", "121"}, {2, 2, 1}));
}

TEST(SliceOpTest, MiddleDimensionWithWholeTrailingDimensions) {
  // Iota({2, 3, 2}): take [:, 1:2, :], a run of two contiguous elements per outer index.
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({2, 3, 2}), I32({0, 1, 0}), I32({-1, 1, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({2, 3, 8, 9}, {2, 1, 2}));
}

TEST(SliceOpTest, EmptyAndScalar) {
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({3, 1}), I32({0, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 2}));
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({1, 4}), I32({2, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 0}));
  out = RunOne(SliceNode(DT_INT32), {Tensor::Scalar<int32_t>(9), I32({}), I32({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::Scalar<int32_t>(9));
}

TEST(SliceOpTest, OutOfRangeIsInvalidArgument) {
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({0, 5}), I32({1, 1})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node s: Slice begin[1] = 5 is not in [0, 4] for input shape [3,4]");
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({-1, 0}), I32({1, 1})});
  EXPECT_EQ(Message(out), "node s: Slice begin[0] = -1 is not in [0, 3] for input shape [3,4]");
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({1, 0}), I32({3, 1})});
  EXPECT_EQ(Message(out),
            "node s: Slice size[0] = 3 is not -1 or in [0, 2] for begin[0] = 1 and input shape "
            "[3,4]");
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({0, 0}), I32({1, -2})});
  EXPECT_EQ(Message(out),
            "node s: Slice size[1] = -2 is not -1 or in [0, 4] for begin[1] = 0 and input shape "
            "[3,4]");
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

TEST(SliceOpTest, BeginAndSizeMustMatchTheRank) {
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({0}), I32({1, 1})});
  EXPECT_EQ(Message(out),
            "node s: Slice of input shape [3,4] needs begin and size vectors of 2 elements, got "
            "shapes [1] and [2]");
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3}), Tensor::Scalar<int32_t>(0), I32({1})});
  EXPECT_THAT(Message(out), HasSubstr("got shapes [] and [1]"));
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

// ---- Pack ----

NodeBuilder PackNode(int n, DataType t, int axis = 0) {
  return NodeBuilder("p", "Pack").Attr("N", n).Attr("T", t).Attr("axis", axis).NumInputs(n);
}

TEST(PackOpTest, ScalarsMakeAVector) {
  auto out = RunOne(PackNode(3, DT_INT64), {Tensor::Scalar<int64_t>(1), Tensor::Scalar<int64_t>(2),
                                            Tensor::Scalar<int64_t>(3)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I64({1, 2, 3}));
}

TEST(PackOpTest, AxesZeroOneAndNegative) {
  const std::vector<Tensor> v = {Vec<float>({1, 2}), Vec<float>({3, 4}), Vec<float>({5, 6})};
  auto out = RunOne(PackNode(3, DT_FLOAT, 0), v);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 2, 3, 4, 5, 6}, {3, 2}));
  out = RunOne(PackNode(3, DT_FLOAT, 1), v);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 3, 5, 2, 4, 6}, {2, 3}));
  out = RunOne(PackNode(3, DT_FLOAT, -1), v);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 3, 5, 2, 4, 6}, {2, 3}));
  out = RunOne(PackNode(3, DT_FLOAT, -2), v);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 2, 3, 4, 5, 6}, {3, 2}));
}

TEST(PackOpTest, StringsInTheMiddleAxis) {
  // Two [2,1,2] tensors packed at axis 1 give [2,2,1,2].
  auto out = RunOne(PackNode(2, DT_STRING, 1),
                    {Tensor::FromVector<std::string>({"a", "b", "c", "d"}, {2, 1, 2}),
                     Tensor::FromVector<std::string>({"e", "f", "g", "h"}, {2, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"a", "b", "e", "f", "c", "d", "g", "h"},
                                                  {2, 2, 1, 2}));
}

TEST(PackOpTest, EmptyInputsAndOneInput) {
  auto out = RunOne(PackNode(2, DT_BOOL, 1),
                    {Tensor::FromVector<bool>({}, {0}), Tensor::FromVector<bool>({}, {0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 2}));
  out = RunOne(PackNode(1, DT_FLOAT), {Vec<float>({1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 2}, {1, 2}));
}

TEST(PackOpTest, ErrorsNameTheInputAndTheAxis) {
  auto out =
      RunOne(PackNode(3, DT_FLOAT), {Vec<float>({1, 2}), Vec<float>({3, 4}), Vec<float>({5})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node p: Pack: values[2] has shape [1], values[0] has shape [2]");
  out = RunOne(PackNode(2, DT_FLOAT, 2), {Vec<float>({1}), Vec<float>({2})});
  EXPECT_EQ(Message(out), "node p: Pack axis 2 is not in [-2, 2) for inputs of shape [1]");
  out = RunOne(PackNode(2, DT_FLOAT, -3), {Vec<float>({1}), Vec<float>({2})});
  EXPECT_EQ(Message(out), "node p: Pack axis -3 is not in [-2, 2) for inputs of shape [1]");
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

TEST(PackOpTest, NMustBePositive) {
  auto out = RunOne(PackNode(0, DT_FLOAT), {});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "attribute \"N\" of node \"p\" is 0, below the minimum 1");
}

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

// ---- Builders ----

const proto::NodeDef* FindNode(const proto::GraphDef& g, const std::string& name) {
  for (const proto::NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

TEST(ArrayBuilderTest, ReshapeAndFillMakeConstsForLiterals) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_STRING);
  auto r = ops::Reshape(root.WithOpName("r"), x, {2, -1});
  auto f = ops::Fill(root.WithOpName("f"), {2, 3}, 1.5f);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(r.type(), DT_STRING);
  EXPECT_EQ(f.type(), DT_FLOAT);
  auto g = root.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::NodeDef* rn = FindNode(*g, "r");
  ASSERT_NE(rn, nullptr);
  EXPECT_EQ(rn->op(), "Reshape");
  ASSERT_EQ(rn->input_size(), 2);
  EXPECT_EQ(rn->input(0), "x");
  EXPECT_EQ(rn->attr().at("T").type(), proto::DT_STRING);
  EXPECT_EQ(rn->attr().at("Tshape").type(), proto::DT_INT32);
  const proto::NodeDef* shape = FindNode(*g, rn->input(1));
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->op(), "Const");
  const proto::NodeDef* fn = FindNode(*g, "f");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_EQ(fn->attr().at("index_type").type(), proto::DT_INT32);
}

TEST(ArrayBuilderTest, ConcatAndPackCountTheirInputs) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root.WithOpName("a"), DT_INT64);
  auto b = ops::Placeholder(root.WithOpName("b"), DT_INT64);
  auto c = ops::Concat(root.WithOpName("c"), {a, b, a}, -1);
  auto p = ops::Pack(root.WithOpName("p"), {a, b}, 1);
  auto g = root.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::NodeDef* cn = FindNode(*g, "c");
  ASSERT_NE(cn, nullptr);
  ASSERT_EQ(cn->input_size(), 4);
  EXPECT_EQ(cn->input(0), "a");
  EXPECT_EQ(cn->input(1), "b");
  EXPECT_EQ(cn->input(2), "a");
  EXPECT_EQ(FindNode(*g, cn->input(3))->op(), "Const");
  EXPECT_EQ(cn->attr().at("N").i(), 3);
  EXPECT_EQ(cn->attr().at("T").type(), proto::DT_INT64);
  EXPECT_EQ(cn->attr().at("Tidx").type(), proto::DT_INT32);
  const proto::NodeDef* pn = FindNode(*g, "p");
  ASSERT_NE(pn, nullptr);
  EXPECT_EQ(pn->input_size(), 2);
  EXPECT_EQ(pn->attr().at("N").i(), 2);
  EXPECT_EQ(pn->attr().at("axis").i(), 1);
  EXPECT_EQ(p.type(), DT_INT64);
  EXPECT_EQ(c.type(), DT_INT64);
}

TEST(ArrayBuilderTest, PackAxisDefaultsToZero) {
  Scope root = Scope::NewRootScope();
  ops::Pack(root.WithOpName("p"), {1.0f, 2.0f});
  auto g = root.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(FindNode(*g, "p")->attr().at("axis").i(), 0);
}

TEST(ArrayBuilderTest, SliceAndGatherWithInt64Indices) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto s = ops::Slice(root.WithOpName("s"), x, Tensor::FromVector<int64_t>({0, 1}),
                      Tensor::FromVector<int64_t>({-1, 2}));
  auto ga = ops::Gather(root.WithOpName("g"), s, Tensor::FromVector<int64_t>({1, 0}));
  auto g = root.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::NodeDef* sn = FindNode(*g, "s");
  ASSERT_NE(sn, nullptr);
  EXPECT_EQ(sn->input_size(), 3);
  EXPECT_EQ(sn->attr().at("Index").type(), proto::DT_INT64);
  const proto::NodeDef* gn = FindNode(*g, "g");
  ASSERT_NE(gn, nullptr);
  EXPECT_EQ(gn->input(0), "s");
  EXPECT_EQ(gn->attr().at("Tparams").type(), proto::DT_FLOAT);
  EXPECT_EQ(gn->attr().at("Tindices").type(), proto::DT_INT64);
  EXPECT_EQ(ga.type(), DT_FLOAT);
}

TEST(ArrayBuilderTest, TypeErrorsAreRecordedInTheScope) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto g = ops::Gather(root.WithOpName("g"), x, 1.0f);  // float indices
  EXPECT_FALSE(g.op().valid());
  EXPECT_TRUE(IsInvalidArgument(root.status()));
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("node g: "));
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("Tindices"));

  Scope mixed = Scope::NewRootScope();
  auto c = ops::Concat(mixed.WithOpName("c"), {1.0f, 2}, 0);  // float and int32 values
  EXPECT_FALSE(c.op().valid());
  EXPECT_THAT(std::string(mixed.status().message()), HasSubstr("node c: input 1 (values)"));

  Scope empty = Scope::NewRootScope();
  auto e = ops::Pack(empty.WithOpName("e"), {});
  EXPECT_FALSE(e.op().valid());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("node e: "));
  EXPECT_FALSE(empty.ToGraphDef().ok());
}

// ---- Pad, UnsortedSegmentSum, ConcatOffset, Unpack ----

TEST(PadOpTest, SurroundsWithZeros) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Pad(root, Tensor::FromVector<int32_t>({1, 2, 3, 4}, {2, 2}),
                    Tensor::FromVector<int64_t>({1, 0, 0, 1}, {2, 2}));
  auto bad = ops::Pad(root.WithOpName("bad"), Tensor::FromVector<float>({1, 2}),
                      Tensor::FromVector<int32_t>({-1, 0}, {1, 2}));
  ClientSession s(root);
  auto out = s.Run({}, {p});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({0, 0, 0, 1, 2, 0, 3, 4, 0}, {3, 3}));
  out = s.Run({}, {bad});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("node bad: Pad paddings must be >= 0"));
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

TEST(ConcatOffsetOpTest, WhereEachPieceStarts) {
  Scope root = Scope::NewRootScope();
  auto offsets = ops::ConcatOffset(root, 1, {Input({2, 3}), Input({2, 1}), Input({2, 4})});
  ASSERT_EQ(offsets.size(), 3u);
  auto bad = ops::ConcatOffset(root.WithOpName("bad"), 0, {Input({2, 3}), Input({1, 2})});
  ClientSession s(root);
  auto out = s.Run({}, offsets);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], I32({0, 0}));
  EXPECT_EQ((*out)[1], I32({0, 3}));
  EXPECT_EQ((*out)[2], I32({0, 4}));
  out = s.Run({}, {bad[0]});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("shape[1] = [1,2] does not match"));
}

TEST(UnpackOpTest, SplitsAlongAnAxis) {
  Scope root = Scope::NewRootScope();
  auto rows = ops::Unpack(root, Iota({2, 3}), 2, 0);
  auto cols = ops::Unpack(root, Iota({2, 3}), 3, -1);
  auto bad = ops::Unpack(root.WithOpName("bad"), Iota({2, 3}), 2, 1);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(cols.size(), 3u);
  ClientSession s(root);
  auto out = s.Run({}, {rows[1], cols[0], cols[2]});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Floats({3, 4, 5}, {3}));
  EXPECT_EQ((*out)[1], Floats({0, 3}, {2}));
  EXPECT_EQ((*out)[2], Floats({2, 5}, {2}));
  out = s.Run({}, {bad[0]});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node bad: Unpack of 2 tensors"));
}

// ---- Unique ----

NodeBuilder UniqueNode(DataType t, DataType out_idx = DT_INT32) {
  return NodeBuilder("u", "Unique").Attr("T", t).Attr("out_idx", out_idx).NumInputs(1);
}

// tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8]) from TensorFlow's documentation.
TEST(UniqueOpTest, Int32ValuesInOrderOfFirstOccurrence) {
  KernelTest t;
  auto out = t.Run(UniqueNode(DT_INT32), {I32({1, 1, 2, 4, 4, 4, 7, 8, 8})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0], I32({1, 2, 4, 7, 8}));
  EXPECT_EQ((*out)[1], I32({0, 0, 1, 2, 2, 2, 3, 4, 4}));
}

TEST(UniqueOpTest, Int64ValuesWithInt64Indices) {
  KernelTest t;
  auto out = t.Run(UniqueNode(DT_INT64, DT_INT64), {I64({7, -3, 7, 1LL << 40, -3, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], I64({7, -3, 1LL << 40, 0}));
  EXPECT_EQ((*out)[1], I64({0, 1, 0, 2, 1, 3}));
}

TEST(UniqueOpTest, FloatsAndStrings) {
  KernelTest t;
  auto out = t.Run(UniqueNode(DT_FLOAT), {Vec<float>({2.5f, -1, 2.5f, 0, -1, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Vec<float>({2.5f, -1, 0, 3}));
  EXPECT_EQ((*out)[1], I32({0, 1, 0, 2, 1, 3}));
  out = t.Run(UniqueNode(DT_STRING, DT_INT64), {Vec<std::string>({"b", "a", "b", "b"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Vec<std::string>({"b", "a"}));
  EXPECT_EQ((*out)[1], I64({0, 1, 0, 0}));
}

TEST(UniqueOpTest, EmptyInputGivesEmptyOutputs) {
  KernelTest t;
  auto out = t.Run(UniqueNode(DT_FLOAT), {Vec<float>({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[0].dtype(), DT_FLOAT);
  EXPECT_EQ((*out)[1].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[1].dtype(), DT_INT32);
}

TEST(UniqueOpTest, NonVectorsAreInvalidArguments) {
  KernelTest t;
  for (const Tensor& x :
       {Tensor::FromVector<int32_t>({1, 2, 1, 2}, {2, 2}), Tensor::Scalar<int32_t>(3)}) {
    auto out = t.Run(UniqueNode(DT_INT32), {x});
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(IsInvalidArgument(out.status()));
    EXPECT_EQ(std::string(out.status().message()), "node u: unique expects a 1D vector.");
  }
}

TEST(UniqueOpTest, BuilderRunsInASession) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_INT64);
  auto u = ops::Unique(root.WithOpName("u"), x, {.out_idx = DT_INT64});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(u.y.type(), DT_INT64);
  EXPECT_EQ(u.idx.type(), DT_INT64);
  ClientSession s(root);
  auto out = s.Run({{x, I64({5, 3, 5})}}, {u.y, u.idx});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], I64({5, 3}));
  EXPECT_EQ((*out)[1], I64({0, 1, 0}));
  // A matrix fed where the graph could not check the shape fails the step.
  out = s.Run({{x, Tensor::FromVector<int64_t>({1, 2}, {1, 2})}}, {u.y});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("unique expects a 1D vector."));
  // idx is int32 unless asked otherwise.
  EXPECT_EQ(ops::Unique(root, x).idx.type(), DT_INT32);
}

}  // namespace
}  // namespace tw
