#include "tensorweave/ops/state_ops.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/runtime/cpu_device.h"
#include "src/runtime/direct_session.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

TEST(VariableTest, AssignReadAndUpdate) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "v", DT_FLOAT, {2});
  auto init = ops::Assign(root, v, Tensor::FromVector<float>({1, 2}));
  auto add = ops::AssignAdd(root, v, Tensor::FromVector<float>({10, 20}));
  auto sub = ops::AssignSub(root, v, Tensor::FromVector<float>({1, 1}));
  auto read = ops::ReadVariable(root, v);
  auto is_init = ops::IsVariableInitialized(root, v);
  ClientSession s(root);
  EXPECT_FALSE((*s.Run({}, {is_init}))[0].scalar<bool>());
  auto uninit = s.Run({}, {read});
  ASSERT_FALSE(uninit.ok());
  EXPECT_TRUE(IsFailedPrecondition(uninit.status()));
  EXPECT_THAT(std::string(uninit.status().message()),
              HasSubstr("Attempting to use uninitialized value v"));
  ASSERT_TRUE(s.Run({}, {init}).ok());
  EXPECT_TRUE((*s.Run({}, {is_init}))[0].scalar<bool>());
  EXPECT_EQ((*s.Run({}, {add}))[0], Tensor::FromVector<float>({11, 22}));
  EXPECT_EQ((*s.Run({}, {sub}))[0], Tensor::FromVector<float>({10, 21}));
  EXPECT_EQ((*s.Run({}, {read}))[0], Tensor::FromVector<float>({10, 21}));
}

// Updates are vectorized: a length that is not a multiple of any vector width checks the
// tail, and integers wrap around instead of overflowing.
TEST(VariableTest, AssignAddAndSubCoverEveryElementAndWrapIntegers) {
  Scope root = Scope::NewRootScope();
  constexpr int kN = 1003;
  std::vector<float> start(kN), delta(kN);
  for (int i = 0; i < kN; ++i) {
    start[i] = static_cast<float>(i);
    delta[i] = 0.5f * static_cast<float>(kN - i);
  }
  auto f = ops::MakeVariable(root, "f", DT_FLOAT, {kN});
  auto init_f = ops::Assign(root, f, Tensor::FromVector<float>(start));
  auto add_f = ops::AssignAdd(root, f, Tensor::FromVector<float>(delta));
  auto i32 = ops::MakeVariable(root, "i32", DT_INT32, {3});
  auto init_i32 = ops::Assign(root, i32, Tensor::FromVector<int32_t>({INT32_MAX, -1, 7}));
  auto add_i32 = ops::AssignAdd(root, i32, Tensor::FromVector<int32_t>({1, 1, -8}));
  auto u8 = ops::MakeVariable(root, "u8", DT_UINT8, {2});
  auto init_u8 = ops::Assign(root, u8, Tensor::FromVector<uint8_t>({1, 200}));
  auto sub_u8 = ops::AssignSub(root, u8, Tensor::FromVector<uint8_t>({2, 100}));
  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {}, {init_f.op(), init_i32.op(), init_u8.op()}).ok());
  auto out = s.Run({}, {add_f, add_i32, sub_u8});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> want(kN);
  for (int i = 0; i < kN; ++i) want[i] = start[i] + delta[i];
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>(want));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int32_t>({INT32_MIN, 0, -1}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<uint8_t>({255, 100}));
}

