#include "src/core/buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <vector>

#include "src/base/metrics.h"

namespace tw {
namespace {

void* MapBlock(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Huge pages make the first touch of a fresh block an order of magnitude cheaper; the
  // kernel may decline, which only costs speed.
  (void)madvise(p, size, MADV_HUGEPAGE);
  return p;
}

}  // namespace

size_t BufferPool::BlockSize(size_t bytes) {
  if (bytes < kMinPooledBytes) return bytes;
  // Eight size classes per power of two.
  size_t power = kMinPooledBytes;
  while (power * 2 <= bytes && power * 2 > power) power *= 2;
  const size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

BufferPool::~BufferPool() { Trim(); }

void* BufferPool::Allocate(size_t bytes) {
  if (bytes < kMinPooledBytes) {
    return ::operator new (bytes, std::align_val_t{kAlignment}, std::nothrow);
  }
  const size_t size = BlockSize(bytes);
  {
    absl::MutexLock lock(&mu_);
    auto it = free_.find(size);
    if (it != free_.end()) {
      void* p = it->second.data;
      free_.erase(it);
      cached_bytes_ -= size;
      return p;
    }
  }
  void* p = MapBlock(size);
  if (p == nullptr) {
    Trim();  // cached blocks of other sizes may be what stands in the way
    p = MapBlock(size);
  }
  if (p != nullptr) blocks_mapped_.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void BufferPool::Free(void* data, size_t bytes) {
  if (data == nullptr) return;
  if (bytes < kMinPooledBytes) {
    ::operator delete (data, std::align_val_t{kAlignment});
    return;
  }
  const size_t size = BlockSize(bytes);
  std::vector<std::pair<size_t, void*>> evicted;
  bool cached = false;
  {
    absl::MutexLock lock(&mu_);
    if (size <= max_cached_bytes_) {
      // The block just freed is the likeliest to be wanted again (steps repeat their
      // shapes): make room by dropping the oldest blocks of other sizes.
      while (cached_bytes_ + size > max_cached_bytes_ && !free_.empty()) {
        auto oldest = std::min_element(
            free_.begin(), free_.end(),
            [](const auto& a, const auto& b) { return a.second.freed < b.second.freed; });
        evicted.emplace_back(oldest->first, oldest->second.data);
        cached_bytes_ -= oldest->first;
        free_.erase(oldest);
      }
      free_.emplace(size, Block{data, next_tick_++});
      cached_bytes_ += size;
      cached = true;
    }
  }
  for (auto& [s, p] : evicted) munmap(p, s);
  if (!cached) munmap(data, size);
}

size_t BufferPool::cached_bytes() const {
  absl::MutexLock lock(&mu_);
  return cached_bytes_;
}

void BufferPool::Trim() {
  std::multimap<size_t, Block> blocks;
  {
    absl::MutexLock lock(&mu_);
    blocks.swap(free_);
    cached_bytes_ = 0;
  }
  for (auto& [size, block] : blocks) munmap(block.data, size);
}

size_t BufferPool::max_cached_bytes() const {
  absl::MutexLock lock(&mu_);
  return max_cached_bytes_;
}

void BufferPool::SetMaxCachedBytes(size_t bytes) {
  std::vector<std::pair<size_t, void*>> evicted;
  {
    absl::MutexLock lock(&mu_);
    max_cached_bytes_ = bytes;
    while (cached_bytes_ > max_cached_bytes_ && !free_.empty()) {
      auto oldest = std::min_element(free_.begin(), free_.end(), [](const auto& a, const auto& b) {
        return a.second.freed < b.second.freed;
      });
      evicted.emplace_back(oldest->first, oldest->second.data);
      cached_bytes_ -= oldest->first;
      free_.erase(oldest);
    }
  }
  for (auto& [size, p] : evicted) munmap(p, size);
}

BufferPool* BufferPool::Default() {
  static BufferPool* pool = [] {
    auto* made = new BufferPool(kDefaultMaxCachedBytes);
    // Never removed: the pool lives as long as the process.
    static auto handle = Metrics().AddCollector([made](std::vector<GaugeSample>* out) {
      out->push_back({"tw_buffer_pool_cached_bytes",
                      "Bytes of freed tensor memory the process keeps for reuse.",
                      {},
                      static_cast<double>(made->cached_bytes())});
    });
    return made;
  }();
  return pool;
}

}  // namespace tw
