// Queue semantics with real threads: blocking, close, cancel, timeout, sharing by name.
#include "tensorweave/ops/queue_ops.h"

#include <numeric>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ops/fifo_queue.h"
#include "src/runtime/direct_session.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

struct QueueGraph {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_INT32);
  Output s = ops::Placeholder(root.WithOpName("s"), DT_STRING);
  ops::Queue q;
  Operation enqueue, close, cancel_close;
  std::vector<Output> dequeue, dequeue_many, dequeue_up_to;
  Output size, is_closed;
  explicit QueueGraph(int64_t capacity = -1) {
    // A shared name, so that tests can find the queue on their session's own device.
    q = ops::FIFOQueue(root.WithOpName("q"), {DT_INT32, DT_STRING},
                       {.shapes = {{}, {}}, .capacity = capacity, .shared_name = "g"});
    enqueue = ops::QueueEnqueue(root, q, {x, s});
    dequeue = ops::QueueDequeue(root, q);
    dequeue_many = ops::QueueDequeueMany(root, q, 2);
    dequeue_up_to = ops::QueueDequeueUpTo(root, q, 3);
    close = ops::QueueClose(root, q);
    cancel_close = ops::QueueClose(root, q, /*cancel_pending_enqueues=*/true);
    size = ops::QueueSize(root, q);
    is_closed = ops::QueueIsClosed(root, q);
  }
  bool IsClosed(ClientSession& session) const {
    auto out = session.Run({}, {is_closed});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() && (*out)[0].scalar<bool>();
  }
  Status Enqueue(ClientSession& session, int v, const RunOptions& options = {}) {
    return session
        .Run({{x, Tensor::Scalar<int32_t>(v)},
              {s, Tensor::Scalar<std::string>("e" + std::to_string(v))}},
             {}, {enqueue}, options)
        .status();
  }
};

TEST(QueueTest, FirstInFirstOutWithComponents) {
  QueueGraph g;
  ClientSession session(g.root);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(g.Enqueue(session, i).ok());
  EXPECT_EQ((*session.Run({}, {g.size}))[0].scalar<int32_t>(), 3);
  for (int i = 0; i < 3; ++i) {
    auto out = session.Run({}, g.dequeue);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), i);
    EXPECT_EQ((*out)[1].scalar<std::string>(), "e" + std::to_string(i));
  }
}

TEST(QueueTest, DequeueWaitsForAnEnqueueFromAnotherThread) {
  QueueGraph g;
  ClientSession session(g.root);
  absl::Notification got;
  StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
  std::thread consumer([&] {
    out = session.Run({}, g.dequeue);
    got.Notify();
  });
  EXPECT_FALSE(got.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  ASSERT_TRUE(g.Enqueue(session, 7).ok());
  consumer.join();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 7);
}

