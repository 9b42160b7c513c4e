#include "tensorweave/train/device_setter.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/train/variables.h"

namespace tw::train {
namespace {

using ::testing::HasSubstr;

// The device the builder gave node `name`.
std::string DeviceOf(const Scope& scope, const std::string& name) {
  auto graph = scope.ToGraphDef();
  EXPECT_TRUE(graph.ok()) << graph.status();
  for (const auto& node : graph->node()) {
    if (node.name() == name) return node.device();
  }
  ADD_FAILURE() << "no node " << name;
  return "";
}

TEST(ReplicaDeviceSetterTest, RoundRobinOverPsAndComputeOnTheWorker) {
  auto setter = ReplicaDeviceSetter({.ps_tasks = 2, .worker_device = "/job:worker/task:1"});
  ASSERT_TRUE(setter.ok()) << setter.status();
  Scope root = Scope::NewRootScope();
  Scope model = root.WithDeviceFunction(*setter);
  ModelVariables vars;
  auto step = CreateGlobalStep(model, &vars);
  auto a = ops::MakeVariable(model, "a", DT_FLOAT, {2});
  auto b = ops::MakeVariable(model, "b", DT_FLOAT, {2});
  auto c = ops::MakeVariable(model, "c", DT_FLOAT, {2});
  auto sum =
      ops::Add(model.WithOpName("sum"), ops::ReadVariable(model.WithOpName("read_a"), a), 1.0f);
  // A slot made beside `b` follows it and does not take a turn of the round robin.
  auto slot = ops::MakeVariable(model.ColocateWith(b.op()), "b_slot", DT_FLOAT, {2});
  auto d = ops::MakeVariable(model, "d", DT_FLOAT, {2});
  EXPECT_EQ(DeviceOf(root, "global_step"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(root, "a"), "/job:ps/task:0");  // the global step took no turn
  EXPECT_EQ(DeviceOf(root, "b"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(root, "c"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(root, "b_slot"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(root, "d"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(root, "read_a"), "/job:ps/task:0");  // uses a's resource
  EXPECT_EQ(DeviceOf(root, "sum"), "/job:worker/task:1");
  (void)step;
  (void)sum;
  (void)slot;
  (void)c;
  (void)d;
}

TEST(ReplicaDeviceSetterTest, GreedyBalancesBytes) {
  auto setter = ReplicaDeviceSetter({.ps_tasks = 2, .strategy = PsStrategy::kGreedyBytes});
  ASSERT_TRUE(setter.ok());
  Scope root = Scope::NewRootScope();
  Scope model = root.WithDeviceFunction(*setter);
  ops::MakeVariable(model, "big", DT_FLOAT, {1000, 100});    // 400 KB -> ps 0
  ops::MakeVariable(model, "small1", DT_FLOAT, {10});        // -> ps 1
  ops::MakeVariable(model, "small2", DT_DOUBLE, {100});      // ps 1 still lighter
  ops::MakeVariable(model, "medium", DT_FLOAT, {200, 100});  // ps 1: 80 KB + 840 B
  ops::MakeVariable(model, "next", DT_FLOAT, {1});           // ps 1 still lighter
  EXPECT_EQ(DeviceOf(root, "big"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(root, "small1"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(root, "small2"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(root, "medium"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(root, "next"), "/job:ps/task:1");
}

TEST(ReplicaDeviceSetterTest, ScopeDevicesOverrideTheSetter) {
  auto setter = ReplicaDeviceSetter({.ps_tasks = 3, .worker_device = "/job:worker/task:0"});
  ASSERT_TRUE(setter.ok());
  Scope root = Scope::NewRootScope();
  Scope model = root.WithDeviceFunction(*setter);
  ops::MakeVariable(model.WithDevice("/task:2"), "pinned", DT_FLOAT, {});
  ops::MakeVariable(model.WithDevice("/job:worker/task:1"), "local", DT_FLOAT, {});
  ops::Const(model.WithDevice("/job:chief").WithOpName("c"), Tensor::Scalar<float>(1));
  EXPECT_EQ(DeviceOf(root, "pinned"), "/job:ps/task:2");
  EXPECT_EQ(DeviceOf(root, "local"), "/job:worker/task:1");
  EXPECT_EQ(DeviceOf(root, "c"), "/job:chief/task:0");
}

// As TensorFlow's replica_device_setter: a variable pinned to a job other than the ps job
// keeps that job, gets no ps task number and takes no turn of the round robin.
TEST(ReplicaDeviceSetterTest, VariablesOfAnotherJobGetNoPsTaskAndTakeNoTurn) {
  auto setter = ReplicaDeviceSetter({.ps_tasks = 2, .worker_device = "/job:worker/task:0"});
  ASSERT_TRUE(setter.ok());
  Scope root = Scope::NewRootScope();
  Scope model = root.WithDeviceFunction(*setter);
  ops::MakeVariable(model, "a", DT_FLOAT, {});
  ops::MakeVariable(model.WithDevice("/job:moon"), "moon", DT_FLOAT, {});
  ops::MakeVariable(model.WithDevice("/job:worker/task:1"), "local", DT_FLOAT, {});
  ops::MakeVariable(model, "b", DT_FLOAT, {});
  ops::MakeVariable(model.WithDevice("/job:ps"), "on_ps", DT_FLOAT, {});
  ops::MakeVariable(model, "c", DT_FLOAT, {});
  EXPECT_EQ(DeviceOf(root, "a"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(root, "moon"), "/job:moon");
  EXPECT_EQ(DeviceOf(root, "local"), "/job:worker/task:1");
  EXPECT_EQ(DeviceOf(root, "b"), "/job:ps/task:1");      // the next turn after a
  EXPECT_EQ(DeviceOf(root, "on_ps"), "/job:ps/task:0");  // the ps job itself takes a turn
  EXPECT_EQ(DeviceOf(root, "c"), "/job:ps/task:1");
}

TEST(ReplicaDeviceSetterTest, ClusterGivesThePsCountAndBadOptionsAreNamed) {
  auto cluster = ClusterSpec::FromJson(R"({"ps": ["a:1", "b:1"], "worker": ["c:1"]})");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto setter = ReplicaDeviceSetter(*cluster, {});
  ASSERT_TRUE(setter.ok());
  Scope root = Scope::NewRootScope();
  Scope model = root.WithDeviceFunction(*setter);
  ops::MakeVariable(model, "x", DT_FLOAT, {});
  ops::MakeVariable(model, "y", DT_FLOAT, {});
  EXPECT_EQ(DeviceOf(root, "y"), "/job:ps/task:1");

  auto bad = ReplicaDeviceSetter({.ps_tasks = -1});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("ps_tasks must be >= 0, got -1"));
  bad = ReplicaDeviceSetter({.ps_tasks = 1, .worker_device = "/job:worker/nonsense"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("worker_device '/job:worker/nonsense'"));
}

}  // namespace
}  // namespace tw::train
