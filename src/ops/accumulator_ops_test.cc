// Conditional accumulators: mean and sum, stale gradients, takes that wait for applies,
// cancellation, the global step, sharing by name, and concurrent applies.
#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ops/conditional_accumulator.h"
#include "src/runtime/cpu_device.h"
#include "src/runtime/direct_session.h"
#include "tensorweave/ops.h"
#include "tensorweave/ops/training_ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using Reduction = ConditionalAccumulatorResource::Reduction;

Tensor Doubles(std::vector<double> v) { return Tensor::FromVector<double>(std::move(v)); }
std::string Message(const Status& s) { return std::string(s.message()); }

// An accumulator of double [2] gradients with apply/take/step nodes fed by placeholders.
struct AccumulatorGraph {
  Scope root = Scope::NewRootScope();
  Output step = ops::Placeholder(root.WithOpName("step"), DT_INT64);
  Output grad = ops::Placeholder(root.WithOpName("grad"), DT_DOUBLE);
  Output num = ops::Placeholder(root.WithOpName("num"), DT_INT32);
  Output global = ops::Placeholder(root.WithOpName("global"), DT_INT64);
  ops::Accumulator acc;
  Operation apply, set_step;
  Output take, count;

  explicit AccumulatorGraph(const std::string& reduction = "MEAN",
                            std::vector<int64_t> shape = {2}) {
    acc = ops::ConditionalAccumulator(root.WithOpName("acc"), DT_DOUBLE, std::move(shape),
                                      {.reduction = reduction});
    apply = ops::AccumulatorApplyGradient(root, acc, step, grad);
    take = ops::AccumulatorTakeGradient(root, acc, num);
    set_step = ops::AccumulatorSetGlobalStep(root, acc, global);
    count = ops::AccumulatorNumAccumulated(root, acc);
  }
  Status Apply(ClientSession& s, int64_t local_step, const Tensor& g) {
    return s.Run({{step, Tensor::Scalar(local_step)}, {grad, g}}, {}, {apply}).status();
  }
  StatusOr<Tensor> Take(ClientSession& s, int32_t n, const RunOptions& options = {}) {
    TW_ASSIGN_OR_RETURN(auto out, s.Run({{num, Tensor::Scalar(n)}}, {take}, {}, options));
    return out[0];
  }
  Status SetGlobalStep(ClientSession& s, int64_t g) {
    return s.Run({{global, Tensor::Scalar(g)}}, {}, {set_step}).status();
  }
  int32_t Count(ClientSession& s) {
    auto out = s.Run({}, {count});
    return out.ok() ? (*out)[0].scalar<int32_t>() : -1;
  }
};

TEST(AccumulatorTest, TakeReturnsTheMeanAndResets) {
  AccumulatorGraph g;
  ClientSession s(g.root);
  ASSERT_TRUE(g.Apply(s, 0, Doubles({1, 2})).ok());
  ASSERT_TRUE(g.Apply(s, 0, Doubles({3, 8})).ok());
  EXPECT_EQ(g.Count(s), 2);
  auto mean = g.Take(s, 2);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(*mean, Doubles({2, 5}));
  EXPECT_EQ(g.Count(s), 0);
  // A new round starts from zero.
  ASSERT_TRUE(g.Apply(s, 1, Doubles({-1, 1})).ok());
  EXPECT_EQ(*g.Take(s, 1), Doubles({-1, 1}));
}

TEST(AccumulatorTest, SumReduction) {
  AccumulatorGraph g("SUM");
  ClientSession s(g.root);
  for (double x : {1.0, 2.0, 4.0}) ASSERT_TRUE(g.Apply(s, 0, Doubles({x, -x})).ok());
  EXPECT_EQ(*g.Take(s, 3), Doubles({7, -7}));
}

TEST(AccumulatorTest, StaleGradientsAreDroppedAndTakeAdvancesTheGlobalStep) {
  AccumulatorGraph g("SUM");
  ClientSession s(g.root);
  ASSERT_TRUE(g.SetGlobalStep(s, 5).ok());
  ASSERT_TRUE(g.Apply(s, 4, Doubles({100, 100})).ok());  // stale: dropped silently
  EXPECT_EQ(g.Count(s), 0);
  ASSERT_TRUE(g.Apply(s, 5, Doubles({1, 2})).ok());
  ASSERT_TRUE(g.Apply(s, 7, Doubles({1, 2})).ok());  // from the future: fresh
  EXPECT_EQ(g.Count(s), 2);
  EXPECT_EQ(*g.Take(s, 2), Doubles({2, 4}));
  // The take moved the global step to 6: a gradient of step 5 is now stale.
  ASSERT_TRUE(g.Apply(s, 5, Doubles({100, 100})).ok());
  EXPECT_EQ(g.Count(s), 0);
  ASSERT_TRUE(g.Apply(s, 6, Doubles({3, 3})).ok());
  EXPECT_EQ(*g.Take(s, 1), Doubles({3, 3}));
}

