#include "src/runtime/executor.h"

#include <atomic>

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