TEST(QueueTest, EnqueueWaitsWhileFull) {
  QueueGraph g(/*capacity=*/1);
  ClientSession session(g.root);
  ASSERT_TRUE(g.Enqueue(session, 1).ok());
  absl::Notification added;
  std::thread producer([&] {
    EXPECT_TRUE(g.Enqueue(session, 2).ok());
    added.Notify();
  });
  EXPECT_FALSE(added.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  EXPECT_EQ((*session.Run({}, g.dequeue))[0].scalar<int32_t>(), 1);
  producer.join();
  EXPECT_EQ((*session.Run({}, g.dequeue))[0].scalar<int32_t>(), 2);
}

TEST(QueueTest, ClosedQueueSemantics) {
  QueueGraph g;
  ClientSession session(g.root);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(g.Enqueue(session, i).ok());
  ASSERT_TRUE(session.Run({}, {}, {g.close}).ok());
  Status enqueue = g.Enqueue(session, 9);
  EXPECT_TRUE(IsCancelled(enqueue)) << enqueue;
  EXPECT_THAT(std::string(enqueue.message()), HasSubstr("FIFOQueue '"));
  auto two = session.Run({}, g.dequeue_many);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ((*two)[0], Tensor::FromVector<int32_t>({0, 1}));
  EXPECT_EQ((*two)[1], Tensor::FromVector<std::string>({"e0", "e1"}));
  auto too_few = session.Run({}, g.dequeue_many);  // 1 left, 2 asked
  EXPECT_TRUE(IsOutOfRange(too_few.status())) << too_few.status();
  EXPECT_THAT(std::string(too_few.status().message()),
              HasSubstr("is closed and has insufficient elements"));
  auto rest = session.Run({}, g.dequeue_up_to);  // the element is still there
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ((*rest)[0], Tensor::FromVector<int32_t>({2}));
  EXPECT_TRUE(IsOutOfRange(session.Run({}, g.dequeue).status()));
  EXPECT_TRUE(IsOutOfRange(session.Run({}, g.dequeue_up_to).status()));
}

// Waits (bounded) until `n` steps wait in line on the QueueGraph's queue of `session` to
// dequeue (`dequeues`) or to enqueue: the condition a test acts on, instead of a sleep.
void AwaitWaiting(ClientSession& session, const QueueGraph& g, bool dequeues, size_t n) {
  ASSERT_TRUE(session.Run({}, {g.size}).ok());  // the queue exists from its first step on
  auto* direct = static_cast<DirectSession*>(session.session());
  auto queue = direct->device()->resource_manager()->Lookup<FIFOQueueResource>("", "g");
  ASSERT_TRUE(queue.ok()) << queue.status();
  ASSERT_TRUE((*queue)->AwaitWaiting(dequeues, n, absl::Seconds(30)))
      << n << (dequeues ? " dequeues" : " enqueues") << " never waited";
}

TEST(QueueTest, CloseWakesBlockedDequeueWithOutOfRange) {
  QueueGraph g;
  ClientSession session(g.root);
  StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
  std::thread consumer([&] { out = session.Run({}, g.dequeue); });
  ASSERT_NO_FATAL_FAILURE(AwaitWaiting(session, g, /*dequeues=*/true, 1));
  ASSERT_TRUE(session.Run({}, {}, {g.close}).ok());
  consumer.join();
  EXPECT_TRUE(IsOutOfRange(out.status())) << out.status();
}

TEST(QueueTest, CloseWithCancelPendingEnqueuesCancelsBlockedEnqueue) {
  QueueGraph g(/*capacity=*/1);
  ClientSession session(g.root);
  ASSERT_TRUE(g.Enqueue(session, 1).ok());
  Status blocked;
  std::thread producer([&] { blocked = g.Enqueue(session, 2); });
  ASSERT_NO_FATAL_FAILURE(AwaitWaiting(session, g, /*dequeues=*/false, 1));
  ASSERT_TRUE(session.Run({}, {}, {g.cancel_close}).ok());
  producer.join();
  EXPECT_TRUE(IsCancelled(blocked)) << blocked;
  EXPECT_EQ((*session.Run({}, g.dequeue))[0].scalar<int32_t>(), 1);
}

TEST(QueueTest, TimeoutIsDeadlineExceededAndTheQueueStaysUsable) {
  QueueGraph g;
  ClientSession session(g.root);
  auto timed_out = session.Run({}, g.dequeue, {}, {.timeout = absl::Milliseconds(30)});
  EXPECT_TRUE(IsDeadlineExceeded(timed_out.status())) << timed_out.status();
  // TensorFlow's words first, which TF programs match; then the limit.
  EXPECT_EQ(timed_out.status().message(),
            "Timed out waiting for notification: the step did not finish within 30ms");
  ASSERT_TRUE(g.Enqueue(session, 5).ok());
  auto out = session.Run({}, g.dequeue, {}, {.timeout = absl::Seconds(10)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 5);
}

TEST(QueueTest, SessionCloseCancelsBlockedDequeue) {
  QueueGraph g;
  ClientSession session(g.root);
  StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
  std::thread consumer([&] { out = session.Run({}, g.dequeue); });
  ASSERT_NO_FATAL_FAILURE(AwaitWaiting(session, g, /*dequeues=*/true, 1));
  ASSERT_TRUE(session.Close().ok());
  consumer.join();
  EXPECT_TRUE(IsCancelled(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Session::Close()"));
}

TEST(QueueTest, HundredBlockedStepsDoNotStarveAnUnrelatedStep) {
  QueueGraph g;
  auto unrelated = ops::Identity(g.root, 42);
  ClientSession session(g.root, {.num_threads = 2});
  std::vector<std::thread> consumers;
  std::atomic<int> served{0};
  for (int i = 0; i < 100; ++i) {
    consumers.emplace_back([&] {
      if (session.Run({}, g.dequeue).ok()) ++served;
    });
  }
  ASSERT_NO_FATAL_FAILURE(AwaitWaiting(session, g, /*dequeues=*/true, 100));
  auto out = session.Run({}, {unrelated}, {}, {.timeout = absl::Seconds(10)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 42);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(g.Enqueue(session, i).ok());
  for (auto& t : consumers) t.join();
  EXPECT_EQ(served.load(), 100);
}

TEST(QueueTest, SharedNameSharesAndConflictsAreInvalidArgument) {
  Scope root = Scope::NewRootScope();
  auto a = ops::FIFOQueue(root, {DT_STRING}, {.capacity = 10, .shared_name = "filenames"});
  auto b = ops::FIFOQueue(root, {DT_STRING}, {.capacity = 10, .shared_name = "filenames"});
  auto c = ops::FIFOQueue(root, {DT_STRING}, {.capacity = 5, .shared_name = "filenames"});
  auto d = ops::FIFOQueue(root, {DT_INT32}, {.capacity = 10, .shared_name = "filenames"});
  auto put = ops::QueueEnqueue(root, a, {"a.txt"});
  auto take = ops::QueueDequeue(root, b);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {put}).ok());
  auto got = session.Run({}, take);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].scalar<std::string>(), "a.txt");
  EXPECT_THAT(std::string(session.Run({}, {c.handle}).status().message()),
              HasSubstr("Shared queue 'filenames' has capacity 10 but requested capacity was 5"));
  EXPECT_THAT(std::string(session.Run({}, {d.handle}).status().message()),
              HasSubstr("has component types string but requested component types were int32"));
}

TEST(QueueTest, QueuesWithoutSharedNameArePrivate) {
  Scope root = Scope::NewRootScope();
  auto a = ops::FIFOQueue(root, {DT_INT32});
  auto b = ops::FIFOQueue(root, {DT_INT32});
  auto put = ops::QueueEnqueue(root, a, {1});
  auto size_a = ops::QueueSize(root, a);
  auto size_b = ops::QueueSize(root, b);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {put}).ok());
  // Another step signature uses the same queue of this session...
  EXPECT_EQ((*session.Run({}, {size_a}))[0].scalar<int32_t>(), 1);
  EXPECT_EQ((*session.Run({}, {size_b}))[0].scalar<int32_t>(), 0);
  // ...and another session has its own.
  ClientSession other(root);
  EXPECT_EQ((*other.Run({}, {size_a}))[0].scalar<int32_t>(), 0);
}

