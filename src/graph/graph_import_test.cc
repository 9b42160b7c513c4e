#include "tensorweave/graph_import.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// x (placeholder) -> y = x * w + b, with a control dependency and an AddN (a list input).
proto::GraphDef SmallModel() {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto w = ops::Const(root.WithOpName("w"), Tensor::FromVector<float>({2, 3}));
  auto b = ops::Const(root.WithOpName("b"), Tensor::FromVector<float>({1, 1}));
  auto gate = ops::NoOp(root.WithOpName("gate"));
  auto xw = ops::Mul(root.WithOpName("xw").WithControlDependencies({gate}), x, w);
  ops::AddN(root.WithOpName("y"), InputList{xw, b, b});
  return *root.ToGraphDef();
}

TEST(GraphImportTest, ImportedNodesRunUnderTheirPrefixWithInputsMapped) {
  Scope root = Scope::NewRootScope();
  auto fed = ops::Const(root.WithOpName("fed"), Tensor::FromVector<float>({10, 20}));
  Status imported = ImportGraphDef(root, SmallModel(), "imported", {{"x:0", fed}});
  ASSERT_TRUE(imported.ok()) << imported;
  ASSERT_TRUE(ImportGraphDef(root, SmallModel(), "").ok());  // the names as they were
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::map<std::string, proto::NodeDef> nodes;
  for (const auto& node : graph->node()) nodes[node.name()] = node;
  EXPECT_EQ(nodes.at("imported/xw").input(0), "fed");
  EXPECT_EQ(nodes.at("imported/xw").input(2), "^imported/gate");
  EXPECT_EQ(nodes.at("imported/y").attr().at("N").i(), 3);
  EXPECT_TRUE(nodes.count("xw"));

  ClientSession session(root);
  Output imported_y(root.FindNode("imported/y"), 0);
  auto out = session.Run({}, {imported_y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({22, 62}));
  Output x(root.FindNode("x"), 0), y(root.FindNode("y"), 0);
  out = session.Run({{x, Tensor::FromVector<float>({1, 1})}}, {y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({4, 5}));
}

TEST(GraphImportTest, RefusesTakenNamesUnknownOpsAndMissingInputsNamingTheNode) {
  Scope root = Scope::NewRootScope();
  ASSERT_TRUE(ImportGraphDef(root, SmallModel(), "m").ok());
  Status again = ImportGraphDef(root, SmallModel(), "m");
  EXPECT_TRUE(IsInvalidArgument(again));
  EXPECT_THAT(std::string(again.message()), HasSubstr("Node name 'm/x' already exists"));

  proto::GraphDef unknown;
  unknown.add_node()->set_op("NoSuchOp");
  unknown.mutable_node(0)->set_name("n");
  EXPECT_FALSE(ImportGraphDef(root, unknown, "u").ok());

  proto::GraphDef dangling = SmallModel();
  dangling.mutable_node()->erase(dangling.node().begin());  // drop x: xw's input is gone
  Status missing = ImportGraphDef(root, dangling, "d");
  EXPECT_THAT(std::string(missing.message()),
              HasSubstr("node 'xw' has an input from 'x', which is not a node before it"));

  proto::GraphDef wrong_type = SmallModel();
  for (auto& node : *wrong_type.mutable_node()) {
    if (node.name() == "xw") (*node.mutable_attr())["T"].set_type(proto::DT_INT32);
  }
  Status typed = ImportGraphDef(root, wrong_type, "t");
  EXPECT_TRUE(IsInvalidArgument(typed)) << typed;
  EXPECT_THAT(std::string(typed.message()), HasSubstr("t/xw"));

  proto::GraphDef bad_index = SmallModel();
  for (auto& node : *bad_index.mutable_node()) {
    if (node.name() == "xw") node.set_input(1, "w:7");
  }
  EXPECT_THAT(std::string(ImportGraphDef(root, bad_index, "i").message()),
              HasSubstr("'w' has 1 outputs"));
  EXPECT_TRUE(root.ok());  // refused imports record nothing in the scope
}

}  // namespace
}  // namespace tw
