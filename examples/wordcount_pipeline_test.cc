#include "examples/wordcount_pipeline.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"

namespace tw::examples {
namespace {

TEST(NameFetcherTest, TakesEveryNameOnceInOrderInShrinkingBatches) {
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueue(root, {DT_STRING}, {.shapes = {{}}, .shared_name = "names"});
  auto all = ops::Placeholder(root, DT_STRING);
  auto fill = ops::QueueEnqueueMany(root, queue, {all});
  auto close = ops::QueueClose(root, queue);
  auto n = ops::Placeholder(root, DT_INT32);
  auto names = ops::QueueDequeueUpTo(root, queue, n);
  auto left = ops::QueueSize(root.WithControlDependencies({names[0].op()}), queue);
  ClientSession session(root);
  std::vector<std::string> expected;
  for (int i = 0; i < 1000; ++i) expected.push_back("file-" + std::to_string(i));
  ASSERT_TRUE(session.Run({{all, Tensor::FromVector(expected)}}, {}, {fill}).ok());
  ASSERT_TRUE(session.Run({}, {}, {close}).ok());

  NameFetcher fetcher(&session, {.batch_size = n, .names = names[0], .left = left},
                      /*num_maps=*/2, /*max_batch=*/100);
  std::vector<std::string> got;
  std::vector<int64_t> sizes;
  while (true) {
    auto batch = fetcher.Next();
    if (IsOutOfRange(batch.status())) break;
    ASSERT_TRUE(batch.ok()) << batch.status();
    sizes.push_back(batch->num_elements());
    for (const std::string& name : batch->flat<std::string>()) got.push_back(name);
    ASSERT_LE(sizes.size(), 1000u);
  }
  EXPECT_EQ(got, expected);
  // 1 (nothing known yet), then capped at 100, then a quarter of what is left, down to 1.
  ASSERT_GE(sizes.size(), 4u);
  EXPECT_EQ(sizes[0], 1);
  EXPECT_EQ(sizes[1], 100);
  EXPECT_EQ(sizes.back(), 1);
  EXPECT_TRUE(std::is_sorted(sizes.begin() + 1, sizes.end(), std::greater<>()));
  EXPECT_LT(sizes.size(), 40u);                        // far fewer round trips than names
  EXPECT_TRUE(IsOutOfRange(fetcher.Next().status()));  // and it stays at the end
}

TEST(NameFetcherTest, ClosingTheSessionEndsAWaitingFetch) {
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueue(root, {DT_STRING}, {.shapes = {{}}, .shared_name = "never_filled"});
  auto n = ops::Placeholder(root, DT_INT32);
  auto names = ops::QueueDequeueUpTo(root, queue, n);
  auto left = ops::QueueSize(root.WithControlDependencies({names[0].op()}), queue);
  ClientSession session(root);
  NameFetcher fetcher(&session, {.batch_size = n, .names = names[0], .left = left}, 1, 10);
  std::thread closer([&] { session.Close().IgnoreError(); });
  auto batch = fetcher.Next();  // would hang if Close did not end the fetch
  closer.join();
  EXPECT_FALSE(batch.ok());
  EXPECT_FALSE(IsOutOfRange(batch.status())) << batch.status();
}

TEST(CountAdderTest, EveryCountReachesTheVariable) {
  Scope root = Scope::NewRootScope();
  auto total = ops::MakeVariable(root, "total", DT_INT64, {});
  auto init = ops::Assign(root, total, int64_t{0});
  auto count = ops::Placeholder(root, DT_INT64);
  auto add = ops::AssignAdd(root, total, count);
  auto read = ops::ReadVariable(root, total);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {init.op()}).ok());
  CountAdder adder(&session, {.count = count, .add = add.op()});
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 1; i <= 1000; ++i) adder.Add(i);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(adder.Finish().ok());
  auto value = session.Run({}, {read});
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ((*value)[0].scalar<int64_t>(), 2 * 500500);
}

TEST(CountAdderTest, FinishReportsAFailedAdd) {
  Scope root = Scope::NewRootScope();
  auto total = ops::MakeVariable(root, "uninitialized", DT_INT64, {});
  auto count = ops::Placeholder(root, DT_INT64);
  auto add = ops::AssignAdd(root, total, count);
  ClientSession session(root);
  CountAdder adder(&session, {.count = count, .add = add.op()});
  adder.Add(5);
  Status s = adder.Finish();
  EXPECT_TRUE(IsFailedPrecondition(s)) << s;
}

}  // namespace
}  // namespace tw::examples
