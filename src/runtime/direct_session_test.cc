#include "src/runtime/direct_session.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// A negative count used to mean "the default" and 100000 started that many threads.
TEST(CpuDeviceTest, ThreadCountOutsideItsRangeIsInvalidArgument) {
  const DeviceName name = DeviceName::Full("localhost", 0, 0, "CPU", 0);
  for (int threads : {-5, -1, kMaxComputeThreads + 1, 100000}) {
    auto device = CpuDevice::Create(name, {.num_threads = threads});
    ASSERT_FALSE(device.ok()) << threads;
    EXPECT_TRUE(IsInvalidArgument(device.status())) << device.status();
    EXPECT_EQ(device.status().message(),
              "num_threads must be from 0 (one per core) to 1024, got " + std::to_string(threads));
  }
  for (int threads : {0, 1, 3}) {
    auto device = CpuDevice::Create(name, {.num_threads = threads});
    EXPECT_TRUE(device.ok()) << threads << ": " << device.status();
  }
}

TEST(DirectSessionTest, FetchesAConstantAndAFedPlaceholder) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, Tensor::Scalar<std::string>("Hello, distributed tensorweave!"));
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::Identity(root, x);
  ClientSession session(root);
  auto out = session.Run({{x, Tensor::FromVector<float>({1, 2})}}, {c, y, x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<std::string>(), "Hello, distributed tensorweave!");
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({1, 2}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<float>({1, 2}));  // a fed tensor can be fetched
}

TEST(DirectSessionTest, NodesBuiltAfterARunAreSentWithTheNextRun) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ClientSession session(root);
  auto first = session.Run({{x, Tensor::Scalar<float>(2)}}, {x});
  ASSERT_TRUE(first.ok()) << first.status();
  auto y = ops::Mul(root.WithOpName("y"), x, x);
  auto z = ops::Add(root.WithOpName("z"), y, x);
  auto out = session.Run({{x, Tensor::Scalar<float>(3)}}, {z, y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 12);
  EXPECT_EQ((*out)[1].scalar<float>(), 9);

  auto since = root.NodesSince(1);  // x was the first node
  ASSERT_TRUE(since.ok()) << since.status();
  ASSERT_EQ(since->node_size(), 2);
  EXPECT_EQ(since->node(0).name(), "y");
  EXPECT_EQ(since->node(1).name(), "z");
  EXPECT_EQ(root.NodesSince(3)->node_size(), 0);
}

TEST(DirectSessionTest, UnfedPlaceholderErrorNamesTheNode) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_INT64);
  auto y = ops::Identity(root.WithOpName("y"), x);
  ClientSession session(root);
  auto out = session.Run({}, {y});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(
      out.status().message(),
      "node x (Placeholder): You must feed a value for placeholder tensor 'x' with dtype int64");
}

TEST(DirectSessionTest, FedValuesAreCheckedAgainstTypeAndShape) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = std::vector<int64_t>{-1, 2}});
  auto y = ops::Identity(root, x);
  ClientSession session(root);
  auto wrong_type = session.Run({{x, Tensor::Scalar<int32_t>(1)}}, {y});
  EXPECT_THAT(std::string(wrong_type.status().message()),
              HasSubstr("Fed value for x:0 is int32, but the graph expects float"));
  auto wrong_shape = session.Run({{x, Tensor::FromVector<float>({1, 2, 3})}}, {y});
  EXPECT_THAT(std::string(wrong_shape.status().message()),
              HasSubstr("Cannot feed value of shape [3] for tensor x:0, which has shape [?,2]"));
  auto ok = session.Run({{x, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))}}, {y});
  EXPECT_TRUE(ok.ok()) << ok.status();
}