// Variables copy on write: a read shares the variable's buffer, so every update in place
// must first take a buffer of its own while the read is still held. Checked within one
// step (a session hands out copies of shared tensors, which would hide a missing copy):
// the first read is used only after AssignAdd, ScatterAdd and ApplyGradientDescent ran,
// and AssignAdd's output only after the two later updates.
TEST(VariableTest, UpdatesInPlaceNeverChangeASnapshotStillHeld) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "v", DT_FLOAT, {3});
  auto init = ops::Assign(root, v, Tensor::FromVector<float>({1, 2, 3}));
  auto read = ops::ReadVariable(root, v);
  auto add = ops::AssignAdd(root.WithControlDependencies({read.op()}), v,
                            Tensor::FromVector<float>({1, 1, 1}));
  auto scatter =
      ops::ScatterAdd(root.WithControlDependencies({add.op()}), v, Tensor::FromVector<int32_t>({0}),
                      Tensor::FromVector<float>({100}));
  auto step = ops::ApplyGradientDescent(root.WithControlDependencies({scatter.op()}), v, 1.0f,
                                        Tensor::FromVector<float>({1, 2, 3}));
  auto read_then = ops::Identity(root.WithControlDependencies({step}), read);
  auto added_then = ops::Identity(root.WithControlDependencies({step}), add);
  auto now = ops::ReadVariable(root.WithControlDependencies({step}), v);
  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {}, {init.op()}).ok());
  auto out = s.Run({}, {read_then, added_then, now});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({1, 2, 3}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({2, 3, 4}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<float>({101, 1, 1}));
}

// The client owns what it feeds and fetches: writing into those tensors afterwards never
// reaches the variable (it shares buffers only inside the runtime).
TEST(VariableTest, TheClientMayWriteIntoWhatItFedAndFetched) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "v", DT_FLOAT, {2});
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto assign = ops::Assign(root, v, x);
  auto read = ops::ReadVariable(root, v);
  ClientSession s(root);
  Tensor fed = Tensor::FromVector<float>({1, 2});
  ASSERT_TRUE(s.Run({{x, fed}}, {}, {assign.op()}).ok());
  fed.flat<float>()[0] = 100;  // a client refilling its input tensor
  auto got = s.Run({}, {read});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0], Tensor::FromVector<float>({1, 2}));
  (*got)[0].flat<float>()[1] = 200;  // and writing into what it fetched
  EXPECT_EQ((*s.Run({}, {read}))[0], Tensor::FromVector<float>({1, 2}));
}

TEST(VariableTest, ReadIsASnapshot) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "v", DT_INT32, {});
  auto init = ops::Assign(root, v, 5);
  auto read = ops::ReadVariable(root, v);
  auto add = ops::AssignAdd(root, v, 1);
  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {init}).ok());
  Tensor before = (*s.Run({}, {read}))[0];
  ASSERT_TRUE(s.Run({}, {add}).ok());
  EXPECT_EQ(before.scalar<int32_t>(), 5);
  EXPECT_EQ((*s.Run({}, {read}))[0].scalar<int32_t>(), 6);
}

