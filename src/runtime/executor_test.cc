#include "src/runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/framework/op_def.h"
#include "src/framework/op_kernel.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

TEST(ExecutorTest, FirstErrorAbortsTheStepAndWakesWaitingKernels) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root, {DT_INT32});
  auto waits_forever = ops::QueueDequeue(root, q);
  // x runs after the queue exists and after the dequeue has started waiting.
  auto x = ops::Placeholder(root.WithOpName("x").WithControlDependencies({q.op()}), DT_FLOAT);
  auto fails = ops::Identity(root.WithOpName("fails"), x);
  ClientSession session(root);
  // Without the abort cancelling the dequeue, this would hang until the timeout.
  auto out = session.Run({}, {waits_forever[0], fails}, {}, {.timeout = absl::Seconds(30)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node x (Placeholder)"));
}

TEST(ExecutorTest, RunsDirectlyWithACallFrame) {
  auto device =
      CpuDevice::Create(DeviceName::Full("localhost", 0, 0, "CPU", 0), {.num_threads = 1});
  ASSERT_TRUE(device.ok());
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_INT32);
  ops::Identity(root.WithOpName("y"), x);
  auto pruned = PruneForStep(*root.ToGraphDef(), {"x:0"}, {"y:0"}, {});
  ASSERT_TRUE(pruned.ok());
  auto graph = Graph::Create(*pruned);
  ASSERT_TRUE(graph.ok());
  auto executor = Executor::Create(*std::move(graph), device->get());
  ASSERT_TRUE(executor.ok()) << executor.status();
  CancellationManager cm;
  for (int i = 0; i < 3; ++i) {
    CallFrame frame({Tensor::Scalar<int32_t>(i)}, 1);
    Executor::Args args;
    args.call_frame = &frame;
    args.cancellation_manager = &cm;
    ASSERT_TRUE((*executor)->Run(args).ok());
    EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), i);
  }
  // A cancelled step runs nothing and says so.
  cm.StartCancel();
  CallFrame frame({Tensor::Scalar<int32_t>(7)}, 1);
  Executor::Args args;
  args.call_frame = &frame;
  args.cancellation_manager = &cm;
  Status s = (*executor)->Run(args);
  EXPECT_TRUE(IsCancelled(s)) << s;
  EXPECT_FALSE(frame.retvals()[0].IsInitialized());
}

// Records, per step, whether its output was required.
TW_REGISTER_OP("TestOutputProbe").Output("out: int32").SetIsStateful().Doc("Test only.");
std::atomic<int> probe_required{-1};
class TestOutputProbeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    probe_required = ctx->output_required(0) ? 1 : 0;
    ctx->set_output(0, Tensor::Scalar<int32_t>(5));
  }
};
TW_REGISTER_KERNEL("TestOutputProbe", "CPU", TestOutputProbeOp);

TEST(ExecutorTest, KernelsLearnWhetherTheirOutputsAreRead) {
  Scope root = Scope::NewRootScope();
  proto::NodeDef probe;
  probe.set_name("probe");
  probe.set_op("TestOutputProbe");
  auto graph_def = root.ToGraphDef();
  ASSERT_TRUE(graph_def.ok());
  *graph_def->add_node() = probe;
  auto session = Session::Create();
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Extend(*graph_def).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {"probe"}, &out).ok());  // a target only
  EXPECT_EQ(probe_required.load(), 0);
  ASSERT_TRUE((*session)->Run({}, {"probe:0"}, {}, &out).ok());  // fetched
  EXPECT_EQ(probe_required.load(), 1);
  EXPECT_EQ(out[0].scalar<int32_t>(), 5);
}

// Records the thread each run happened on.
TW_REGISTER_OP("TestThreadProbe").Input("in: int32").Output("out: int32").Doc("Test only.");
absl::Mutex probe_mu;
std::vector<std::thread::id> probe_threads;
class TestThreadProbeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* ctx) override {
    {
      absl::MutexLock lock(&probe_mu);
      probe_threads.push_back(std::this_thread::get_id());
    }
    ctx->set_output(0, ctx->input(0));
  }
};
TW_REGISTER_KERNEL("TestThreadProbe", "CPU", TestThreadProbeOp);

// Two independent expensive nodes: on a device of two threads they run in parallel on its
// pool; on a device of one they run on the caller's thread, with no hand-off.
TEST(ExecutorTest, OnlyADeviceOfSeveralThreadsRunsNodesOnItsPool) {
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("c"), Tensor::Scalar<int32_t>(1));
  auto graph_def = root.ToGraphDef();
  ASSERT_TRUE(graph_def.ok());
  for (const char* name : {"p1", "p2"}) {
    proto::NodeDef* probe = graph_def->add_node();
    probe->set_name(name);
    probe->set_op("TestThreadProbe");
    probe->add_input("c");
  }
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    auto device =
        CpuDevice::Create(DeviceName::Full("localhost", 0, 0, "CPU", 0), {.num_threads = threads});
    ASSERT_TRUE(device.ok());
    auto graph = Graph::Create(*graph_def);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto executor = Executor::Create(*std::move(graph), device->get());
    ASSERT_TRUE(executor.ok()) << executor.status();
    {
      absl::MutexLock lock(&probe_mu);
      probe_threads.clear();
    }
    CancellationManager cm;
    Executor::Args args;
    args.cancellation_manager = &cm;
    ASSERT_TRUE((*executor)->Run(args).ok());
    absl::MutexLock lock(&probe_mu);
    ASSERT_EQ(probe_threads.size(), 2u);
    for (std::thread::id id : probe_threads) {
      EXPECT_EQ(id == std::this_thread::get_id(), threads == 1);
    }
  }
}

// The device takes its threads from its options only: TW_NUM_THREADS is read at the edges
// (`tw server`, RunConfig::runtime_settings()), never inside the library.
TEST(CpuDeviceTest, ThreadsComeFromTheOptionsNotTheEnvironment) {
  const DeviceName name = DeviceName::Full("localhost", 0, 0, "CPU", 0);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ASSERT_EQ(setenv("TW_NUM_THREADS", "3", 1), 0);
  EXPECT_EQ((*CpuDevice::Create(name, {}))->NumThreads(), cores);
  EXPECT_EQ((*CpuDevice::Create(name, {.num_threads = 3}))->NumThreads(), 3);
  ASSERT_EQ(unsetenv("TW_NUM_THREADS"), 0);
  EXPECT_EQ((*CpuDevice::Create(name, {}))->NumThreads(), cores);
}

TEST(ExecutorTest, KernelCreationErrorNamesTheNode) {
  auto device =
      CpuDevice::Create(DeviceName::Full("localhost", 0, 0, "CPU", 0), {.num_threads = 1});
  ASSERT_TRUE(device.ok());
  proto::GraphDef def;
  auto* n = def.add_node();
  n->set_name("bad_const");
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  (*n->mutable_attr())["value"] = MakeAttr(Tensor::Scalar<int32_t>(1));
  auto graph = Graph::Create(def);
  ASSERT_TRUE(graph.ok());
  auto executor = Executor::Create(*std::move(graph), device->get());
  ASSERT_FALSE(executor.ok());
  EXPECT_THAT(std::string(executor.status().message()),
              HasSubstr("node bad_const: Const value is int32 but dtype is float"));
}

}  // namespace
}  // namespace tw
