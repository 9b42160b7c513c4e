#include "tensorweave/ops/basic_ops.h"

#include <limits>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::KernelTest;
using testing::NodeBuilder;

TEST(ConstOpTest, ProducesItsValue) {
  KernelTest t;
  Tensor v = Tensor::FromVector<float>({1, 2, 3});
  auto out = t.Run(NodeBuilder("c", "Const").Attr("value", v).Attr("dtype", DT_FLOAT), {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], v);
}

TEST(ConstOpTest, DtypeMismatchIsAnError) {
  KernelTest t;
  auto out = t.Run(
      NodeBuilder("c", "Const").Attr("value", Tensor::Scalar<int32_t>(1)).Attr("dtype", DT_FLOAT),
      {});
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("Const value is int32 but dtype is float"));
}

TEST(PlaceholderOpTest, UnfedPlaceholderNamesItself) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("x", "Placeholder").Attr("dtype", DT_INT64), {});
  EXPECT_EQ(out.status().message(),
            "You must feed a value for placeholder tensor 'x' with dtype int64");
}

TEST(IdentityOpTest, SharesTheBuffer) {
  KernelTest t;
  Tensor v = Tensor::FromVector<std::string>({"a", "b"});
  auto out = t.Run(NodeBuilder("i", "Identity").Attr("T", DT_STRING).NumInputs(1), {v});
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE((*out)[0].SharesBufferWith(v));
}

TEST(BuilderTest, MakesUniqueNamesAndInfersTypes) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Identity(root, 1.5f);
  auto b = ops::Identity(root.WithOpName("b"), a);
  auto b2 = ops::Identity(root.WithOpName("b"), a);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(a.type(), DT_FLOAT);
  EXPECT_EQ(b.op().name(), "b");
  EXPECT_EQ(b2.op().name(), "b_1");
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok());
  ASSERT_EQ(graph->node_size(), 4);  // Const, Identity, b, b_1
  EXPECT_EQ(graph->node(0).op(), "Const");
  EXPECT_EQ(graph->node(1).input(0), graph->node(0).name());
  EXPECT_EQ(graph->node(1).attr().at("T").type(), proto::DT_FLOAT);
}

TEST(BuilderTest, DeviceScopesMergeAndControlDepsAndColocation) {
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  auto v = ops::Const(ps.NewSubScope("model").WithDevice("/task:1"), Tensor::Scalar<float>(1));
  auto n = ops::NoOp(root.WithControlDependencies({v}).ColocateWith(v.op()));
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->node(0).name(), "model/Const");
  EXPECT_EQ(graph->node(0).device(), "/job:ps/task:1");
  EXPECT_EQ(graph->node(1).input(0), "^model/Const");
  EXPECT_EQ(graph->node(1).attr().at("_class").list().s(0), "loc:@model/Const");
  EXPECT_TRUE(n.valid());
}

TEST(BuilderTest, DeviceFunctionChoosesTheDevice) {
  Scope root = Scope::NewRootScope().WithDeviceFunction(
      [](const proto::NodeDef& node) { return node.op() == "Const" ? "/job:ps/task:0" : ""; });
  auto c = ops::Identity(root, 2.0f);
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->node(0).device(), "/job:ps/task:0");
  EXPECT_EQ(graph->node(1).device(), "");
}

TEST(BuilderTest, ErrorsNameTheNodeAndStick) {
  Scope root = Scope::NewRootScope();
  auto bad = root.WithDevice("/job:1bad");
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("Invalid device name \"/job:1bad\""));
  Scope other = Scope::NewRootScope();
  other.AddNode("NoSuchOp", {});
  EXPECT_THAT(std::string(other.status().message()),
              HasSubstr("node NoSuchOp: Op type not registered 'NoSuchOp'"));
  EXPECT_FALSE(other.ToGraphDef().ok());
}

TEST(BuilderTest, TryAddNodeLeavesTheGraphAsItWasOnError) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Const(root.WithOpName("a"), Tensor::Scalar(1.0f));
  // A float and an int32 literal: the literal's Const is made, then the Add fails.
  auto bad = root.WithOpName("sum").TryAddNode("Add", {InputList{a}, InputList{Input(3)}});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(IsInvalidArgument(bad.status())) << bad.status();
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("node sum: "));
  EXPECT_TRUE(root.ok());  // nothing recorded: building goes on
  auto good = root.WithOpName("sum").TryAddNode("Add", {InputList{a}, InputList{a}});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->name(), "sum");  // the failed node's name was given back
  EXPECT_EQ(root.FindNode("sum").output_type(0), DT_FLOAT);
  EXPECT_FALSE(root.FindNode("no_such_node").valid());
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok());
  ASSERT_EQ(graph->node_size(), 2);  // a and sum: the failed node's constant is gone
  EXPECT_EQ(graph->node(1).name(), "sum");
  EXPECT_FALSE(root.WithOpName("x").TryAddNode("NoSuchOp", {}).ok());
  EXPECT_TRUE(root.WithOpName("x").TryAddNode("NoOp", {}).ok());
}

