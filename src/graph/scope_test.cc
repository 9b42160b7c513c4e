// The builder's contract for a node it refused: AddNode returns an invalid Operation, and
// every later use of it (an input, a control dependency, a colocation target) is an error
// naming that use, recorded like any other; never a crash, never a dependency dropped.
#include "tensorweave/scope.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// A node its own builder refused (an op nobody registered): what AddNode hands back.
Operation RefusedNode() {
  Scope elsewhere = Scope::NewRootScope();
  Operation refused = elsewhere.AddNode("NoSuchOp", {});
  EXPECT_FALSE(refused.valid());
  EXPECT_FALSE(elsewhere.ok());
  return refused;
}

TEST(ScopeTest, ARefusedNodeAsAControlDependencyIsAnError) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Scope after_refused = root.WithControlDependencies({RefusedNode()});
  EXPECT_TRUE(root.ok());  // nothing is built yet
  Operation n = ops::NoOp(after_refused.WithOpName("after"));
  EXPECT_FALSE(n.valid());
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("node after: a control dependency comes from a node that failed to "
                        "build"));
  EXPECT_FALSE(root.ToGraphDef().ok());
  EXPECT_TRUE(x.op().valid());
  // Leaving the dependencies behind leaves the refused one behind too.
  Scope fresh = Scope::NewRootScope();
  EXPECT_TRUE(fresh.WithControlDependencies({RefusedNode()})
                  .WithoutControlDependencies()
                  .TryAddNode("NoOp", {})
                  .ok());
}

// The result of a refused dequeue still has one Output per component, each invalid, so
// that `taken[0].op()` as a control dependency is the builder's error, not a read past the
// end of an empty vector.
TEST(ScopeTest, ARefusedDequeuesOutputsAsControlDependenciesAreAnError) {
  Scope root = Scope::NewRootScope();
  const ops::Queue refused_queue{Output(RefusedNode(), 0), {DT_STRING, DT_INT32}};
  std::vector<Output> outputs = ops::QueueDequeue(root.WithOpName("take"), refused_queue);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_FALSE(outputs[0].op().valid());
  EXPECT_FALSE(outputs[1].op().valid());
  EXPECT_FALSE(root.ok());

  Scope other = Scope::NewRootScope();
  auto after = other.WithControlDependencies({outputs[0].op(), outputs[1]}).TryAddNode("NoOp", {});
  ASSERT_FALSE(after.ok());
  EXPECT_THAT(std::string(after.status().message()),
              HasSubstr("a control dependency comes from a node that failed to build"));
  EXPECT_TRUE(other.ok());
}

TEST(ScopeTest, TryAddNodeWithARefusedControlDependencyLeavesTheGraphAsItWas) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  // The node the builder refused in the all-or-nothing mode: the caller holds no Operation,
  // only an invalid one it may have defaulted to.
  auto refused = root.WithOpName("sum").TryAddNode("Add", {InputList{x}, InputList{Input(3)}});
  ASSERT_FALSE(refused.ok());
  const Operation held = refused.value_or(Operation());
  auto after =
      root.WithOpName("after").WithControlDependencies({held, x.op()}).TryAddNode("NoOp", {});
  ASSERT_FALSE(after.ok());
  EXPECT_TRUE(IsInvalidArgument(after.status())) << after.status();
  EXPECT_THAT(std::string(after.status().message()),
              HasSubstr("control dependency comes from a node that failed to build"));
  EXPECT_TRUE(root.ok());  // the all-or-nothing mode records nothing
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->node_size(), 1);  // x only
  // The scope without the bad dependency builds as before.
  EXPECT_TRUE(
      root.WithOpName("after").WithControlDependencies({x.op()}).TryAddNode("NoOp", {}).ok());
}

TEST(ScopeTest, ARefusedNodeAsAnInputIsAnError) {
  Scope root = Scope::NewRootScope();
  auto refused = Output(RefusedNode(), 0);
  auto y = root.WithOpName("y").TryAddNode("Identity", {InputList{refused}});
  ASSERT_FALSE(y.ok());
  EXPECT_THAT(std::string(y.status().message()),
              HasSubstr("node y: input input comes from a node that failed to build"));
  ops::Identity(root.WithOpName("z"), refused);
  EXPECT_FALSE(root.ok());
}

TEST(ScopeTest, ARefusedNodeToColocateWithIsAnError) {
  Scope root = Scope::NewRootScope();
  Operation n = ops::NoOp(root.ColocateWith(RefusedNode()));
  EXPECT_FALSE(n.valid());
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("colocation target is a node that failed to build"));
}

// An Operation that names no node of this graph (from another root scope) is refused as a
// dependency, colocation target or resource input, not looked up blindly.
TEST(ScopeTest, ANodeOfAnotherGraphIsAnError) {
  Scope other = Scope::NewRootScope();
  auto variable = ops::MakeVariable(other, "v", DT_FLOAT, {});
  Operation foreign = ops::NoOp(other.WithOpName("foreign"));
  Scope root = Scope::NewRootScope();
  auto dep = root.WithControlDependencies({foreign}).TryAddNode("NoOp", {});
  ASSERT_FALSE(dep.ok());
  EXPECT_THAT(std::string(dep.status().message()), HasSubstr("no node named foreign"));
  auto colocated = root.ColocateWith(foreign).TryAddNode("NoOp", {});
  ASSERT_FALSE(colocated.ok());
  EXPECT_THAT(std::string(colocated.status().message()), HasSubstr("no node named foreign"));
  EXPECT_TRUE(root.ok());
  Output read = ops::ReadVariable(root.WithOpName("read"), variable);
  EXPECT_FALSE(read.op().valid());
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("no node named v"));
}

}  // namespace
}  // namespace tw
