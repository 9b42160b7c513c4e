// Placement and partitioning, and running the partitions of one graph on two devices in
// one process through a shared rendezvous: the distributed runtime without the network.
#include "src/graph/partition.h"

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/framework/rendezvous.h"
#include "src/graph/graph.h"
#include "src/graph/placer.h"
#include "src/runtime/cpu_device.h"
#include "src/runtime/executor.h"
#include "tensorweave/ops.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

const std::string kPs = "/job:ps/replica:0/task:0/device:CPU:0";
const std::string kWorker = "/job:worker/replica:0/task:0/device:CPU:0";
const std::string kWorker1 = "/job:worker/replica:0/task:1/device:CPU:0";

const proto::NodeDef* Find(const proto::GraphDef& g, const std::string& name) {
  for (const auto& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

// A bool attribute of `node` (absent: the default, false).
bool Flag(const proto::NodeDef& node, const std::string& name) {
  auto it = node.attr().find(name);
  return it != node.attr().end() && it->second.b();
}

// Whether some `op` node of `part` has bool attribute `name` set.
bool AnyMarked(const proto::GraphDef& part, const std::string& op, const std::string& name) {
  for (const auto& n : part.node()) {
    if (n.op() == op && Flag(n, name)) return true;
  }
  return false;
}

TEST(PlacerTest, PlacesByRequestColocationAndDefault) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps"), "v", DT_FLOAT, {});
  auto read = ops::ReadVariable(root.WithOpName("read"), v);
  auto w1 = ops::Identity(root.WithOpName("w1").WithDevice("/task:1"), read);
  auto here = ops::Identity(root.WithOpName("here"), w1);
  proto::GraphDef g = *root.ToGraphDef();
  // A GraphDef from elsewhere may lack the colocation the builder adds: the resource edge
  // alone must keep the reader with its variable.
  for (auto& n : *g.mutable_node()) {
    if (n.name() == "read") {
      n.mutable_attr()->erase("_class");
      n.set_device("");
    }
  }
  ASSERT_TRUE(PlaceGraph({kPs, kWorker, kWorker1}, kWorker, &g).ok());
  EXPECT_EQ(Find(g, "v")->device(), kPs);
  EXPECT_EQ(Find(g, "read")->device(), kPs);
  EXPECT_EQ(Find(g, "w1")->device(), kWorker1);
  EXPECT_EQ(Find(g, "here")->device(), kWorker);  // unplaced: the master's device
}

TEST(PlacerTest, UnplacedGeneratorsFollowTheirOnlyConsumerDevice) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithOpName("v").WithDevice("/job:ps"), "v", DT_FLOAT, {});
  auto fed = ops::Placeholder(root.WithOpName("fed"), DT_FLOAT);
  ops::AssignAdd(root.WithOpName("add"), v, fed);
  // Consumers on two devices: the generator stays on the default device.
  auto shared = ops::Const(root.WithOpName("shared"), Tensor::Scalar<float>(1));
  ops::AssignAdd(root.WithOpName("add2"), v, shared);
  ops::Identity(root.WithOpName("here").WithDevice("/job:worker/task:1"), shared);
  // An explicit device is kept.
  auto pinned = ops::Const(root.WithOpName("pinned").WithDevice("/job:worker/task:1"),
                           Tensor::Scalar<float>(2));
  ops::AssignAdd(root.WithOpName("add3"), v, pinned);
  proto::GraphDef g = *root.ToGraphDef();
  ASSERT_TRUE(PlaceGraph({kPs, kWorker, kWorker1}, kWorker, &g).ok());
  EXPECT_EQ(Find(g, "add")->device(), kPs);
  EXPECT_EQ(Find(g, "fed")->device(), kPs);
  EXPECT_EQ(Find(g, "shared")->device(), kWorker);
  EXPECT_EQ(Find(g, "pinned")->device(), kWorker1);
}

