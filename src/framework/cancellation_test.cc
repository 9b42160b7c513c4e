#include "src/framework/cancellation.h"

#include "gtest/gtest.h"

namespace tw {
namespace {

TEST(CancellationManagerTest, RunsRegisteredCallbacksOnce) {
  CancellationManager cm;
  int runs = 0;
  auto token = cm.NewToken();
  ASSERT_TRUE(cm.RegisterCallback(token, [&] { ++runs; }));
  cm.StartCancel();
  cm.StartCancel();
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(cm.IsCancelled());
  EXPECT_FALSE(cm.DeregisterCallback(token));
}

TEST(CancellationManagerTest, RefusesRegistrationAfterCancel) {
  CancellationManager cm;
  cm.StartCancel();
  EXPECT_FALSE(cm.RegisterCallback(cm.NewToken(), [] {}));
}

TEST(CancellationManagerTest, DeregisteredCallbackDoesNotRun) {
  CancellationManager cm;
  bool ran = false;
  auto token = cm.NewToken();
  ASSERT_TRUE(cm.RegisterCallback(token, [&] { ran = true; }));
  EXPECT_TRUE(cm.DeregisterCallback(token));
  cm.StartCancel();
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace tw
