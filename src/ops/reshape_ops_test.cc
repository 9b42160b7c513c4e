// Tests of Reshape (reshape_ops.cc): kernels against hand-computed values, every error
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

using testing::FindNode;
using testing::I32;
using testing::I64;
using testing::Iota;
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Strings;
using testing::Vec;

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

// ---- ExpandDims and Squeeze ----

NodeBuilder ExpandDimsNode(DataType tdim = DT_INT32) {
  return NodeBuilder("e", "ExpandDims").Attr("T", DT_FLOAT).Attr("Tdim", tdim).NumInputs(2);
}
NodeBuilder SqueezeNode(std::vector<int64_t> dims) {
  return NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT).Attr("squeeze_dims", dims).NumInputs(1);
}

TEST(ExpandDimsOpTest, InsertsADimensionOfOneAsAView) {
  Tensor in = Iota({2, 3});
  for (const auto& [dim, shape] : std::vector<std::pair<int, TensorShape>>{
           {0, {1, 2, 3}}, {1, {2, 1, 3}}, {2, {2, 3, 1}}, {-1, {2, 3, 1}}, {-3, {1, 2, 3}}}) {
    auto out = RunOne(ExpandDimsNode(), {in, Tensor::Scalar<int32_t>(dim)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, Iota(shape)) << dim;
    EXPECT_TRUE(out->SharesBufferWith(in));
  }
  auto out = RunOne(ExpandDimsNode(DT_INT64), {Tensor::Scalar<float>(0), I64({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Iota({1}));
}

TEST(ExpandDimsOpTest, BadDimsAreInvalidArguments) {
  auto out = RunOne(ExpandDimsNode(), {Iota({2, 3}), Tensor::Scalar<int32_t>(3)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node e: Tried to expand dim index 3 for tensor with 2 dimensions.");
  out = RunOne(ExpandDimsNode(), {Iota({2, 3}), Tensor::Scalar<int32_t>(-4)});
  EXPECT_EQ(Message(out), "node e: Tried to expand dim index -4 for tensor with 2 dimensions.");
  out = RunOne(ExpandDimsNode(), {Iota({2, 3}), I32({0, 1})});
  EXPECT_EQ(Message(out), "node e: 'dim' must be a tensor with a single value");
}

TEST(SqueezeOpTest, DropsTheListedOrEveryDimensionOfOne) {
  Tensor in = Iota({1, 2, 1, 3, 1});
  auto out = RunOne(SqueezeNode({}), {in});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Iota({2, 3}));
  EXPECT_TRUE(out->SharesBufferWith(in));
  out = RunOne(SqueezeNode({2, -1}), {in});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Iota({1, 2, 3}));
  out = RunOne(SqueezeNode({}), {Iota({1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::Scalar<float>(0));
}

TEST(SqueezeOpTest, BadDimsAreInvalidArguments) {
  auto out = RunOne(SqueezeNode({1}), {Iota({1, 2})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node s: Can not squeeze dim[1], expected a dimension of 1, got 2");
  out = RunOne(SqueezeNode({2}), {Iota({1, 2})});
  EXPECT_EQ(Message(out), "node s: Tried to squeeze dim index 2 for tensor with 2 dimensions.");
  out = RunOne(SqueezeNode({-3}), {Iota({1, 2})});
  EXPECT_EQ(Message(out), "node s: Tried to squeeze dim index -3 for tensor with 2 dimensions.");
}

// ---- Builders ----

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

}  // namespace
}  // namespace tw