// ---- Shape ----

TEST(ShapeOpTest, Int32AndInt64) {
  KernelTest t;
  Tensor x = Tensor::FromVector<std::string>({"a", "b", "c", "d", "e", "f"}, {2, 1, 3});
  auto out = t.Run(NodeBuilder("s", "Shape").Attr("T", DT_STRING).NumInputs(1), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({2, 1, 3}));
  out = t.Run(
      NodeBuilder("s", "Shape").Attr("T", DT_STRING).Attr("out_type", DT_INT64).NumInputs(1), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int64_t>({2, 1, 3}));
}

TEST(ShapeOpTest, ScalarsAndEmptyTensors) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("s", "Shape").Attr("T", DT_BOOL).NumInputs(1),
                   {Tensor::Scalar<bool>(true)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({}));
  out = t.Run(NodeBuilder("s", "Shape").Attr("T", DT_FLOAT).NumInputs(1),
              {Tensor::FromVector<float>({}, {3, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({3, 0}));
}

TEST(ShapeOpTest, DimensionTooLargeForInt32) {
  KernelTest t;
  // Shape reads only the shape, so a large empty tensor costs nothing.
  Tensor x(DT_UINT8, TensorShape({0, int64_t{1} << 31}));
  auto out = t.Run(NodeBuilder("s", "Shape").Attr("T", DT_UINT8).NumInputs(1), {x});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(out.status().message(),
            "node s: Shape: dimension 1 of input shape [0,2147483648] does not fit out_type "
            "int32; use int64");
  out = t.Run(NodeBuilder("s", "Shape").Attr("T", DT_UINT8).Attr("out_type", DT_INT64).NumInputs(1),
              {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int64_t>({0, int64_t{1} << 31}));
}

TEST(ShapeOpTest, OutTypeMustBeAnIndexType) {
  KernelTest t;
  auto out =
      t.Run(NodeBuilder("s", "Shape").Attr("T", DT_FLOAT).Attr("out_type", DT_FLOAT).NumInputs(1),
            {Tensor::Scalar<float>(1)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("out_type"));
}

// ---- ZerosLike, OnesLike ----

TEST(ZerosLikeOpTest, EveryNumericType) {
  KernelTest t;
  auto run = [&](const char* op, const Tensor& x) -> Tensor {
    auto out = t.Run(NodeBuilder("z", op).Attr("T", x.dtype()).NumInputs(1), {x});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  };
  EXPECT_EQ(run("ZerosLike", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})),
            Tensor::FromVector<float>({0, 0, 0, 0}, {2, 2}));
  EXPECT_EQ(run("OnesLike", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})),
            Tensor::FromVector<float>({1, 1, 1, 1}, {2, 2}));
  EXPECT_EQ(run("ZerosLike", Tensor::FromVector<double>({5})), Tensor::FromVector<double>({0}));
  EXPECT_EQ(run("OnesLike", Tensor::Scalar<int32_t>(7)), Tensor::Scalar<int32_t>(1));
  EXPECT_EQ(run("ZerosLike", Tensor::FromVector<int64_t>({9, 9})),
            Tensor::FromVector<int64_t>({0, 0}));
  EXPECT_EQ(run("OnesLike", Tensor::FromVector<uint8_t>({9, 9})),
            Tensor::FromVector<uint8_t>({1, 1}));
  EXPECT_EQ(run("ZerosLike", Tensor::FromVector<bool>({true})), Tensor::FromVector<bool>({false}));
  EXPECT_EQ(run("OnesLike", Tensor::FromVector<bool>({false})), Tensor::FromVector<bool>({true}));
  EXPECT_EQ(run("OnesLike", Tensor::FromVector<float>({}, {0, 4})).shape(), TensorShape({0, 4}));
}

TEST(ZerosLikeOpTest, DoesNotShareTheInput) {
  KernelTest t;
  Tensor x = Tensor::FromVector<float>({1, 2});
  auto out = t.Run(NodeBuilder("z", "ZerosLike").Attr("T", DT_FLOAT).NumInputs(1), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE((*out)[0].SharesBufferWith(x));
  EXPECT_EQ(x, Tensor::FromVector<float>({1, 2}));
}

TEST(ZerosLikeOpTest, StringsAreNotNumbers) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("z", "ZerosLike").Attr("T", DT_STRING).NumInputs(1),
                   {Tensor::Scalar<std::string>("a")});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(out.status().message(),
            "attribute \"T\" of node \"z\" (op ZerosLike) is string, not one of float, double, "
            "int32, int64, uint8, bool");
}

// ---- Cast ----

