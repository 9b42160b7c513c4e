#include "src/framework/rendezvous.h"

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

}  // namespace
}  // namespace tw