TEST(PlacerTest, ImpossibleOrConflictingPlacementNamesTheNode) {
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("far").WithDevice("/job:ps/task:3"), Tensor::Scalar<float>(1));
  proto::GraphDef g = *root.ToGraphDef();
  Status s = PlaceGraph({kPs, kWorker}, kWorker, &g);
  EXPECT_TRUE(IsInvalidArgument(s));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("Cannot assign a device for node 'far': no device matches /job:ps/task:3"));

  Scope other = Scope::NewRootScope();
  auto a = ops::Const(other.WithOpName("a").WithDevice("/job:ps"), Tensor::Scalar<float>(1));
  ops::NoOp(other.WithOpName("b").ColocateWith(a.op()));
  proto::GraphDef h = *other.ToGraphDef();
  // The builder gives a colocated node its target's device; a GraphDef from elsewhere may
  // ask for another.
  for (auto& node : *h.mutable_node()) {
    if (node.name() == "b") node.set_device("/job:worker");
  }
  EXPECT_THAT(std::string(PlaceGraph({kPs, kWorker}, kWorker, &h).message()),
              HasSubstr("Cannot colocate nodes 'b' and 'a': Cannot merge devices with incompatible "
                        "jobs: '/job:ps' and '/job:worker'"));
}

TEST(PartitionTest, CrossDeviceEdgesBecomeSendRecvPairs) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root.WithOpName("c").WithDevice(kPs), Tensor::Scalar<float>(2));
  auto a = ops::Identity(root.WithOpName("a").WithDevice(kWorker), c);
  auto b = ops::Identity(root.WithOpName("b").WithDevice(kWorker), c);  // same edge, reused
  ops::NoOp(root.WithOpName("after").WithDevice(kWorker).WithControlDependencies({c.op()}));
  auto parts = PartitionGraph(*root.ToGraphDef(),
                              {.incarnation = [](const std::string&) { return uint64_t{42}; }});
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  const proto::GraphDef& ps = parts->at(kPs);
  const proto::GraphDef& worker = parts->at(kWorker);
  int sends = 0, recvs = 0;
  for (const auto& n : ps.node()) sends += n.op() == "_Send";
  for (const auto& n : worker.node()) recvs += n.op() == "_Recv";
  EXPECT_EQ(sends, 2);  // one data edge (shared by a and b), one control edge
  EXPECT_EQ(recvs, 2);
  EXPECT_EQ(Find(worker, "a")->input(0), Find(worker, "b")->input(0));
  EXPECT_THAT(Find(worker, "after")->input(0), HasSubstr("^edge_"));
  const proto::NodeDef* recv = Find(worker, Find(worker, "a")->input(0));
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->attr().at("send_device_incarnation").i(), 42);
  EXPECT_EQ(recv->attr().at("send_device").s(), kPs);
  // Each partition is a valid graph on its own.
  EXPECT_TRUE(Graph::Create(ps).ok());
  EXPECT_TRUE(Graph::Create(worker).ok());
}

