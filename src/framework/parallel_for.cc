#include "src/framework/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "absl/synchronization/blocking_counter.h"

namespace tw {
namespace {

// Shared by the caller and its helpers; a helper that starts late holds it alive but
// touches neither `fn` nor the counter's waiter, since it claims no shard.
struct ShardWork {
  ShardWork(int num_shards, int64_t num_units,
            const std::function<void(int, int64_t, int64_t)>* shard_fn)
      : shards(num_shards), total(num_units), fn(shard_fn), finished(num_shards) {}

  // Runs shards until none is left to claim.
  void RunClaimed() {
    for (int shard = next.fetch_add(1); shard < shards; shard = next.fetch_add(1)) {
      const int64_t begin = total * shard / shards;
      const int64_t end = total * (shard + 1) / shards;
      (*fn)(shard, begin, end);
      finished.DecrementCount();
    }
  }

  const int shards;
  const int64_t total;
  const std::function<void(int, int64_t, int64_t)>* const fn;
  std::atomic<int> next{0};
  absl::BlockingCounter finished;  // one count per shard, whoever ran it
};

}  // namespace

int64_t ParallelShards(const DeviceBase* device, int64_t total, int64_t min_shard) {
  if (device == nullptr || total <= 0) return 1;
  const int64_t by_size = total / std::max<int64_t>(1, min_shard);
  return std::clamp<int64_t>(by_size, 1, std::max(1, device->NumThreads()));
}

void ParallelForShards(DeviceBase* device, int64_t total, int64_t min_shard,
                       const std::function<void(int shard, int64_t begin, int64_t end)>& fn) {
  if (total <= 0) return;
  const int shards = static_cast<int>(ParallelShards(device, total, min_shard));
  if (shards == 1) {
    fn(0, 0, total);
    return;
  }
  auto work = std::make_shared<ShardWork>(shards, total, &fn);
  for (int helper = 1; helper < shards; ++helper) {
    device->Schedule([work] { work->RunClaimed(); });
  }
  work->RunClaimed();
  work->finished.Wait();
}

}  // namespace tw
