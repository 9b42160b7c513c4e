#include "src/framework/rendezvous.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

TEST(RendezvousKeyTest, FormatsAndParses) {
  const std::string key = RendezvousKey("/job:mnist/replica:1/task:2/CPU:0", 7890,
                                        "/job:mnist/replica:1/task:2/device:GPU:0", "var0");
  EXPECT_EQ(key,
            "/job:mnist/replica:1/task:2/CPU:0;0000000000001ed2;"
            "/job:mnist/replica:1/task:2/device:GPU:0;var0;0:0");
  auto parsed = ParseRendezvousKey(key);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->src_incarnation, 7890u);
  EXPECT_EQ(parsed->tensor_name, "var0");
  EXPECT_THAT(std::string(ParseRendezvousKey("a;b;c").status().message()),
              HasSubstr("invalid rendezvous key \"a;b;c\""));
  EXPECT_FALSE(ParseRendezvousKey("a;000000000000zzzz;c;d;0:0").ok());
}

TEST(LocalRendezvousTest, SendBeforeRecvAndRecvBeforeSend) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send("k1", Tensor::Scalar<int32_t>(1)).ok());
  int got = 0;
  r.RecvAsync("k1", nullptr, [&](const Status& s, const Tensor& t) {
    ASSERT_TRUE(s.ok());
    got = t.scalar<int32_t>();
  });
  EXPECT_EQ(got, 1);
  r.RecvAsync("k2", nullptr, [&](const Status& s, const Tensor& t) {
    ASSERT_TRUE(s.ok());
    got = t.scalar<int32_t>();
  });
  EXPECT_EQ(got, 1);  // still waiting
  ASSERT_TRUE(r.Send("k2", Tensor::Scalar<int32_t>(2)).ok());
  EXPECT_EQ(got, 2);
  EXPECT_THAT(std::string(r.Send("k3", Tensor()).message()), ::testing::IsEmpty());
  EXPECT_THAT(std::string(r.Send("k3", Tensor()).message()), HasSubstr("sent twice"));
}

// A second receiver of a key already waited for is refused at once: a value is sent once,
// and the first waiter (a peer's RecvTensor call) must still be answered exactly once.
TEST(LocalRendezvousTest, ASecondReceiverOfOneKeyIsRefusedAndTheFirstStillAnswered) {
  LocalRendezvous r;
  int first_calls = 0, second_calls = 0;
  Tensor first_value;
  Status second_status;
  r.RecvAsync("k", nullptr, [&](const Status& s, const Tensor& t) {
    ++first_calls;
    EXPECT_TRUE(s.ok()) << s;
    first_value = t;
  });
  r.RecvAsync("k", nullptr, [&](const Status& s, const Tensor&) {
    ++second_calls;
    second_status = s;
  });
  EXPECT_EQ(second_calls, 1);
  EXPECT_TRUE(IsInvalidArgument(second_status)) << second_status;
  EXPECT_EQ(second_status.message(), "Recv of k is already waiting");
  ASSERT_TRUE(r.Send("k", Tensor::Scalar<int32_t>(5)).ok());
  EXPECT_EQ(first_calls, 1);
  EXPECT_EQ(first_value.scalar<int32_t>(), 5);
}

TEST(LocalRendezvousTest, CancellationAndAbortWakeWaiters) {
  LocalRendezvous r;
  CancellationManager cm;
  Status cancelled, aborted;
  r.RecvAsync("a", &cm, [&](const Status& s, const Tensor&) { cancelled = s; });
  r.RecvAsync("b", nullptr, [&](const Status& s, const Tensor&) { aborted = s; });
  cm.StartCancel();
  EXPECT_TRUE(IsCancelled(cancelled)) << cancelled;
  r.StartAbort(errors::Aborted("peer restarted"));
  EXPECT_TRUE(IsAborted(aborted));
  Status later;
  r.RecvAsync("c", nullptr, [&](const Status& s, const Tensor&) { later = s; });
  EXPECT_EQ(later.message(), "peer restarted");
}

// A server call's waiter: its key and cancellation manager live in the call's state, which
// the completion frees. A Send racing with the RecvAsync that registers the waiter must not
// leave RecvAsync touching them afterwards (the sanitizer build catches a use after free).
TEST(LocalRendezvousTest, ACompletionMayFreeTheWaitersKeyAndCancellation) {
  struct CallState {
    std::string key;
    CancellationManager cm;
  };
  LocalRendezvous rendezvous;
  std::atomic<int> completed{0};
  constexpr int kCalls = 2000;
  for (int i = 0; i < kCalls; ++i) {
    auto* call = new CallState{"key" + std::to_string(i), {}};
    std::thread sender([&rendezvous, i] {
      EXPECT_TRUE(rendezvous.Send("key" + std::to_string(i), Tensor::Scalar<int32_t>(i)).ok());
    });
    rendezvous.RecvAsync(call->key, &call->cm,
                         [call, i, &completed](const Status& s, const Tensor& t) {
                           EXPECT_TRUE(s.ok()) << s;
                           EXPECT_EQ(t.scalar<int32_t>(), i);
                           delete call;
                           ++completed;
                         });
    sender.join();
  }
  EXPECT_EQ(completed.load(), kCalls);
}

// A cancellation that another thread's StartCancel has begun still runs the rendezvous's
// callback after DeregisterCallback returned, and so possibly after the rendezvous is gone
// (a peer's step cancelled while CleanupGraph drops the step here). The callback must then
// do nothing. Here the callback registered first destroys the rendezvous, so the
// rendezvous's own callback runs after it: ASan reported a use after free. Found by
// worker_service_fuzz.
TEST(LocalRendezvousTest, ACancellationRunningAfterTheRendezvousIsGoneDoesNothing) {
  CancellationManager cm;
  auto rendezvous = std::make_unique<LocalRendezvous>();
  ASSERT_TRUE(cm.RegisterCallback(cm.NewToken(), [&] {
    rendezvous->StartAbort(errors::Cancelled("step ended"));
    rendezvous.reset();
  }));
  Status status;
  int calls = 0;
  rendezvous->RecvAsync("k", &cm, [&](const Status& s, const Tensor&) {
    status = s;
    ++calls;
  });
  cm.StartCancel();
  EXPECT_EQ(rendezvous, nullptr);
  EXPECT_EQ(calls, 1);
  EXPECT_THAT(std::string(status.message()), HasSubstr("step ended"));
}

}  // namespace
}  // namespace tw