TEST(VariableTest, ConcurrentAssignAddIsExact) {
  Scope root = Scope::NewRootScope();
  auto total = ops::MakeVariable(root, "total", DT_INT64, {});
  auto init = ops::Assign(root, total, int64_t{0});
  auto add = ops::AssignAdd(root, total, int64_t{1}, {.use_locking = true});
  auto read = ops::ReadVariable(root, total);
  ClientSession s(root, {.num_threads = 2});
  ASSERT_TRUE(s.Run({}, {init}).ok());
  constexpr int kThreads = 8, kSteps = 10000;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kSteps; ++i) {
        if (!s.Run({}, {}, {add.op()}).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ((*s.Run({}, {read}))[0].scalar<int64_t>(), int64_t{kThreads} * kSteps);
}

TEST(VariableTest, SameNameOnOneDeviceIsOneVariableAcrossSessions) {
  auto device = CpuDevice::Create(DeviceName::Full("ps", 0, 0, "CPU", 0), {.num_threads = 2});
  ASSERT_TRUE(device.ok());
  DirectSession first(device->get(), nullptr), second(device->get(), nullptr);
  Scope a = Scope::NewRootScope();
  auto va = ops::MakeVariable(a, "shared", DT_FLOAT, {});
  auto init = ops::Assign(a.WithOpName("init"), va, 3.0f);
  ASSERT_TRUE(first.Extend(*a.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(first.Run({}, {}, {"init"}, &out).ok());

  Scope b = Scope::NewRootScope();  // a different graph naming the same variable
  auto vb = ops::MakeVariable(b, "shared", DT_FLOAT, {});
  ops::ReadVariable(b.WithOpName("read"), vb);
  ASSERT_TRUE(second.Extend(*b.ToGraphDef()).ok());
  ASSERT_TRUE(second.Run({}, {"read:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 3.0f);

  // The default container is the job name; clearing it destroys the variable.
  (*device)->resource_manager()->Clear({"ps"});
  EXPECT_TRUE(IsFailedPrecondition(second.Run({}, {"read:0"}, {}, &out)));
}

TEST(VariableTest, DtypeAndShapeErrorsNameTheVariable) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "w", DT_FLOAT, {2});
  auto bad_shape = ops::Assign(root, v, Tensor::FromVector<float>({1, 2, 3}));
  auto again =
      ops::MakeVariable(root.WithOpName("w_int"), "w_int", DT_INT32, {}, {.shared_name = "w"});
  auto init = ops::Assign(root, v, Tensor::FromVector<float>({1, 2}));
  auto bad_add = ops::AssignAdd(root, v, Tensor::FromVector<float>({1}));
  ClientSession s(root);
  EXPECT_THAT(std::string(s.Run({}, {bad_shape}).status().message()),
              HasSubstr("cannot assign a value of shape [3] to variable w of shape [2]"));
  ASSERT_TRUE(s.Run({}, {init}).ok());
  EXPECT_THAT(std::string(s.Run({}, {again.handle}).status().message()),
              HasSubstr("variable w already exists with dtype float, not int32"));
  EXPECT_THAT(std::string(s.Run({}, {bad_add}).status().message()),
              HasSubstr("update has shape [1]"));
}

TEST(VariableTest, ScatterAddAndUpdate) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "table", DT_FLOAT, {3, 2});
  auto init =
      ops::Assign(root, v, Tensor::FromVector<float>({0, 0, 1, 1, 2, 2}, TensorShape({3, 2})));
  auto add = ops::ScatterAdd(root, v, Tensor::FromVector<int32_t>({2, 0, 2}),
                             Tensor::FromVector<float>({1, 1, 5, 5, 10, 10}, TensorShape({3, 2})));
  auto update = ops::ScatterUpdate(root, v, Tensor::FromVector<int64_t>({1}),
                                   Tensor::FromVector<float>({-1, -2}, TensorShape({1, 2})));
  auto bad = ops::ScatterAdd(root, v, Tensor::FromVector<int32_t>({3}),
                             Tensor::FromVector<float>({1, 1}, TensorShape({1, 2})));
  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {init}).ok());
  EXPECT_EQ((*s.Run({}, {add}))[0],
            Tensor::FromVector<float>({5, 5, 1, 1, 13, 13}, TensorShape({3, 2})));
  EXPECT_EQ((*s.Run({}, {update}))[0],
            Tensor::FromVector<float>({5, 5, -1, -2, 13, 13}, TensorShape({3, 2})));
  EXPECT_THAT(std::string(s.Run({}, {bad}).status().message()),
              HasSubstr("indices[0] = 3 is not in [0, 3) for variable table"));
}