TEST(DirectSessionTest, UnknownNamesAndImpossiblePlacementAreInvalidArgument) {
  auto session = Session::Create();
  ASSERT_TRUE(session.ok());
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root.WithOpName("c").WithDevice("/job:ps/task:0"), Tensor::Scalar<float>(1));
  auto local =
      ops::Const(root.WithOpName("local").WithDevice("/device:CPU:0"), Tensor::Scalar<float>(2));
  ASSERT_TRUE((*session)->Extend(*root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  EXPECT_THAT(std::string((*session)->Run({}, {"nope:0"}, {}, &out).message()),
              HasSubstr("Tensor nope:0 was not found in the graph"));
  EXPECT_THAT(std::string((*session)->Run({}, {"c:1"}, {}, &out).message()),
              HasSubstr("c has 1 outputs"));
  EXPECT_THAT(std::string((*session)->Run({}, {}, {"ghost"}, &out).message()),
              HasSubstr("Target node ghost was not found"));
  EXPECT_THAT(std::string((*session)->Run({}, {"c:0"}, {}, &out).message()),
              HasSubstr("Cannot assign a device for node 'c': it asks for /job:ps/task:0"));
  EXPECT_TRUE((*session)->Run({}, {"local:0"}, {}, &out).ok());
}

TEST(DirectSessionTest, ExtendRejectsDuplicatesAndBadGraphs) {
  auto session = Session::Create();
  ASSERT_TRUE(session.ok());
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("a"), Tensor::Scalar<float>(1));
  proto::GraphDef g = *root.ToGraphDef();
  ASSERT_TRUE((*session)->Extend(g).ok());
  EXPECT_THAT(std::string((*session)->Extend(g).message()),
              HasSubstr("Duplicate node name in graph: 'a'"));
  proto::GraphDef bad;
  auto* n = bad.add_node();
  n->set_name("b");
  n->set_op("Identity");
  n->add_input("missing");
  (*n->mutable_attr())["T"].set_type(proto::DT_FLOAT);
  EXPECT_THAT(std::string((*session)->Extend(bad).message()),
              HasSubstr("node 'b': input 'missing' refers to a node that is not in the graph"));
  proto::GraphDef cycle;
  for (const char* name : {"p", "q"}) {
    auto* m = cycle.add_node();
    m->set_name(name);
    m->set_op("Identity");
    m->add_input(std::string(name) == "p" ? "q" : "p");
    (*m->mutable_attr())["T"].set_type(proto::DT_FLOAT);
  }
  EXPECT_THAT(std::string((*session)->Extend(cycle).message()), HasSubstr("cycle"));
}

TEST(DirectSessionTest, TargetsRunForEffectAndManyThreadsMayRun) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_INT32);
  auto y = ops::Identity(root, x);
  auto noop = ops::NoOp(root.WithControlDependencies({y}));
  ClientSession session(root);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto out = session.Run({{x, Tensor::Scalar<int32_t>(t * 1000 + i)}}, {y}, {noop});
        if (out.ok() && (*out)[0].scalar<int32_t>() == t * 1000 + i) ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 8 * 200);
}

TEST(DirectSessionTest, ClosedSessionRefusesSteps) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, Tensor::Scalar<float>(1));
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {c}).ok());
  ASSERT_TRUE(session.Close().ok());
  EXPECT_TRUE(IsCancelled(session.Run({}, {c}).status()));
}

TEST(DirectSessionTest, AStepCancelledByTheCallerEndsAndTheSessionGoesOn) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root, {DT_INT32});
  auto take = ops::QueueDequeue(root, q);
  auto put = ops::QueueEnqueue(root, q, {Input(7)});
  ClientSession session(root);
  for (bool before : {true, false}) {
    StepCancellation cancellation;
    if (before) cancellation.Cancel();
    // Whenever the other thread's Cancel lands (before the dequeue waits or while it
    // waits), the step ends with Cancelled: it would hang otherwise.
    std::thread canceller([&] { cancellation.Cancel(); });
    auto out = session.Run({}, take, {}, {.cancellation = &cancellation});
    canceller.join();
    ASSERT_TRUE(IsCancelled(out.status())) << out.status();
    EXPECT_THAT(std::string(out.status().message()), HasSubstr("cancelled by the caller"));
  }
  // The cancelled dequeues left the queue: the next one gets the element.
  ASSERT_TRUE(session.Run({}, {}, {put}).ok());
  auto out = session.Run({}, take);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 7);
}

TEST(DirectSessionTest, ListsItsDeviceAndAppliesTheSessionsOperationTimeout) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root, {DT_INT32});
  auto take = ops::QueueDequeue(root, q);
  ClientSession session(root, {.operation_timeout = absl::Milliseconds(20)});
  auto devices = session.ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].device_type, "CPU");
  EXPECT_THAT((*devices)[0].name, HasSubstr("/device:CPU:0"));
  // The session's timeout ends a step that has none of its own; a step's own wins.
  EXPECT_TRUE(IsDeadlineExceeded(session.Run({}, take).status()));
  auto own = session.Run({}, take, {}, {.timeout = absl::Milliseconds(40)});
  EXPECT_THAT(std::string(own.status().message()), HasSubstr("40ms"));
  ASSERT_TRUE(session.Close().ok());
  EXPECT_TRUE(IsCancelled(session.ListDevices().status()));
  EXPECT_TRUE(ResetContainers({}, {}).ok());  // in-process: nothing shared to clear
}

}  // namespace
}  // namespace tw
