// ParallelFor on a real CpuDevice's pool: every unit is covered once, shards are as the
// contract says, and kernels that wait for help never deadlock a busy pool.
#include "src/framework/parallel_for.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "src/runtime/cpu_device.h"

namespace tw {
namespace {

std::unique_ptr<CpuDevice> MakeDevice(int threads) {
  auto device = CpuDevice::Create(
      DeviceName{.job = "localhost", .replica = 0, .task = 0, .type = "CPU", .id = 0},
      {.num_threads = threads});
  EXPECT_TRUE(device.ok()) << device.status();
  return *std::move(device);
}

TEST(ParallelShardsTest, OnePerThreadButNoneSmallerThanMinShard) {
  auto device = MakeDevice(4);
  EXPECT_EQ(ParallelShards(device.get(), 1000, 10), 4);
  EXPECT_EQ(ParallelShards(device.get(), 1000, 300), 3);
  EXPECT_EQ(ParallelShards(device.get(), 1000, 5000), 1);
  EXPECT_EQ(ParallelShards(device.get(), 0, 1), 1);
  EXPECT_EQ(ParallelShards(nullptr, 1000, 1), 1);
}

TEST(ParallelForTest, CoversEveryUnitOnceInContiguousOrderedShards) {
  auto device = MakeDevice(3);
  std::vector<std::atomic<int>> hits(1001);
  std::vector<std::pair<int64_t, int64_t>> ranges(3, {-1, -1});
  ParallelForShards(device.get(), 1001, 1, [&](int shard, int64_t begin, int64_t end) {
    ranges[static_cast<size_t>(shard)] = {begin, end};
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "unit " << i;
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[2].second, 1001);
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_EQ(ranges[i].first, ranges[i - 1].second);
}

TEST(ParallelForTest, UsesThePoolsThreadsWhenTheyAreFree) {
  auto device = MakeDevice(2);
  // Each shard waits (boundedly) until both have started: both see 2 only if two threads
  // run them at once.
  std::atomic<int> started{0};
  std::atomic<int> saw_both{0};
  ParallelFor(device.get(), 2, 1, [&](int64_t, int64_t) {
    started.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    if (started.load() == 2) saw_both.fetch_add(1);
  });
  EXPECT_EQ(saw_both.load(), 2);
}

TEST(ParallelForTest, RunsEverythingOnTheCallerWhenThePoolIsBusy) {
  // Declared before the device, so that its threads are joined before these go.
  absl::Notification release;
  absl::BlockingCounter pool_blocked(2);
  auto device = MakeDevice(2);
  for (int i = 0; i < 2; ++i) {
    device->Schedule([&] {
      pool_blocked.DecrementCount();
      release.WaitForNotification();
    });
  }
  pool_blocked.Wait();
  // Both pool threads are held: the caller must run both shards instead of waiting for
  // the helper it scheduled, which starts (and finds nothing to do) only after release.
  std::vector<std::thread::id> ran_on;
  ParallelFor(device.get(), 100, 1,
              [&](int64_t, int64_t) { ran_on.push_back(std::this_thread::get_id()); });
  release.Notify();
  ASSERT_EQ(ran_on.size(), 2u);
  EXPECT_EQ(ran_on[0], std::this_thread::get_id());
  EXPECT_EQ(ran_on[1], std::this_thread::get_id());
}

TEST(ParallelForTest, NestedWaitsOnATwoThreadPoolDoNotDeadlock) {
  // Two kernels on the pool's two threads, each splitting its work: neither may wait for a
  // helper queued behind the other kernel.
  std::atomic<int64_t> units{0};
  absl::BlockingCounter kernels_done(2);
  auto device = MakeDevice(2);  // joined before the counters above go
  for (int kernel = 0; kernel < 2; ++kernel) {
    device->Schedule([&] {
      for (int round = 0; round < 200; ++round) {
        ParallelFor(device.get(), 64, 1,
                    [&](int64_t begin, int64_t end) { units.fetch_add(end - begin); });
      }
      kernels_done.DecrementCount();
    });
  }
  kernels_done.Wait();
  EXPECT_EQ(units.load(), 2 * 200 * 64);
}

}  // namespace
}  // namespace tw