TEST(QueueTest, EnqueueManyAndValidation) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root, {DT_FLOAT}, {.shapes = {{2}}});
  auto many = ops::QueueEnqueueMany(
      root, q, {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}))});
  auto bad_shape = ops::QueueEnqueue(root, q, {Tensor::FromVector<float>({1, 2, 3})});
  auto bad_type = ops::QueueEnqueue(root, q, {Tensor::FromVector<int32_t>({1, 2})});
  auto size = ops::QueueSize(root, q);
  auto two = ops::QueueDequeueMany(root, q, 2);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {many}).ok());
  EXPECT_EQ((*session.Run({}, {size}))[0].scalar<int32_t>(), 3);
  auto out = session.Run({}, two);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})));
  EXPECT_THAT(std::string(session.Run({}, {}, {bad_shape}).status().message()),
              HasSubstr("Shape mismatch in tuple component 0. Expected [2], got [3]"));
  EXPECT_THAT(std::string(session.Run({}, {}, {bad_type}).status().message()),
              HasSubstr("Type mismatch in tuple component 0. Expected float, got int32"));
}

// TensorFlow's own messages for a tuple that does not fit the queue (its QueueBase), which
// its users' tests match: the whole batch of an EnqueueMany is checked, [n] + shape.
TEST(QueueTest, ValidationSpeaksTensorFlowsWords) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root, {DT_FLOAT, DT_INT32}, {.shapes = {{3, 3}, {}}});
  auto matrix = ops::Placeholder(root.WithOpName("m"), DT_FLOAT);
  auto label = ops::Placeholder(root.WithOpName("l"), DT_INT32);
  auto one = ops::QueueEnqueue(root, q, {matrix, label});
  auto many = ops::QueueEnqueueMany(root, q, {matrix, label});
  ClientSession session(root);
  auto run = [&](Operation op, const Tensor& m, const Tensor& l) {
    Status s = session.Run({{matrix, m}, {label, l}}, {}, {op}).status();
    EXPECT_TRUE(IsInvalidArgument(s)) << s;
    return std::string(s.message());
  };
  const Tensor scalar_label = Tensor::Scalar<int32_t>(1);
  EXPECT_THAT(run(one, Tensor(DT_FLOAT, TensorShape({3, 4})), scalar_label),
              HasSubstr("Shape mismatch in tuple component 0. Expected [3,3], got [3,4]"));
  EXPECT_THAT(run(one, Tensor(DT_FLOAT, TensorShape({3, 3})), Tensor::FromVector<int32_t>({1})),
              HasSubstr("Shape mismatch in tuple component 1. Expected [], got [1]"));
  EXPECT_THAT(
      run(many, Tensor(DT_FLOAT, TensorShape({2, 3, 4})), Tensor::FromVector<int32_t>({1, 2})),
      HasSubstr("Shape mismatch in tuple component 0. Expected [2,3,3], got [2,3,4]"));
  EXPECT_THAT(
      run(many, Tensor(DT_FLOAT, TensorShape({2, 3, 3})), Tensor::FromVector<int32_t>({1, 2, 3})),
      HasSubstr("Shape mismatch in tuple component 1. Expected [2], got [3]"));
  EXPECT_EQ((*session.Run({}, {ops::QueueSize(root, q)}))[0].scalar<int32_t>(), 0);

  // Without shapes, only the batch's first dimensions must agree.
  Scope free = Scope::NewRootScope();
  auto unshaped = ops::FIFOQueue(free, {DT_INT32, DT_INT32});
  auto many_unshaped = ops::QueueEnqueueMany(
      free, unshaped,
      {Tensor::FromVector<int32_t>({1, 2, 3}), Tensor::FromVector<int32_t>({1, 2})});
  ClientSession free_session(free);
  EXPECT_THAT(std::string(free_session.Run({}, {}, {many_unshaped}).status().message()),
              HasSubstr("All input tensors must have the same size in the 0th dimension. "
                        "Component 1 has 2, and should have 3"));
}