TEST(AccumulatorTest, SetGlobalStepNeverMovesBack) {
  AccumulatorGraph g;
  ClientSession s(g.root);
  ASSERT_TRUE(g.SetGlobalStep(s, 5).ok());
  ASSERT_TRUE(g.SetGlobalStep(s, 2).ok());  // ignored
  ASSERT_TRUE(g.Apply(s, 3, Doubles({1, 1})).ok());
  EXPECT_EQ(g.Count(s), 0);
  ASSERT_TRUE(g.Apply(s, 5, Doubles({1, 1})).ok());
  EXPECT_EQ(g.Count(s), 1);
  ASSERT_TRUE(g.SetGlobalStep(s, 9).ok());
  ASSERT_TRUE(g.Apply(s, 8, Doubles({1, 1})).ok());
  EXPECT_EQ(g.Count(s), 1);
}

TEST(AccumulatorTest, TakeStartedFirstCompletesOnlyAfterTheLastApply) {
  AccumulatorGraph g;
  ClientSession s(g.root, {.num_threads = 2});
  absl::Notification taken;
  StatusOr<Tensor> result = errors::Unknown("not run");
  std::thread taker([&] {
    result = g.Take(s, 3);
    taken.Notify();
  });
  ASSERT_TRUE(g.Apply(s, 0, Doubles({1, 1})).ok());
  ASSERT_TRUE(g.Apply(s, 0, Doubles({2, 2})).ok());
  EXPECT_FALSE(taken.HasBeenNotified());
  ASSERT_TRUE(g.Apply(s, 0, Doubles({6, 3})).ok());
  taker.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, Doubles({3, 2}));
  EXPECT_EQ(g.Count(s), 0);
}

// The same ordering, deterministically, on the resource: the callback runs inside the apply
// that brings the count to num_required, and not before.
TEST(AccumulatorResourceTest, TakeWaitsForNumRequiredGradients) {
  auto acc = std::make_shared<ConditionalAccumulatorResource>(
      "acc", DT_DOUBLE, PartialShape::Of({2}), Reduction::kMean);
  int calls = 0;
  StatusOr<Tensor> got = errors::Unknown("not called");
  acc->TakeGradient(2, nullptr, [&](StatusOr<Tensor> r) {
    ++calls;
    got = std::move(r);
  });
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(acc->ApplyGradient(0, Doubles({1, 4})).ok());
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(acc->num_accumulated(), 1);
  ASSERT_TRUE(acc->ApplyGradient(0, Doubles({3, 0})).ok());
  EXPECT_EQ(calls, 1);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, Doubles({2, 2}));
  EXPECT_EQ(acc->num_accumulated(), 0);
  EXPECT_EQ(acc->global_step(), 1);
}

TEST(AccumulatorResourceTest, CancelledTakeKeepsTheGradients) {
  auto acc = std::make_shared<ConditionalAccumulatorResource>(
      "acc", DT_DOUBLE, PartialShape::Of({2}), Reduction::kSum);
  ASSERT_TRUE(acc->ApplyGradient(0, Doubles({1, 1})).ok());
  CancellationManager cm;
  StatusOr<Tensor> got = errors::Unknown("not called");
  acc->TakeGradient(2, &cm, [&](StatusOr<Tensor> r) { got = std::move(r); });
  EXPECT_TRUE(absl::IsUnknown(got.status()));
  cm.StartCancel();
  EXPECT_TRUE(IsCancelled(got.status())) << got.status();
  EXPECT_THAT(Message(got.status()), HasSubstr("AccumulatorTakeGradient on 'acc' was cancelled"));
  EXPECT_EQ(acc->num_accumulated(), 1);
  EXPECT_EQ(acc->global_step(), 0);
  // A take on an already cancelled step fails at once.
  StatusOr<Tensor> late = errors::Unknown("not called");
  acc->TakeGradient(5, &cm, [&](StatusOr<Tensor> r) { late = std::move(r); });
  EXPECT_TRUE(IsCancelled(late.status())) << late.status();
  // Without the cancelled takes in the way, a new take is served.
  ASSERT_TRUE(acc->ApplyGradient(0, Doubles({2, 2})).ok());
  acc->TakeGradient(2, nullptr, [&](StatusOr<Tensor> r) { got = std::move(r); });
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, Doubles({3, 3}));
}

