// BufferPool: where tensors get memory. Small buffers come from the C++ allocator; large
// ones (>= kMinPooledBytes) are mapped with transparent huge pages and, when freed, kept
// for the next tensor of a similar size instead of being returned to the kernel.
//
// Why: on the machines this runs on, touching fresh memory costs ~10 µs per 4 KiB page, so
// a fresh 16 MiB buffer costs ~40 ms, more than sending it over loopback. Steps allocate
// same-sized tensors again and again (received tensors, variable snapshots, updates), so
// reusing the blocks makes those allocations free after the first step.
#ifndef TENSORWEAVE_SRC_CORE_BUFFER_POOL_H_
#define TENSORWEAVE_SRC_CORE_BUFFER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>

#include "absl/synchronization/mutex.h"

namespace tw {

// Thread-safe.
class BufferPool {
 public:
  static constexpr size_t kMinPooledBytes = size_t{1} << 20;
  static constexpr size_t kAlignment = 64;

  // `max_cached_bytes`: freed memory kept for reuse; a block freed when the cache is full
  // replaces the oldest cached blocks (a block larger than the whole cache is unmapped).
  explicit BufferPool(size_t max_cached_bytes) : max_cached_bytes_(max_cached_bytes) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // At least `bytes` bytes aligned to kAlignment, or nullptr when memory cannot be had.
  void* Allocate(size_t bytes);
  // `bytes` must be the size given to Allocate.
  void Free(void* data, size_t bytes);

  size_t cached_bytes() const;
  // How many blocks were mapped fresh from the kernel so far: once steps repeat their
  // shapes it stops growing (every large tensor reuses a freed block).
  uint64_t blocks_mapped() const { return blocks_mapped_.load(std::memory_order_relaxed); }
  size_t max_cached_bytes() const;
  // Keeps at most `bytes` of freed memory from now on, unmapping the oldest cached blocks
  // beyond it at once (0 disables caching).
  void SetMaxCachedBytes(size_t bytes);
  // Unmaps every cached block (memory pressure, or an idle server).
  void Trim();

  // The pool tensors use, one per process; keeps at most kDefaultMaxCachedBytes (1 GiB)
  // until SetMaxCachedBytes (ServerOptions.buffer_pool_mb, which `tw server` and RunConfig
  // take from TW_BUFFER_POOL_MB) says otherwise.
  static BufferPool* Default();
  static constexpr size_t kDefaultMaxCachedBytes = size_t{1} << 30;

  // The size actually reserved for a request of `bytes` (large sizes round up so that
  // similar sizes share blocks; at most 1/8 more).
  static size_t BlockSize(size_t bytes);

 private:
  std::atomic<uint64_t> blocks_mapped_{0};
  mutable absl::Mutex mu_;
  size_t max_cached_bytes_ ABSL_GUARDED_BY(mu_);
  size_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  struct Block {
    void* data;
    uint64_t freed;  // when it was freed, in Free calls: the oldest go first
  };
  std::multimap<size_t, Block> free_ ABSL_GUARDED_BY(mu_);  // by block size
  uint64_t next_tick_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CORE_BUFFER_POOL_H_