TEST(QueueTest, SharedQueueSpecMismatchListsBoth) {
  Scope root = Scope::NewRootScope();
  auto first = ops::FIFOQueue(root, {DT_FLOAT}, {.shapes = {{2, 3}}, .shared_name = "twin"});
  auto second = ops::FIFOQueue(root, {DT_FLOAT}, {.shapes = {{4}}, .shared_name = "twin"});
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {first.handle.op()}).ok());
  EXPECT_THAT(std::string(session.Run({}, {}, {second.handle.op()}).status().message()),
              HasSubstr("Shared queue 'twin' has component shapes [[2,3]] but requested "
                        "component shapes were [[4]]"));
}

TEST(QueueTest, IsClosedOnceClosed) {
  QueueGraph g;
  ClientSession session(g.root);
  EXPECT_FALSE(g.IsClosed(session));
  ASSERT_TRUE(g.Enqueue(session, 1).ok());
  EXPECT_FALSE(g.IsClosed(session));
  ASSERT_TRUE(session.Run({}, {}, {g.close}).ok());
  auto out = session.Run({}, {g.is_closed});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::Scalar(true));
  // Still closed while it drains, and once empty.
  EXPECT_EQ((*session.Run({}, g.dequeue))[0].scalar<int32_t>(), 1);
  EXPECT_TRUE(g.IsClosed(session));
  EXPECT_TRUE(IsOutOfRange(session.Run({}, g.dequeue).status()));
  EXPECT_TRUE(g.IsClosed(session));
}

TEST(QueueTest, IsClosedOnlyWhenAWaitingCloseHasItsTurn) {
  QueueGraph g(/*capacity=*/1);
  ClientSession session(g.root);
  ASSERT_TRUE(g.Enqueue(session, 1).ok());
  Status blocked, close;
  std::thread producer([&] { blocked = g.Enqueue(session, 2); });
  ASSERT_NO_FATAL_FAILURE(AwaitWaiting(session, g, /*dequeues=*/false, 1));
  std::thread closer([&] { close = session.Run({}, {}, {g.close}).status(); });
  ASSERT_NO_FATAL_FAILURE(AwaitWaiting(session, g, /*dequeues=*/false, 2));
  EXPECT_FALSE(g.IsClosed(session));  // the close waits behind the blocked enqueue
  EXPECT_EQ((*session.Run({}, g.dequeue))[0].scalar<int32_t>(), 1);
  producer.join();
  closer.join();
  EXPECT_TRUE(blocked.ok()) << blocked;
  EXPECT_TRUE(close.ok()) << close;
  EXPECT_TRUE(g.IsClosed(session));
}