// ScatterSub/Mul/Div/Max/Min: each kind on rows [1, 2] [3, 4] [5, 6], a repeated index
// applying each of its updates.
TEST(VariableTest, ScatterSubMulDivMaxMin) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "rows", DT_FLOAT, {3, 2});
  auto i = ops::MakeVariable(root, "ints", DT_INT32, {2});
  const Tensor start = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  auto init = ops::Assign(root, v, start);
  const Tensor idx = Tensor::FromVector<int32_t>({2, 0, 2});
  const Tensor upd = Tensor::FromVector<float>({2, 2, 0.5, 8, 4, 1}, TensorShape({3, 2}));
  struct Case {
    Output out;
    std::vector<float> want;
  };
  std::vector<Case> cases = {{ops::ScatterSub(root, v, idx, upd), {0.5, -6, 3, 4, -1, 3}},
                             {ops::ScatterMul(root, v, idx, upd), {0.5, 16, 3, 4, 40, 12}},
                             {ops::ScatterDiv(root, v, idx, upd), {2, 0.25, 3, 4, 0.625, 3}},
                             {ops::ScatterMax(root, v, idx, upd), {1, 8, 3, 4, 5, 6}},
                             {ops::ScatterMin(root, v, idx, upd), {0.5, 2, 3, 4, 2, 1}}};
  auto bad = ops::ScatterMax(root, v, Tensor::FromVector<int64_t>({0, -1}),
                             Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})));
  auto init_i = ops::Assign(root, i, Tensor::FromVector<int32_t>({7, -7}));
  auto int_div = ops::ScatterDiv(root, i, Tensor::FromVector<int32_t>({0, 1}),
                                 Tensor::FromVector<int32_t>({2, 2}));
  auto zero = ops::ScatterDiv(root.WithOpName("zero"), i, Tensor::FromVector<int32_t>({0}),
                              Tensor::FromVector<int32_t>({0}));
  ClientSession s(root);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.out.op().name());
    ASSERT_TRUE(s.Run({}, {init}).ok());
    auto out = s.Run({}, {c.out});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0], Tensor::FromVector<float>(c.want, TensorShape({3, 2})));
  }
  EXPECT_THAT(std::string(s.Run({}, {bad}).status().message()),
              HasSubstr("indices[1] = -1 is not in [0, 3) for variable rows"));
  ASSERT_TRUE(s.Run({}, {init_i}).ok());
  EXPECT_EQ((*s.Run({}, {int_div}))[0], Tensor::FromVector<int32_t>({3, -3}));
  EXPECT_THAT(std::string(s.Run({}, {zero}).status().message()),
              HasSubstr("node zero: ScatterDiv by an integer zero"));
}

TEST(VariableTest, OpsUsingAVariableAreColocatedWithIt) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "v", DT_FLOAT, {});
  auto add = ops::AssignAdd(root.WithDevice("/job:worker/task:1"), v, 1.0f);
  auto read = ops::ReadVariable(root, v);
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok());
  for (const auto& n : graph->node()) {
    if (n.name() == add.op().name() || n.name() == read.op().name()) {
      EXPECT_EQ(n.device(), "/job:ps/task:0") << n.name();
      EXPECT_EQ(n.attr().at("_class").list().s(0), "loc:@v") << n.name();
    }
  }
}

TEST(VariableTest, GroupRunsEveryInitializer) {
  Scope root = Scope::NewRootScope();
  auto a = ops::MakeVariable(root, "a", DT_INT32, {});
  auto b = ops::MakeVariable(root, "b", DT_INT32, {});
  auto init = ops::Group(root, {ops::Assign(root, a, 1), ops::Assign(root, b, 2)});
  auto sum_a = ops::ReadVariable(root, a);
  auto sum_b = ops::ReadVariable(root, b);
  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {}, {init}).ok());
  auto out = s.Run({}, {sum_a, sum_b});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].scalar<int32_t>() + (*out)[1].scalar<int32_t>(), 3);
}