// The shape of a parameter-server step: the ps's weights go to the worker, gradients come
// back and update them, and the worker reads a value that exists only after the update.
// Each side may pull the tensors it gets from the other in one call, except that value: the
// ps produces it only after receiving the worker's gradient, so asking for it together with
// the weights would wait forever.
TEST(PartitionTest, PrefetchMarksTheTensorsASourceProducesOnItsOwn) {
  Scope root = Scope::NewRootScope();
  auto w = ops::MakeVariable(root.WithOpName("w").WithDevice(kPs), "w", DT_FLOAT, {});
  auto b = ops::MakeVariable(root.WithOpName("b").WithDevice(kPs), "b", DT_FLOAT, {});
  auto read_w = ops::ReadVariable(root.WithOpName("read_w").WithDevice(kPs), w);
  auto read_b = ops::ReadVariable(root.WithOpName("read_b").WithDevice(kPs), b);
  auto grad_w = ops::Mul(root.WithOpName("grad_w").WithDevice(kWorker), read_w, read_b);
  auto grad_b = ops::Add(root.WithOpName("grad_b").WithDevice(kWorker), read_w, read_b);
  auto update_w = ops::AssignAdd(root.WithOpName("update_w").WithDevice(kPs), w, grad_w);
  ops::AssignAdd(root.WithOpName("update_b").WithDevice(kPs), b, grad_b);
  auto updated = ops::ReadVariable(
      root.WithOpName("updated").WithDevice(kPs).WithControlDependencies({update_w.op()}), w);
  ops::Identity(root.WithOpName("seen").WithDevice(kWorker), updated);
  auto parts = PartitionGraph(*root.ToGraphDef(), {});
  ASSERT_TRUE(parts.ok()) << parts.status();
  // The _Recv feeding `node`'s input `i` in `device`'s partition, and whether it prefetches.
  auto prefetch = [&](const std::string& device, const std::string& node, int i) {
    const proto::GraphDef& part = parts->at(device);
    const proto::NodeDef* recv = Find(part, Find(part, node)->input(i));
    EXPECT_NE(recv, nullptr) << node;
    EXPECT_EQ(recv->op(), "_Recv") << node;
    return Flag(*recv, "prefetch");
  };
  EXPECT_TRUE(prefetch(kWorker, "grad_w", 0));  // read_w
  EXPECT_TRUE(prefetch(kWorker, "grad_w", 1));  // read_b
  EXPECT_TRUE(prefetch(kPs, "update_w", 1));    // grad_w
  EXPECT_TRUE(prefetch(kPs, "update_b", 1));    // grad_b
  EXPECT_FALSE(prefetch(kWorker, "seen", 0));   // updated
  // Both sides batch, and the weights need nothing of the gradients: the ps pushes them
  // with its pull of the gradients.
  auto attr = [&](const std::string& device, const std::string& node, const std::string& name) {
    return Flag(*Find(parts->at(device), node), name);
  };
  auto recv_of = [&](const std::string& device, const std::string& node, int i) {
    return Find(parts->at(device), node)->input(i);
  };
  auto send_of = [&](const std::string& recv) {  // "edge_N_x/recv" -> "edge_N_x/send"
    return recv.substr(0, recv.size() - 4) + "send";
  };
  for (int i : {0, 1}) {
    const std::string weight = recv_of(kWorker, "grad_w", i);
    EXPECT_TRUE(attr(kWorker, weight, "pushed")) << weight;
    EXPECT_TRUE(attr(kPs, send_of(weight), "push")) << weight;
  }
  for (const char* update : {"update_w", "update_b"}) {
    const std::string gradient = recv_of(kPs, update, 1);
    EXPECT_FALSE(attr(kPs, gradient, "pushed")) << gradient;
    EXPECT_FALSE(attr(kWorker, send_of(gradient), "push")) << gradient;
  }
  EXPECT_FALSE(attr(kWorker, recv_of(kWorker, "seen", 0), "pushed"));
}

// Both sides batch, but the ps's tensor is computed from the worker's: the ps cannot push
// it with its pull of the worker's (that pull would wait for it), so the worker pushes
// its tensor with its pull of the ps's instead.
TEST(PartitionTest, OnlyTheSideWhoseBatchNeedsNothingOfTheOtherPushes) {
  Scope root = Scope::NewRootScope();
  auto b = ops::Const(root.WithOpName("b").WithDevice(kWorker), Tensor::Scalar<float>(2));
  auto a = ops::Neg(root.WithOpName("a").WithDevice(kPs), b);
  ops::Identity(root.WithOpName("k").WithDevice(kWorker), a);
  auto parts = PartitionGraph(*root.ToGraphDef(), {});
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_TRUE(AnyMarked(parts->at(kWorker), "_Send", "push"));
  EXPECT_TRUE(AnyMarked(parts->at(kPs), "_Recv", "pushed"));
  EXPECT_FALSE(AnyMarked(parts->at(kPs), "_Send", "push"));
  EXPECT_FALSE(AnyMarked(parts->at(kWorker), "_Recv", "pushed"));
}