TEST(AccumulatorResourceTest, DestroyingTheAccumulatorAbortsPendingTakes) {
  auto acc = std::make_shared<ConditionalAccumulatorResource>(
      "acc", DT_FLOAT, PartialShape::Unknown(), Reduction::kMean);
  StatusOr<Tensor> got = errors::Unknown("not called");
  acc->TakeGradient(1, nullptr, [&](StatusOr<Tensor> r) { got = std::move(r); });
  acc.reset();
  EXPECT_TRUE(IsAborted(got.status())) << got.status();
}

TEST(AccumulatorTest, PendingTakeIsCancelledWithTheStep) {
  testing::KernelTest t;
  auto handle = t.Run(testing::NodeBuilder("acc", "ConditionalAccumulator")
                          .Attr("dtype", DT_DOUBLE)
                          .Attr("shape", PartialShape::Of({2})),
                      {});
  ASSERT_TRUE(handle.ok()) << handle.status();
  const auto take =
      testing::NodeBuilder("take", "AccumulatorTakeGradient").Attr("dtype", DT_DOUBLE).NumInputs(2);
  CancellationManager cm;
  StatusOr<std::vector<Tensor>> result = errors::Unknown("not run");
  std::thread taker([&] { result = t.Run(take, {(*handle)[0], Tensor::Scalar<int32_t>(1)}, &cm); });
  cm.StartCancel();
  taker.join();
  EXPECT_TRUE(IsCancelled(result.status())) << result.status();
  // The accumulator is still usable and its global step did not move.
  const auto apply = testing::NodeBuilder("apply", "AccumulatorApplyGradient")
                         .Attr("dtype", DT_DOUBLE)
                         .NumInputs(3);
  ASSERT_TRUE(t.Run(apply, {(*handle)[0], Tensor::Scalar<int64_t>(0), Doubles({1, 2})}).ok());
  auto out = t.Run(take, {(*handle)[0], Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Doubles({1, 2}));
}

TEST(AccumulatorTest, SessionCloseAndTimeoutEndAPendingTake) {
  AccumulatorGraph g;
  ClientSession s(g.root);
  auto timed_out = g.Take(s, 1, {.timeout = absl::Milliseconds(20)});
  EXPECT_TRUE(IsDeadlineExceeded(timed_out.status())) << timed_out.status();
  StatusOr<Tensor> result = errors::Unknown("not run");
  std::thread taker([&] { result = g.Take(s, 1); });
  ASSERT_TRUE(s.Close().ok());
  taker.join();
  EXPECT_TRUE(IsCancelled(result.status())) << result.status();
}

TEST(AccumulatorTest, ShapeAndDtypeErrors) {
  AccumulatorGraph g("MEAN", {-1, 2});
  Output wrong_dtype = ops::Placeholder(g.root.WithOpName("f"), DT_FLOAT);
  auto apply_float = ops::AccumulatorApplyGradient(g.root, g.acc, int64_t{0}, wrong_dtype);
  ClientSession s(g.root);
  Status st = g.Apply(s, 0, Doubles({1, 2}));  // rank 1, not 2
  EXPECT_TRUE(IsInvalidArgument(st)) << st;
  EXPECT_THAT(Message(st), HasSubstr("accumulator 'acc' has shape [?,2], got a gradient of "
                                     "shape [2]"));
  // The first gradient fixes the unknown dimension.
  ASSERT_TRUE(g.Apply(s, 0, Tensor::FromVector<double>({1, 2, 3, 4}, TensorShape({2, 2}))).ok());
  st = g.Apply(s, 0, Tensor::FromVector<double>({1, 2}, TensorShape({1, 2})));
  EXPECT_THAT(Message(st), HasSubstr("accumulator 'acc' has shape [2,2], got a gradient of "
                                     "shape [1,2]"));
  EXPECT_EQ(g.Count(s), 1);
  st = s.Run({{wrong_dtype, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))}}, {},
             {apply_float})
           .status();
  EXPECT_TRUE(IsInvalidArgument(st)) << st;
  EXPECT_THAT(Message(st), HasSubstr("accumulator 'acc' holds double gradients, got float"));
}

TEST(AccumulatorTest, BadScalarsAreInvalidArgument) {
  AccumulatorGraph g;
  auto bad_step = ops::AccumulatorApplyGradient(g.root, g.acc, Tensor::FromVector<int64_t>({1}),
                                                Doubles({1, 1}));
  ClientSession s(g.root);
  auto zero = g.Take(s, 0);
  EXPECT_TRUE(IsInvalidArgument(zero.status())) << zero.status();
  EXPECT_THAT(Message(zero.status()), HasSubstr("num_required must be >= 1, got 0"));
  Status st = s.Run({}, {}, {bad_step}).status();
  EXPECT_TRUE(IsInvalidArgument(st)) << st;
  EXPECT_THAT(Message(st), HasSubstr("local_step must be a scalar, got shape [1]"));
}