TEST(QueueTest, IsClosedWithCancelPendingEnqueuesAndThroughASharedName) {
  QueueGraph g;
  // Another node of the same shared name is the same queue.
  auto same = ops::FIFOQueue(g.root.WithOpName("same"), {DT_INT32, DT_STRING},
                             {.shapes = {{}, {}}, .shared_name = "g"});
  auto same_closed = ops::QueueIsClosed(g.root, same);
  ClientSession session(g.root);
  EXPECT_EQ((*session.Run({}, {same_closed}))[0], Tensor::Scalar(false));
  ASSERT_TRUE(session.Run({}, {}, {g.cancel_close}).ok());
  EXPECT_TRUE(g.IsClosed(session));
  EXPECT_EQ((*session.Run({}, {same_closed}))[0], Tensor::Scalar(true));
}

TEST(QueueTest, IsClosedNeedsAnExistingQueue) {
  testing::KernelTest t;
  const std::string device = t.device()->name();
  auto missing = t.Run(testing::NodeBuilder("is_closed", "QueueIsClosed").NumInputs(1),
                       {Tensor::Scalar(ResourceHandle{device, "", "missing", "FIFOQueue"})});
  EXPECT_TRUE(IsNotFound(missing.status())) << missing.status();
  EXPECT_EQ(missing.status().message(), "queue missing does not exist on " + device);
  // A handle to something else is refused before any lookup.
  auto variable = t.Run(testing::NodeBuilder("is_closed", "QueueIsClosed").NumInputs(1),
                        {Tensor::Scalar(ResourceHandle{device, "", "v", "Variable"})});
  EXPECT_TRUE(IsInvalidArgument(variable.status())) << variable.status();
  EXPECT_THAT(std::string(variable.status().message()), HasSubstr("wrong type"));
}

// The queue itself, driven without a session: every callback runs on the calling thread, so
// the order of events is exact and no test waits on a clock.
struct Recorded {
  bool called = false;
  Status status = errors::Unknown("not called");
  FIFOQueueResource::EnqueueDone Callback() {
    return [this](const Status& s) {
      called = true;
      status = s;
    };
  }
};

std::shared_ptr<FIFOQueueResource> ScalarQueue(int64_t capacity) {
  return std::make_shared<FIFOQueueResource>("q", std::vector<DataType>{DT_INT32},
                                             std::vector<PartialShape>{PartialShape::Of({})},
                                             capacity);
}

std::vector<FIFOQueueResource::Tuple> One(int32_t v) { return {{Tensor::Scalar<int32_t>(v)}}; }

// TensorFlow's QueueBase::Close: the close waits in line behind pending enqueues.
TEST(FIFOQueueResourceTest, CloseWaitsForPendingEnqueues) {
  auto q = ScalarQueue(/*capacity=*/1);
  Recorded first, blocked, close, late;
  q->Enqueue(One(1), nullptr, first.Callback());
  ASSERT_TRUE(first.called && first.status.ok()) << first.status;
  q->Enqueue(One(2), nullptr, blocked.Callback());
  EXPECT_FALSE(blocked.called);  // the queue is full
  q->Close(/*cancel_pending_enqueues=*/false, nullptr, close.Callback());
  EXPECT_FALSE(close.called) << "close returned while an enqueue was pending: " << close.status;
  q->Enqueue(One(3), nullptr, late.Callback());  // behind the close
  EXPECT_FALSE(late.called);

  StatusOr<std::vector<FIFOQueueResource::Tuple>> got = errors::Unknown("not called");
  q->Dequeue(1, false, nullptr, [&](auto r) { got = std::move(r); });
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0][0].scalar<int32_t>(), 1);
  // Room for the pending enqueue; then the close's turn; then the late enqueue is refused.
  EXPECT_TRUE(blocked.called && blocked.status.ok()) << blocked.status;
  EXPECT_TRUE(close.called && close.status.ok()) << close.status;
  ASSERT_TRUE(late.called);
  EXPECT_TRUE(IsCancelled(late.status)) << late.status;
  EXPECT_EQ(late.status.message(), "FIFOQueue 'q' is closed.");
  EXPECT_EQ(q->size(), 1);  // 2 went in before the close, 3 did not
}