// Each device batches what it receives from the other, and each batch needs a value the
// other side computes from its own batch: both batches together would wait for each other,
// so at most one of them is prefetched.
TEST(PartitionTest, PrefetchNeverLetsTwoBatchesWaitForEachOther) {
  Scope root = Scope::NewRootScope();
  auto a1 = ops::Const(root.WithOpName("a1").WithDevice(kPs), Tensor::Scalar<float>(1));
  auto b1 = ops::Const(root.WithOpName("b1").WithDevice(kWorker), Tensor::Scalar<float>(2));
  auto a2 = ops::Identity(root.WithOpName("a2").WithDevice(kPs), b1);
  auto b2 = ops::Identity(root.WithOpName("b2").WithDevice(kWorker), a1);
  ops::Identity(root.WithOpName("h").WithDevice(kPs), b2);
  ops::Identity(root.WithOpName("k").WithDevice(kWorker), a2);
  auto parts = PartitionGraph(*root.ToGraphDef(), {});
  ASSERT_TRUE(parts.ok()) << parts.status();
  auto batched = [&](const std::string& device) {  // whether any _Recv prefetches
    return AnyMarked(parts->at(device), "_Recv", "prefetch");
  };
  EXPECT_FALSE(batched(kPs) && batched(kWorker));
  EXPECT_TRUE(batched(kPs) || batched(kWorker));  // one batch alone is fine
}

// As above, with the dependence through a third device: the ps's tensor is computed from
// the worker's after a round trip through another ps task. The ps still must not push.
TEST(PartitionTest, APushNeverWaitsForItsOwnPullThroughAThirdDevice) {
  const std::string kPs1 = "/job:ps/replica:0/task:1/device:CPU:0";
  Scope root = Scope::NewRootScope();
  auto b = ops::Const(root.WithOpName("b").WithDevice(kWorker), Tensor::Scalar<float>(2));
  auto e = ops::Neg(root.WithOpName("e").WithDevice(kPs), b);
  auto c = ops::Neg(root.WithOpName("c").WithDevice(kPs1), e);
  auto a = ops::Neg(root.WithOpName("a").WithDevice(kPs), c);
  ops::Identity(root.WithOpName("k").WithDevice(kWorker), a);
  auto parts = PartitionGraph(*root.ToGraphDef(), {});
  ASSERT_TRUE(parts.ok()) << parts.status();
  // The _Send of `node`'s output in `device`'s partition toward `to`, and whether it pushes.
  auto pushes = [&](const std::string& device, const std::string& node, const std::string& to) {
    for (const auto& n : parts->at(device).node()) {
      if (n.op() != "_Send" || n.input(0) != node || n.attr().at("recv_device").s() != to) {
        continue;
      }
      return Flag(n, "push");
    }
    ADD_FAILURE() << "no _Send of " << node << " to " << to;
    return false;
  };
  EXPECT_FALSE(pushes(kPs, "a", kWorker));
  EXPECT_TRUE(pushes(kWorker, "b", kPs));
}

// Runs one step of `graph` over several devices in this process.
class TwoDeviceRunner {
 public:
  TwoDeviceRunner() {
    for (const std::string& name : {kPs, kWorker}) {
      devices_.push_back(*CpuDevice::Create(*DeviceName::Parse(name), {.num_threads = 1}));
    }
  }
  CpuDevice* device(int i) { return devices_[i].get(); }