TEST(ResourceGatherTest, ReadsRowsWhereTheVariableLives) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "table", DT_FLOAT, {3, 2});
  auto rows = ops::ResourceGather(root, v, Tensor::FromVector<int64_t>({2, 0, 2}, {3, 1}));
  auto shape = ops::VariableShape(root, v, DT_INT64);
  auto bad = ops::ResourceGather(root.WithOpName("bad"), v, {3});
  ClientSession s(root);
  auto uninit = s.Run({}, {rows});
  ASSERT_FALSE(uninit.ok());
  EXPECT_TRUE(IsFailedPrecondition(uninit.status()));
  ASSERT_TRUE(
      s.Run({}, {ops::Assign(root, v, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}))})
          .ok());
  auto out = s.Run({}, {rows, shape});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({5, 6, 1, 2, 5, 6}, {3, 1, 2}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int64_t>({3, 2}));
  out = s.Run({}, {bad});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("indices[0] = 3 is not in [0, 3)"));
}

// A resource handle is data: a client can wire, feed or forge any handle into any op that
// takes one. Each kernel checks the resource's real kind and device before using it.
TEST(ResourceHandleTest, HandleOfTheWrongKindIsInvalidArgumentNamingTheNode) {
  constexpr char kDevice[] = "/job:localhost/replica:0/task:0/device:CPU:0";
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueue(root, {DT_INT64}, {.shared_name = "q"});
  auto enqueue = ops::QueueEnqueue(root, queue, {Tensor::Scalar<int64_t>(5)});
  // The queue's handle used as an int64 variable.
  ops::Variable as_variable{queue.handle, DT_INT64, {}};
  auto add = ops::AssignAdd(root.WithOpName("add_to_queue"), as_variable, int64_t{1});
  // A variable's handle, built as a constant, used as a queue.
  auto v = ops::MakeVariable(root, "v", DT_INT64, {});
  auto init = ops::Assign(root, v, int64_t{3});
  auto forged_variable =
      ops::Const(root, Tensor::Scalar(ResourceHandle{kDevice, "", "v", "Variable"}));
  auto size =
      ops::QueueSize(root.WithOpName("size_of_variable"), ops::Queue{forged_variable, {DT_INT64}});
  // A handle that claims another device.
  auto elsewhere = ops::Const(
      root,
      Tensor::Scalar(ResourceHandle{"/job:ps/replica:0/task:0/device:CPU:0", "", "v", "Variable"}));
  auto read_elsewhere =
      ops::ReadVariable(root.WithOpName("read_elsewhere"), ops::Variable{elsewhere, DT_INT64, {}});
  // A handle of the right kind naming a queue by a name that only a variable has.
  auto forged_queue =
      ops::Const(root, Tensor::Scalar(ResourceHandle{kDevice, "", "v", "FIFOQueue"}));
  auto size_of_missing = ops::QueueSize(root, ops::Queue{forged_queue, {DT_INT64}});

  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {}, {enqueue, init.op()}).ok());
  auto added = s.Run({}, {add});
  EXPECT_TRUE(IsInvalidArgument(added.status())) << added.status();
  EXPECT_THAT(std::string(added.status().message()), HasSubstr("add_to_queue"));
  EXPECT_THAT(std::string(added.status().message()),
              HasSubstr("Trying to access resource using the wrong type. Expected Variable got "
                        "FIFOQueue"));
  auto sized = s.Run({}, {size});
  EXPECT_TRUE(IsInvalidArgument(sized.status())) << sized.status();
  EXPECT_THAT(std::string(sized.status().message()), HasSubstr("Expected FIFOQueue got Variable"));
  auto read = s.Run({}, {read_elsewhere});
  EXPECT_TRUE(IsInvalidArgument(read.status())) << read.status();
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("Trying to access resource v located in device "
                        "/job:ps/replica:0/task:0/device:CPU:0 from device "));
  EXPECT_TRUE(IsNotFound(s.Run({}, {size_of_missing}).status()));
  // Nothing was used as the wrong thing: the queue still holds its element, the variable 3.
  EXPECT_EQ((*s.Run({}, {ops::QueueSize(root, queue)}))[0].scalar<int32_t>(), 1);
  EXPECT_EQ((*s.Run({}, {ops::ReadVariable(root, v)}))[0].scalar<int64_t>(), 3);
}

}  // namespace
}  // namespace tw