// A queue destroyed while steps wait on it (its container cleared by CleanupAll or Reset)
// ends their waits: found by the worker service fuzzer, where such a step never ended.
TEST(FIFOQueueResourceTest, DestroyingAQueueEndsTheAttemptsWaitingOnIt) {
  auto q = ScalarQueue(/*capacity=*/1);
  Recorded first, blocked;
  q->Enqueue(One(1), nullptr, first.Callback());
  q->Enqueue(One(2), nullptr, blocked.Callback());  // waits: the queue is full
  auto empty = ScalarQueue(/*capacity=*/1);
  StatusOr<std::vector<FIFOQueueResource::Tuple>> got = errors::Unknown("not called");
  CancellationManager cm;
  empty->Dequeue(1, false, &cm, [&](auto r) { got = std::move(r); });  // waits: empty
  ASSERT_FALSE(blocked.called);
  q.reset();
  empty.reset();
  ASSERT_TRUE(blocked.called);
  EXPECT_TRUE(IsCancelled(blocked.status)) << blocked.status;
  EXPECT_EQ(blocked.status.message(), "FIFOQueue 'q' was destroyed: its container was cleared");
  EXPECT_TRUE(IsCancelled(got.status())) << got.status();
  cm.StartCancel();  // its callback finds the queue gone
}

TEST(FIFOQueueResourceTest, IsClosedWhenTheCloseTakesEffect) {
  auto q = ScalarQueue(/*capacity=*/1);
  CancellationManager step;
  Recorded first, blocked, cancelled_close, close;
  q->Enqueue(One(1), nullptr, first.Callback());
  q->Enqueue(One(2), nullptr, blocked.Callback());
  EXPECT_FALSE(q->is_closed());
  // A close cancelled while it waits leaves the queue open.
  q->Close(false, &step, cancelled_close.Callback());
  step.StartCancel();
  ASSERT_TRUE(cancelled_close.called);
  EXPECT_FALSE(q->is_closed());
  q->Close(false, nullptr, close.Callback());
  EXPECT_FALSE(close.called);
  EXPECT_FALSE(q->is_closed());
  q->Dequeue(1, false, nullptr, [](auto) {});  // room for 2, then the close's turn
  ASSERT_TRUE(close.called && close.status.ok()) << close.status;
  EXPECT_TRUE(q->is_closed());
  auto at_once = ScalarQueue(/*capacity=*/-1);
  Recorded cancelling;
  at_once->Close(true, nullptr, cancelling.Callback());
  EXPECT_TRUE(at_once->is_closed());
}

TEST(FIFOQueueResourceTest, SecondCloseIsCancelledUnlessCancellingPendingEnqueues) {
  auto q = ScalarQueue(/*capacity=*/-1);
  Recorded first, second, cancelling;
  q->Close(false, nullptr, first.Callback());
  ASSERT_TRUE(first.called && first.status.ok()) << first.status;
  q->Close(false, nullptr, second.Callback());
  ASSERT_TRUE(second.called);
  EXPECT_TRUE(IsCancelled(second.status)) << second.status;
  EXPECT_EQ(second.status.message(), "Queue 'q' is already closed.");
  // TensorFlow's close with cancel_pending_enqueues never reports an earlier close.
  q->Close(true, nullptr, cancelling.Callback());
  ASSERT_TRUE(cancelling.called);
  EXPECT_TRUE(cancelling.status.ok()) << cancelling.status;
}

TEST(FIFOQueueResourceTest, CancelPendingEnqueuesClosesAtOnceAndCancelsWaitingCloses) {
  auto q = ScalarQueue(/*capacity=*/1);
  Recorded first, blocked, close, cancelling;
  q->Enqueue(One(1), nullptr, first.Callback());
  q->Enqueue(One(2), nullptr, blocked.Callback());
  q->Close(false, nullptr, close.Callback());
  ASSERT_FALSE(close.called);
  q->Close(true, nullptr, cancelling.Callback());
  ASSERT_TRUE(cancelling.called && blocked.called && close.called);
  EXPECT_TRUE(cancelling.status.ok()) << cancelling.status;
  EXPECT_TRUE(IsCancelled(blocked.status)) << blocked.status;
  EXPECT_TRUE(IsCancelled(close.status)) << close.status;
  EXPECT_EQ(close.status.message(), "Queue 'q' is already closed.");
  EXPECT_EQ(q->size(), 1);
}

