#include "src/framework/resource_mgr.h"

#include <thread>

#include "gtest/gtest.h"

namespace tw {
namespace {

class Counter : public ResourceBase {
 public:
  static constexpr char kTypeName[] = "Counter";
  std::string TypeName() const override { return kTypeName; }
  int value = 0;
};

StatusOr<std::shared_ptr<Counter>> MakeCounter() { return std::make_shared<Counter>(); }

TEST(ResourceMgrTest, SameContainerAndNameIsTheSameResource) {
  ResourceMgr rm("ps");
  auto a = rm.LookupOrCreate<Counter>("", "c", MakeCounter);
  auto b = rm.LookupOrCreate<Counter>("ps", "c", MakeCounter);  // "" is the default container
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  auto other = rm.LookupOrCreate<Counter>("other", "c", MakeCounter);
  EXPECT_NE(a->get(), other->get());
  EXPECT_EQ(rm.size(), 2u);
}

TEST(ResourceMgrTest, LookupOfMissingResourceIsNotFound) {
  ResourceMgr rm("worker");
  auto r = rm.Lookup<Counter>("", "nope");
  EXPECT_TRUE(IsNotFound(r.status()));
  EXPECT_EQ(r.status().message(), "Resource worker/Counter/nope does not exist");
}

TEST(ResourceMgrTest, ClearDestroysOnlyTheNamedContainers) {
  ResourceMgr rm("ps");
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("", "a", MakeCounter).ok());
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("keep", "b", MakeCounter).ok());
  auto held = *rm.Lookup<Counter>("", "a");
  rm.Clear({"ps", "unknown"});
  EXPECT_EQ(rm.size(), 1u);
  EXPECT_TRUE(IsNotFound(rm.Lookup<Counter>("", "a").status()));
  held->value = 3;  // a holder keeps a cleared resource alive
  EXPECT_EQ(held->value, 3);
  rm.Clear({});
  EXPECT_EQ(rm.size(), 0u);
}

TEST(ResourceMgrTest, ConcurrentCreatorsAgreeOnOneResource) {
  ResourceMgr rm("ps");
  std::vector<Counter*> seen(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back(
        [&, i] { seen[i] = rm.LookupOrCreate<Counter>("", "x", MakeCounter)->get(); });
  }
  for (auto& t : threads) t.join();
  for (Counter* c : seen) EXPECT_EQ(c, seen[0]);
}

}  // namespace
}  // namespace tw
