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

TEST(ReplicaDeviceSetterTest, PsDeviceWithADevicePartAndAnotherJob) {
  auto cluster = ClusterSpec::FromJson(R"({"param": ["a:1", "b:1", "c:1"], "worker": ["d:1"]})");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto setter = ReplicaDeviceSetter(*cluster, {.ps_device = "/job:param/device:CPU:0"});
  ASSERT_TRUE(setter.ok()) << setter.status();
  Scope root = Scope::NewRootScope();
  Scope model = root.WithDeviceFunction(*setter);
  ops::MakeVariable(model, "x", DT_FLOAT, {});
  ops::MakeVariable(model, "y", DT_FLOAT, {});
  ops::MakeVariable(model, "z", DT_FLOAT, {});
  ops::MakeVariable(model, "w", DT_FLOAT, {});
  EXPECT_EQ(DeviceOf(root, "x"), "/job:param/task:0/device:CPU:0");
  EXPECT_EQ(DeviceOf(root, "z"), "/job:param/task:2/device:CPU:0");
  EXPECT_EQ(DeviceOf(root, "w"), "/job:param/task:0/device:CPU:0");  // three tasks, not two
}

TEST(ReplicaDeviceSetterTest, WithoutMergeANamedDeviceIsKeptWhole) {
  auto setter = ReplicaDeviceSetter(
      {.ps_tasks = 2, .worker_device = "/job:worker/task:3", .merge_devices = false});
  ASSERT_TRUE(setter.ok());
  Scope root = Scope::NewRootScope();
  Scope model = root.WithDeviceFunction(*setter);
  ops::MakeVariable(model.WithDevice("/task:1"), "pinned", DT_FLOAT, {});
  ops::MakeVariable(model, "free", DT_FLOAT, {});
  ops::Const(model.WithDevice("/device:CPU:0").WithOpName("c"), Tensor::Scalar<float>(1));
  ops::Const(model.WithOpName("d"), Tensor::Scalar<float>(1));
  EXPECT_EQ(DeviceOf(root, "pinned"), "/task:1");
  EXPECT_EQ(DeviceOf(root, "free"), "/job:ps/task:0");  // the pinned one took no turn
  EXPECT_EQ(DeviceOf(root, "c"), "/device:CPU:0");
  EXPECT_EQ(DeviceOf(root, "d"), "/job:worker/task:3");
}

TEST(ReplicaDeviceSetterTest, CustomStrategyAndNoPsDevice) {
  std::vector<std::string> asked;
  auto setter = ReplicaDeviceSetter({.ps_tasks = 4,
                                     .strategy = PsStrategy::kCustom,
                                     .choose_task = [&asked](const proto::NodeDef& node) {
                                       asked.push_back(node.name());
                                       return static_cast<int>(asked.size()) * 3 % 4;
                                     }});
  ASSERT_TRUE(setter.ok());
  Scope root = Scope::NewRootScope();
  Scope model = root.WithDeviceFunction(*setter);
  ops::MakeVariable(model, "a", DT_FLOAT, {});
  ops::MakeVariable(model, "b", DT_FLOAT, {});
  EXPECT_EQ(DeviceOf(root, "a"), "/job:ps/task:3");
  EXPECT_EQ(DeviceOf(root, "b"), "/job:ps/task:2");
  EXPECT_THAT(asked, ::testing::ElementsAre("a", "b"));

  auto no_ps = ReplicaDeviceSetter({.ps_tasks = 2, .ps_device = ""});
  ASSERT_TRUE(no_ps.ok());
  Scope other = Scope::NewRootScope();
  ops::MakeVariable(other.WithDeviceFunction(*no_ps), "v", DT_FLOAT, {});
  EXPECT_EQ(DeviceOf(other, "v"), "/job:worker");

  auto bad = ReplicaDeviceSetter({.ps_tasks = 1, .strategy = PsStrategy::kCustom});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("no choose_task"));
  bad = ReplicaDeviceSetter({.ps_tasks = 1, .ps_device = "/job:ps/bogus"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("ps_device '/job:ps/bogus'"));
}

}  // namespace
}  // namespace tw::train
