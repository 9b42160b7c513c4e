// ParallelFor: a kernel's work split across its device's compute pool (intra-op threads).
//
//   ParallelFor(ctx->device(), pixels, /*min_shard=*/256, [&](int64_t begin, int64_t end) {
//     ConvolveRange(begin, end);   // shards are disjoint; the caller runs one of them too
//   });
//
// The pool is the one the executor runs kernels on, so a kernel that waits for its helpers
// must never wait for a helper that has not started: that is how two kernels, each waiting
// for help the other's thread would give, deadlock a pool of two. Here shards are claimed
// from a shared counter by whichever thread comes first, the calling thread included, and
// the caller waits only for shards another thread has already claimed (and is running).
// Helpers that start after the work is gone return at once. So a busy pool costs only
// parallelism: with no thread free, the caller runs every shard itself.
#ifndef TENSORWEAVE_SRC_FRAMEWORK_PARALLEL_FOR_H_
#define TENSORWEAVE_SRC_FRAMEWORK_PARALLEL_FOR_H_

#include <cstdint>
#include <functional>

#include "src/framework/device_base.h"

namespace tw {

// Below this many multiply-adds (or comparable element operations) a shard is not worth
// a thread's wake-up (~10 us): kernels size their min_shard from it.
inline constexpr int64_t kMinShardMultiplyAdds = int64_t{1} << 21;

// How many shards ParallelFor makes of `total` units on `device`: one per pool thread, but
// none smaller than `min_shard` units (so small work stays on the calling thread), and at
// least 1. Kernels that keep per-shard state (partial sums) size it with this.
int64_t ParallelShards(const DeviceBase* device, int64_t total, int64_t min_shard);

// Calls fn(shard, begin, end) for the ParallelShards(device, total, min_shard) shards of
// [0, total), contiguous and in order of `shard`, on the calling thread and on the
// device's pool, and returns when every call has returned. `fn` must be safe to call
// concurrently on disjoint ranges and must not throw. A null device runs everything here.
void ParallelForShards(DeviceBase* device, int64_t total, int64_t min_shard,
                       const std::function<void(int shard, int64_t begin, int64_t end)>& fn);

// The same without the shard index.
inline void ParallelFor(DeviceBase* device, int64_t total, int64_t min_shard,
                        const std::function<void(int64_t begin, int64_t end)>& fn) {
  ParallelForShards(device, total, min_shard,
                    [&fn](int, int64_t begin, int64_t end) { fn(begin, end); });
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_FRAMEWORK_PARALLEL_FOR_H_