TEST(FIFOQueueResourceTest, AWaitingCloseIsCancelledWithItsStepAndLeavesTheQueueOpen) {
  auto q = ScalarQueue(/*capacity=*/1);
  CancellationManager step;
  Recorded first, blocked, close, after;
  q->Enqueue(One(1), nullptr, first.Callback());
  q->Enqueue(One(2), nullptr, blocked.Callback());
  q->Close(false, &step, close.Callback());
  ASSERT_FALSE(close.called);
  step.StartCancel();
  ASSERT_TRUE(close.called);
  EXPECT_TRUE(IsCancelled(close.status)) << close.status;
  EXPECT_EQ(close.status.message(), "Close operation was cancelled");
  EXPECT_FALSE(blocked.called);  // still waiting for room: the queue is not closed
  q->Close(false, nullptr, after.Callback());
  EXPECT_FALSE(after.called);
  q.reset();  // the waiting enqueue and close end with the queue, before their recorders go
  EXPECT_TRUE(blocked.called && after.called);
}

TEST(QueueTest, SecondCloseIsCancelledAsInTensorFlow) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root, {DT_INT32}, {.shared_name = "closing"});
  auto close = ops::QueueClose(root, q);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {close}).ok());
  Status again = session.Run({}, {}, {close}).status();
  EXPECT_TRUE(IsCancelled(again)) << again;
  EXPECT_THAT(std::string(again.message()), HasSubstr("Queue 'closing' is already closed."));
}

TEST(QueueTest, DequeueManyAndUpToNeedComponentShapes) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root, {DT_INT32});  // no shapes
  auto put = ops::QueueEnqueue(root, q, {1});
  auto many = ops::QueueDequeueMany(root.WithOpName("many"), q, 1);
  auto up_to = ops::QueueDequeueUpTo(root.WithOpName("up_to"), q, 1);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {put}).ok());
  // Bounded: a queue that accepted the request would leave the second one waiting.
  const RunOptions bounded{.timeout = absl::Seconds(30)};
  for (const auto& outputs : {many, up_to}) {
    auto out = session.Run({}, outputs, {}, bounded);
    EXPECT_TRUE(IsInvalidArgument(out.status())) << out.status();
    EXPECT_THAT(std::string(out.status().message()),
                HasSubstr("FIFOQueue's DequeueMany and DequeueUpTo require the components to "
                          "have specified shapes."));
  }
  EXPECT_THAT(std::string(session.Run({}, up_to, {}, bounded).status().message()),
              HasSubstr("node up_to"));
}

TEST(QueueTest, ContainerIsValidatedLikeAVariables) {
  for (const std::string container : {"bad container", "_runtime", "/abs", "-x"}) {
    Scope root = Scope::NewRootScope();
    auto q = ops::FIFOQueue(root, {DT_INT32}, {.container = container});
    auto v = ops::MakeVariable(root, "v", DT_INT32, {}, {.container = container});
    ClientSession session(root);
    for (const Output& handle : {q.handle, v.handle}) {
      auto out = session.Run({}, {handle});
      EXPECT_TRUE(IsInvalidArgument(out.status())) << container << ": " << out.status();
      EXPECT_THAT(std::string(out.status().message()),
                  HasSubstr("container \"" + container + "\" contains invalid characters"));
    }
  }
  Scope root = Scope::NewRootScope();
  auto good = ops::FIFOQueue(root, {DT_INT32}, {.container = "job.a-1/b_c"});
  ClientSession session(root);
  auto out = session.Run({}, {good.handle});
  EXPECT_TRUE(out.ok()) << out.status();
}

// ---- RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue ----

std::vector<int32_t> DequeueAll(ClientSession& session, const Output& take, int n) {
  std::vector<int32_t> got;
  for (int i = 0; i < n; ++i) {
    auto out = session.Run({}, {take});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) break;
    got.push_back((*out)[0].scalar<int32_t>());
  }
  return got;
}