TEST(AccumulatorTest, BadReductionIsInvalidArgument) {
  AccumulatorGraph g("MAX");
  ClientSession s(g.root);
  Status st = s.Run({}, {g.count}).status();
  EXPECT_TRUE(IsInvalidArgument(st)) << st;
  EXPECT_THAT(Message(st), HasSubstr("reduction_type must be \"MEAN\" or \"SUM\", got \"MAX\""));
}

TEST(AccumulatorTest, SharedByNameInOneGraphAndConflictsAreInvalidArgument) {
  Scope root = Scope::NewRootScope();
  auto a = ops::ConditionalAccumulator(root, DT_FLOAT, {2}, {.shared_name = "grads"});
  auto b = ops::ConditionalAccumulator(root, DT_FLOAT, {2}, {.shared_name = "grads"});
  auto other_dtype = ops::ConditionalAccumulator(root, DT_DOUBLE, {2}, {.shared_name = "grads"});
  auto other_shape = ops::ConditionalAccumulator(root, DT_FLOAT, {3}, {.shared_name = "grads"});
  auto other_reduction = ops::ConditionalAccumulator(root, DT_FLOAT, {2},
                                                     {.shared_name = "grads", .reduction = "SUM"});
  auto apply = ops::AccumulatorApplyGradient(root, a, int64_t{0}, {1.0f, 3.0f});
  auto take = ops::AccumulatorTakeGradient(root, b, 1);
  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {}, {apply}).ok());
  auto got = s.Run({}, {take});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0], Tensor::FromVector<float>({1, 3}));
  Status st = s.Run({}, {other_dtype.handle}).status();
  EXPECT_TRUE(IsInvalidArgument(st)) << st;
  EXPECT_THAT(
      Message(st),
      HasSubstr("Shared accumulator 'grads' has dtype float but requested dtype was double"));
  EXPECT_THAT(Message(s.Run({}, {other_shape.handle}).status()),
              HasSubstr("Shared accumulator 'grads' has shape [2] but requested shape was [3]"));
  EXPECT_THAT(Message(s.Run({}, {other_reduction.handle}).status()),
              HasSubstr("has reduction MEAN but requested reduction was SUM"));
}

TEST(AccumulatorTest, SharedByNameAcrossSessionsOfTwoGraphs) {
  auto device = CpuDevice::Create(DeviceName::Full("ps", 0, 0, "CPU", 0), {.num_threads = 2});
  ASSERT_TRUE(device.ok());
  DirectSession worker(device->get(), nullptr), chief(device->get(), nullptr);

  Scope w = Scope::NewRootScope();
  auto wa = ops::ConditionalAccumulator(w.WithOpName("acc"), DT_DOUBLE, {2}, {.shared_name = "g"});
  ops::AccumulatorApplyGradient(w.WithOpName("apply"), wa, int64_t{0}, Doubles({2, 4}));
  ASSERT_TRUE(worker.Extend(*w.ToGraphDef()).ok());

  Scope c = Scope::NewRootScope();  // another graph naming the same accumulator
  auto ca = ops::ConditionalAccumulator(c.WithOpName("acc"), DT_DOUBLE, {2}, {.shared_name = "g"});
  ops::AccumulatorTakeGradient(c.WithOpName("take"), ca, 2);
  ASSERT_TRUE(chief.Extend(*c.ToGraphDef()).ok());

  std::vector<Tensor> out;
  absl::Notification taken;
  Status take_status;
  std::thread taker([&] {
    take_status = chief.Run({}, {"take:0"}, {}, &out);
    taken.Notify();
  });
  std::vector<Tensor> none;
  ASSERT_TRUE(worker.Run({}, {}, {"apply"}, &none).ok());
  EXPECT_FALSE(taken.HasBeenNotified());
  ASSERT_TRUE(worker.Run({}, {}, {"apply"}, &none).ok());
  taker.join();
  ASSERT_TRUE(take_status.ok()) << take_status;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], Doubles({2, 4}));
}

TEST(AccumulatorTest, ConcurrentAppliesAreExact) {
  AccumulatorGraph g("SUM");
  ClientSession s(g.root, {.num_threads = 2});
  constexpr int kThreads = 4, kApplies = 250;
  StatusOr<Tensor> result = errors::Unknown("not run");
  std::thread taker([&] { result = g.Take(s, kThreads * kApplies); });
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kApplies; ++i) failures += !g.Apply(s, 0, Doubles({1, 0.5})).ok();
    });
  }
  for (auto& t : threads) t.join();
  taker.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, Doubles({kThreads * kApplies, kThreads * kApplies * 0.5}));
}

}  // namespace
}  // namespace tw