  StatusOr<std::vector<Tensor>> Run(const proto::GraphDef& graph,
                                    const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets) {
    std::vector<std::string> feed_names;
    std::vector<Tensor> args;
    for (const auto& [name, value] : feeds) {
      feed_names.push_back(name);
      args.push_back(value);
    }
    TW_ASSIGN_OR_RETURN(proto::GraphDef step, PruneForStep(graph, feed_names, fetches, targets));
    TW_RETURN_IF_ERROR(PlaceGraph({kPs, kWorker}, kWorker, &step));
    PartitionOptions options;
    options.incarnation = [this](const std::string& d) {
      return d == kPs ? devices_[0]->incarnation() : devices_[1]->incarnation();
    };
    TW_ASSIGN_OR_RETURN(auto parts, PartitionGraph(step, options));
    std::vector<std::unique_ptr<Executor>> executors;
    for (auto& [device, part] : parts) {
      TW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, Graph::Create(part));
      TW_ASSIGN_OR_RETURN(
          auto ex, Executor::Create(std::move(g), device == kPs ? device_ptr(0) : device_ptr(1)));
      executors.push_back(std::move(ex));
    }
    LocalRendezvous rendezvous;
    CancellationManager cm;
    CallFrame frame(std::move(args), fetches.size());
    Executor::Args run_args;
    run_args.call_frame = &frame;
    run_args.rendezvous = &rendezvous;
    run_args.cancellation_manager = &cm;
    absl::Mutex mu;
    Status root_cause, follow_on;  // follow-on: Cancelled/Aborted caused by the root cause
    int pending = static_cast<int>(executors.size());
    for (auto& ex : executors) {
      ex->RunAsync(run_args, [&](const Status& s) {
        if (!s.ok()) {
          rendezvous.StartAbort(s);  // wakes Recvs in other partitions
          cm.StartCancel();
        }
        absl::MutexLock lock(&mu);
        Status& slot = IsCancelled(s) || IsAborted(s) ? follow_on : root_cause;
        if (slot.ok()) slot = s;
        --pending;
      });
    }
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* p) { return *p == 0; }, &pending));
    TW_RETURN_IF_ERROR(root_cause);
    TW_RETURN_IF_ERROR(follow_on);
    return frame.retvals();
  }

 private:
  DeviceBase* device_ptr(int i) { return devices_[i].get(); }
  std::vector<std::unique_ptr<CpuDevice>> devices_;
};

TEST(TwoDeviceTest, VariableOnPsUpdatedAndReadFromWorker) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "total", DT_INT64, {});
  auto init = ops::Assign(root.WithOpName("init"), v, int64_t{0});
  auto x = ops::Placeholder(root.WithOpName("x"), DT_INT64);
  auto doubled = ops::Add(root.WithOpName("doubled"), x, x);  // on the worker
  auto add = ops::AssignAdd(root.WithOpName("add"), v, doubled);
  auto read = ops::ReadVariable(root.WithOpName("read"), v);
  auto local_copy = ops::Identity(root.WithOpName("local_copy"), read);
  proto::GraphDef graph = *root.ToGraphDef();
  TwoDeviceRunner runner;
  ASSERT_TRUE(runner.Run(graph, {}, {}, {"init"}).ok());
  for (int i = 1; i <= 3; ++i) {
    auto out = runner.Run(graph, {{"x:0", Tensor::Scalar<int64_t>(i)}}, {}, {"add"});
    ASSERT_TRUE(out.ok()) << out.status();
  }
  auto out = runner.Run(graph, {}, {"local_copy:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 12);                   // 2 * (1 + 2 + 3)
  EXPECT_EQ(runner.device(0)->resource_manager()->size(), 1u);  // the variable is on ps
  EXPECT_EQ(runner.device(1)->resource_manager()->size(), 0u);
}

TEST(TwoDeviceTest, AnErrorOnOneDeviceEndsTheStepEverywhere) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "never_set", DT_FLOAT, {});
  auto read = ops::ReadVariable(root.WithOpName("read"), v);
  auto copy = ops::Identity(root.WithOpName("copy"), read);  // waits in a _Recv on the worker
  TwoDeviceRunner runner;
  auto out = runner.Run(*root.ToGraphDef(), {}, {"copy:0"}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsFailedPrecondition(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node read (ReadVariable)"));
}

}  // namespace
}  // namespace tw
