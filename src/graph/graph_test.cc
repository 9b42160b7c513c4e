#include "src/graph/graph.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

proto::NodeDef MakeNode(const std::string& name, const std::string& op,
                        std::vector<std::string> inputs = {}) {
  proto::NodeDef n;
  n.set_name(name);
  n.set_op(op);
  for (auto& i : inputs) n.add_input(i);
  if (op == "Identity") (*n.mutable_attr())["T"].set_type(proto::DT_FLOAT);
  return n;
}

proto::GraphDef Chain() {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto a = ops::Identity(root.WithOpName("a"), x);
  auto b = ops::Identity(root.WithOpName("b"), a);
  auto unused = ops::Identity(root.WithOpName("unused"), 3.0f);
  ops::NoOp(root.WithOpName("after_b").WithControlDependencies({b}));
  return *root.ToGraphDef();
}

TEST(GraphTest, BuildsEdgesTypesAndTopologicalOrder) {
  auto g = Graph::Create(Chain());
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* b = (*g)->FindNode("b");
  ASSERT_NE(b, nullptr);
  EXPECT_THAT(b->input_types, ElementsAre(DT_FLOAT));
  ASSERT_EQ(b->in_edges.size(), 1u);
  EXPECT_EQ((*g)->nodes()[b->in_edges[0].src].name(), "a");
  std::vector<std::string> order;
  for (int id : (*g)->topological_order()) order.push_back((*g)->nodes()[id].name());
  auto pos = [&](const std::string& n) {
    return std::find(order.begin(), order.end(), n) - order.begin();
  };
  EXPECT_LT(pos("x"), pos("a"));
  EXPECT_LT(pos("a"), pos("b"));
  EXPECT_LT(pos("b"), pos("after_b"));
  // Round trip keeps every node (with defaults filled in).
  EXPECT_EQ((*g)->ToGraphDef().node_size(), Chain().node_size());
}

TEST(GraphTest, ValidationNamesNodeAndInput) {
  struct Bad {
    std::vector<proto::NodeDef> nodes;
    std::string message;
  };
  proto::NodeDef wrong_type = MakeNode("w", "Identity", {"c"});
  (*wrong_type.mutable_attr())["T"].set_type(proto::DT_INT32);
  proto::NodeDef c = MakeNode("c", "Placeholder");
  (*c.mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  proto::NodeDef no_attr = MakeNode("p", "Placeholder");
  for (const Bad& bad : std::vector<Bad>{
           {{MakeNode("a", "Bogus")}, "node 'a': Op type not registered 'Bogus'"},
           {{MakeNode("a", "NoOp"), MakeNode("a", "NoOp")}, "Duplicate node name in graph: 'a'"},
           {{MakeNode("i", "Identity", {"ghost"})},
            "input 'ghost' refers to a node that is not in the graph"},
           {{MakeNode("n", "NoOp"), MakeNode("i", "Identity", {"n"})},
            "asks for output 0 of 'n', which has 0 outputs"},
           {{c, wrong_type}, "node 'w': input 0 ('c') is float but op Identity expects int32"},
           {{MakeNode("i", "Identity")}, "node 'i' (op Identity) has 0 inputs, expected 1"},
           {{no_attr}, "node \"p\" (op Placeholder) is missing attribute \"dtype\""},
           {{MakeNode("n", "NoOp"), MakeNode("i", "Identity", {"^n", "n"})},
            "comes after a control input"},
           {{MakeNode("p", "Identity", {"q"}), MakeNode("q", "Identity", {"p"})},
            "cycle through 'p', 'q'"},
       }) {
    proto::GraphDef def;
    for (const auto& n : bad.nodes) *def.add_node() = n;
    auto g = Graph::Create(def);
    ASSERT_FALSE(g.ok()) << bad.message;
    EXPECT_TRUE(IsInvalidArgument(g.status()));
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(bad.message));
  }
}

TEST(PruneTest, KeepsOnlyWhatFetchesAndTargetsNeed) {
  auto pruned = PruneForStep(Chain(), {"x:0"}, {"b:0"}, {});
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  std::vector<std::string> names;
  for (const auto& n : pruned->node()) names.push_back(n.name());
  EXPECT_THAT(names, ElementsAre("_arg_x_0", "a", "b", "_retval_b_0_0"));
  EXPECT_EQ(pruned->node(1).input(0), "_arg_x_0");  // the feed replaces the placeholder
  auto with_target = PruneForStep(Chain(), {"a:0"}, {}, {"after_b"});
  ASSERT_TRUE(with_target.ok());
  names.clear();
  for (const auto& n : with_target->node()) names.push_back(n.name());
  EXPECT_THAT(names, ElementsAre("_arg_a_0", "b", "after_b"));  // feeding a cuts off x
}

TEST(PruneTest, UnknownNamesAreInvalidArgument) {
  EXPECT_THAT(std::string(PruneForStep(Chain(), {"zz:0"}, {}, {}).status().message()),
              HasSubstr("Tensor zz:0 was not found in the graph"));
  EXPECT_THAT(std::string(PruneForStep(Chain(), {}, {"b:3"}, {}).status().message()),
              HasSubstr("b has 1 outputs"));
  EXPECT_THAT(std::string(PruneForStep(Chain(), {"x:0", "x"}, {}, {}).status().message()),
              HasSubstr("fed twice"));
}

TEST(DotTest, ColoursNodesByDeviceAndDrawsEdges) {
  Scope root = Scope::NewRootScope();
  auto v = ops::Identity(root.WithOpName("on_ps").WithDevice("/job:ps/task:0"), 1.0f);
  ops::Identity(root.WithOpName("on_worker").WithDevice("/job:worker/task:0"), v);
  const std::string dot = GraphToDot(*root.ToGraphDef());
  EXPECT_THAT(dot, HasSubstr("digraph tensorweave {"));
  EXPECT_THAT(
      dot,
      HasSubstr("\"on_ps\" [label=\"on_ps\\nIdentity\\n/job:ps/task:0\", fillcolor=\"#a6cee3\"]"));
  EXPECT_THAT(dot, HasSubstr("fillcolor=\"#b2df8a\""));  // a second device, a second colour
  EXPECT_THAT(dot, HasSubstr("\"on_ps\" -> \"on_worker\";"));
}

}  // namespace
}  // namespace tw
