#include "tensorweave/ops/basic_ops.h"

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
  auto out = t.Run(NodeBuilder("c", "Const").Attr("value", Tensor::Scalar<int32_t>(1)).Attr("dtype", DT_FLOAT), {});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Const value is int32 but dtype is float"));
}

TEST(PlaceholderOpTest, UnfedPlaceholderNamesItself) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("x", "Placeholder").Attr("dtype", DT_INT64), {});
  EXPECT_EQ(out.status().message(), "You must feed a value for placeholder tensor 'x' with dtype int64");
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

}  // namespace
}  // namespace tw