StatusOr<Tensor> RunCast(const Tensor& x, DataType dst) {
  KernelTest t;
  auto out =
      t.Run(NodeBuilder("c", "Cast").Attr("SrcT", x.dtype()).Attr("DstT", dst).NumInputs(1), {x});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(CastOpTest, BetweenNumbers) {
  auto out = RunCast(Tensor::FromVector<float>({1.9f, -1.9f, 0.5f, 3}, {2, 2}), DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int32_t>({1, -1, 0, 3}, {2, 2}));
  out = RunCast(Tensor::FromVector<int32_t>({1, -2}), DT_DOUBLE);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<double>({1.0, -2.0}));
  out = RunCast(Tensor::FromVector<int64_t>({int64_t{1} << 40, 5}), DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({1099511627776.0f, 5.0f}));
  out = RunCast(Tensor::FromVector<double>({0.1}), DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({0.1f}));
  out = RunCast(Tensor::FromVector<uint8_t>({255, 0}), DT_INT64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int64_t>({255, 0}));
}

TEST(CastOpTest, IntegersWrap) {
  auto out = RunCast(Tensor::FromVector<int32_t>({300, -1, 255}), DT_UINT8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<uint8_t>({44, 255, 255}));
  out = RunCast(Tensor::FromVector<int64_t>({(int64_t{1} << 32) + 7}), DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int32_t>({7}));
}

TEST(CastOpTest, FloatToIntegerSaturatesAndNanIsZero) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunCast(Tensor::FromVector<float>({3e9f, -3e9f, inf, -inf, nan}), DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int32_t>(
                      {2147483647, -2147483647 - 1, 2147483647, -2147483647 - 1, 0}));
  out = RunCast(Tensor::FromVector<double>({1e19, -1e19, 9.2e18}), DT_INT64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int64_t>({std::numeric_limits<int64_t>::max(),
                                               std::numeric_limits<int64_t>::min(),
                                               9200000000000000000}));
  out = RunCast(Tensor::FromVector<float>({300.0f, -0.5f, -7.0f, 254.9f}), DT_UINT8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<uint8_t>({255, 0, 0, 254}));
}

TEST(CastOpTest, BoolIsZeroOrOne) {
  auto out = RunCast(Tensor::FromVector<bool>({true, false}), DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({1, 0}));
  out = RunCast(Tensor::FromVector<bool>({true, false}), DT_UINT8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<uint8_t>({1, 0}));
  out = RunCast(Tensor::FromVector<float>({0.0f, -0.0f, 0.25f, -3.0f}), DT_BOOL);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<bool>({false, false, true, true}));
  out = RunCast(Tensor::FromVector<int64_t>({0, 256}), DT_BOOL);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<bool>({false, true}));
}

TEST(CastOpTest, SameTypeSharesAndEmptyWorks) {
  Tensor x = Tensor::FromVector<int32_t>({1, 2});
  auto out = RunCast(x, DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(x));
  out = RunCast(Tensor::FromVector<double>({}, {2, 0}), DT_UINT8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 0}));
  EXPECT_EQ(out->dtype(), DT_UINT8);
}

TEST(CastOpTest, StringsCannotBeCast) {
  auto out = RunCast(Tensor::Scalar<std::string>("1"), DT_INT32);
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("attribute \"SrcT\""));
  out = RunCast(Tensor::Scalar<int32_t>(1), DT_STRING);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("attribute \"DstT\""));
}

// ---- Builders ----

TEST(BuilderTest, ShapeCastAndLikeOps) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto s32 = ops::Shape(root.WithOpName("s32"), x);
  auto s64 = ops::Shape(root.WithOpName("s64"), x, DT_INT64);
  auto c = ops::Cast(root.WithOpName("c"), s64, DT_FLOAT);
  auto z = ops::ZerosLike(root.WithOpName("z"), x);
  auto o = ops::OnesLike(root.WithOpName("o"), 3);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(s32.type(), DT_INT32);
  EXPECT_EQ(s64.type(), DT_INT64);
  EXPECT_EQ(c.type(), DT_FLOAT);
  EXPECT_EQ(z.type(), DT_DOUBLE);
  EXPECT_EQ(o.type(), DT_INT32);
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::map<std::string, proto::NodeDef> nodes;
  for (const proto::NodeDef& n : graph->node()) nodes[n.name()] = n;
  EXPECT_EQ(nodes.at("s32").attr().at("out_type").type(), proto::DT_INT32);
  EXPECT_EQ(nodes.at("s32").attr().at("T").type(), proto::DT_DOUBLE);
  EXPECT_EQ(nodes.at("s64").attr().at("out_type").type(), proto::DT_INT64);
  EXPECT_EQ(nodes.at("c").input(0), "s64");
  EXPECT_EQ(nodes.at("c").attr().at("SrcT").type(), proto::DT_INT64);
  EXPECT_EQ(nodes.at("c").attr().at("DstT").type(), proto::DT_FLOAT);
  EXPECT_EQ(nodes.at("z").input(0), "x");
  EXPECT_EQ(nodes.at(nodes.at("o").input(0)).op(), "Const");
}

TEST(BuilderTest, CastToAnUnsupportedTypeFails) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Cast(root.WithOpName("c"), 1.0f, DT_STRING);
  EXPECT_FALSE(c.op().valid());
  EXPECT_TRUE(IsInvalidArgument(root.status()));
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("node c: "));
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("DstT"));
}

}  // namespace
}  // namespace tw