TEST(QueueKindsTest, RandomShuffleQueueShufflesReproduciblyAndHoldsBack) {
  std::vector<int32_t> values(50);
  std::iota(values.begin(), values.end(), 0);
  std::vector<std::vector<int32_t>> orders;
  for (int run = 0; run < 2; ++run) {
    Scope root = Scope::NewRootScope();
    auto q = ops::RandomShuffleQueue(
        root, {DT_INT32},
        {.queue = {.shapes = {{}}, .capacity = 100}, .min_after_dequeue = 10, .seed = 7});
    auto fill = ops::QueueEnqueueMany(root, q, {Tensor::FromVector<int32_t>(values)});
    auto take = ops::QueueDequeue(root, q)[0];
    auto size = ops::QueueSize(root, q);
    auto close = ops::QueueClose(root, q);
    ClientSession session(root);
    ASSERT_TRUE(session.Run({}, {}, {fill}).ok());
    std::vector<int32_t> got = DequeueAll(session, take, 40);
    // Ten stay behind while the queue is open: another dequeue would wait.
    EXPECT_EQ((*session.Run({}, {size}))[0].scalar<int32_t>(), 10);
    ASSERT_TRUE(session.Run({}, {}, {close}).ok());
    std::vector<int32_t> rest = DequeueAll(session, take, 10);
    got.insert(got.end(), rest.begin(), rest.end());
    std::vector<int32_t> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, values);  // a permutation
    EXPECT_NE(got, values);     // and not the order they went in
    orders.push_back(got);
  }
  EXPECT_EQ(orders[0], orders[1]);  // the same seed, the same order
}

TEST(QueueKindsTest, RandomShuffleQueueSharedWithAnotherMinIsRefused) {
  Scope root = Scope::NewRootScope();
  auto a = ops::RandomShuffleQueue(root, {DT_INT32},
                                   {.queue = {.shared_name = "mixed"}, .min_after_dequeue = 1});
  auto b = ops::RandomShuffleQueue(root, {DT_INT32},
                                   {.queue = {.shared_name = "mixed"}, .min_after_dequeue = 2});
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {a.handle}).ok());
  auto refused = session.Run({}, {b.handle});
  EXPECT_TRUE(IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("is a RandomShuffleQueue with min_after_dequeue 1"));
}

TEST(QueueKindsTest, PaddingFIFOQueuePadsBatchesToTheLargestElement) {
  Scope root = Scope::NewRootScope();
  auto q = ops::PaddingFIFOQueue(root, {DT_INT32, DT_STRING}, {.shapes = {{-1, 2}, {-1}}});
  auto x = ops::Placeholder(root, DT_INT32);
  auto s = ops::Placeholder(root, DT_STRING);
  auto put = ops::QueueEnqueue(root, q, {x, s});
  auto batch = ops::QueueDequeueMany(root, q, 2);
  ClientSession session(root);
  ASSERT_TRUE(session
                  .Run({{x, Tensor::FromVector<int32_t>({1, 2}, TensorShape({1, 2}))},
                        {s, Tensor::FromVector<std::string>({"a"})}},
                       {}, {put})
                  .ok());
  ASSERT_TRUE(session
                  .Run({{x, Tensor::FromVector<int32_t>({3, 4, 5, 6, 7, 8}, TensorShape({3, 2}))},
                        {s, Tensor::FromVector<std::string>({"b", "c"})}},
                       {}, {put})
                  .ok());
  auto out = session.Run({}, batch);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({1, 2, 0, 0, 0, 0, 3, 4, 5, 6, 7, 8},
                                                   TensorShape({2, 3, 2})));
  EXPECT_EQ((*out)[1], Tensor::FromVector<std::string>({"a", "", "b", "c"}, TensorShape({2, 2})));
  // A shape the queue does not allow is refused at the enqueue.
  auto bad = session.Run({{x, Tensor::FromVector<int32_t>({1, 2, 3}, TensorShape({1, 3}))},
                          {s, Tensor::FromVector<std::string>({"a"})}},
                         {}, {put});
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("Shape mismatch in tuple component 0"));
}

TEST(QueueKindsTest, PriorityQueueGivesTheSmallestPriorityFirst) {
  Scope root = Scope::NewRootScope();
  auto q = ops::PriorityQueue(root, {DT_STRING}, {.shapes = {{}}});
  ASSERT_EQ(q.component_types, (std::vector<DataType>{DT_INT64, DT_STRING}));
  auto put = ops::QueueEnqueueMany(
      root, q,
      {Tensor::FromVector<int64_t>({5, -1, 3, 3}),
       Tensor::FromVector<std::string>({"five", "minus one", "three", "three again"})});
  auto batch = ops::QueueDequeueMany(root, q, 4);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {put}).ok());
  auto out = session.Run({}, batch);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int64_t>({-1, 3, 3, 5}));
  EXPECT_EQ((*out)[1],
            Tensor::FromVector<std::string>({"minus one", "three", "three again", "five"}));
}

}  // namespace
}  // namespace tw
