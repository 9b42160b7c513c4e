#include "src/core/buffer_pool.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace tw {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(BufferPoolTest, SmallBuffersAreAlignedAndNotCached) {
  BufferPool pool(64 * kMiB);
  void* p = pool.Allocate(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % BufferPool::kAlignment, 0u);
  std::memset(p, 1, 1000);
  pool.Free(p, 1000);
  EXPECT_EQ(pool.cached_bytes(), 0u);
}

TEST(BufferPoolTest, FreedLargeBlockIsReusedForASimilarSize) {
  BufferPool pool(64 * kMiB);
  void* first = pool.Allocate(16 * kMiB);
  ASSERT_NE(first, nullptr);
  std::memset(first, 7, 16 * kMiB);
  pool.Free(first, 16 * kMiB);
  EXPECT_EQ(pool.cached_bytes(), 16 * kMiB);
  // Rounds up to the same size class, so the same block comes back.
  void* second = pool.Allocate(16 * kMiB - 100);
  EXPECT_EQ(second, first);
  EXPECT_EQ(pool.cached_bytes(), 0u);
  // A different class gets a new block.
  void* other = pool.Allocate(3 * kMiB);
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, first);
  pool.Free(second, 16 * kMiB - 100);
  pool.Free(other, 3 * kMiB);
  EXPECT_EQ(pool.cached_bytes(), 16 * kMiB + 3 * kMiB);
  pool.Trim();
  EXPECT_EQ(pool.cached_bytes(), 0u);
}

TEST(BufferPoolTest, CacheNeverExceedsItsLimitAndKeepsTheNewestBlocks) {
  BufferPool pool(20 * kMiB);
  void* a = pool.Allocate(16 * kMiB);
  void* b = pool.Allocate(4 * kMiB);
  void* c = pool.Allocate(8 * kMiB);
  ASSERT_TRUE(a != nullptr && b != nullptr && c != nullptr);
  pool.Free(a, 16 * kMiB);
  pool.Free(b, 4 * kMiB);  // 20 MiB cached
  pool.Free(c, 8 * kMiB);  // replaces the oldest (a): 12 MiB cached
  EXPECT_EQ(pool.cached_bytes(), 12 * kMiB);
  EXPECT_EQ(pool.Allocate(8 * kMiB), c);
  EXPECT_EQ(pool.Allocate(4 * kMiB), b);
  void* huge = pool.Allocate(32 * kMiB);
  ASSERT_NE(huge, nullptr);
  pool.Free(huge, 32 * kMiB);  // larger than the whole cache: unmapped
  EXPECT_EQ(pool.cached_bytes(), 0u);
  pool.Free(c, 8 * kMiB);
  pool.Free(b, 4 * kMiB);
}

TEST(BufferPoolTest, LoweringTheLimitDropsTheOldestBlocksAtOnce) {
  BufferPool pool(20 * kMiB);
  void* a = pool.Allocate(4 * kMiB);
  void* b = pool.Allocate(8 * kMiB);
  ASSERT_TRUE(a != nullptr && b != nullptr);
  pool.Free(a, 4 * kMiB);
  pool.Free(b, 8 * kMiB);  // 12 MiB cached
  pool.SetMaxCachedBytes(10 * kMiB);
  EXPECT_EQ(pool.max_cached_bytes(), 10 * kMiB);
  EXPECT_EQ(pool.cached_bytes(), 8 * kMiB);  // a, the oldest, is gone
  EXPECT_EQ(pool.Allocate(8 * kMiB), b);
  pool.SetMaxCachedBytes(0);  // no caching: a freed block is unmapped
  pool.Free(b, 8 * kMiB);
  EXPECT_EQ(pool.cached_bytes(), 0u);
}

TEST(BufferPoolTest, TheDefaultPoolKeepsAGibibyteUntilToldOtherwise) {
  EXPECT_EQ(BufferPool::Default()->max_cached_bytes(), size_t{1} << 30);
}

TEST(BufferPoolTest, BlockSizesWasteAtMostAnEighth) {
  EXPECT_EQ(BufferPool::BlockSize(100), 100u);
  EXPECT_EQ(BufferPool::BlockSize(kMiB), kMiB);
  EXPECT_EQ(BufferPool::BlockSize(16 * kMiB), 16 * kMiB);
  for (size_t bytes : {kMiB + 1, 5 * kMiB + 3, 100 * kMiB + 12345, 256 * kMiB - 1}) {
    const size_t block = BufferPool::BlockSize(bytes);
    EXPECT_GE(block, bytes);
    EXPECT_LE(block - bytes, bytes / 8) << bytes;
  }
}

TEST(BufferPoolTest, ImpossibleSizeIsNullNotACrash) {
  BufferPool pool(0);
  EXPECT_EQ(pool.Allocate(size_t{1} << 62), nullptr);
}

}  // namespace
}  // namespace tw
