#include "src/rpc/tensor_chunks.h"

#include <cstring>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

proto::TensorChunk ChunkOf(const Tensor& t, size_t offset, size_t length) {
  proto::TensorChunk chunk;
  chunk.set_step_id(9);
  chunk.set_key("k");
  TensorMetaToProto(t, chunk.mutable_meta());
  chunk.set_offset(offset);
  chunk.set_length(length);
  return chunk;
}

Status PutFrom(ChunkStore& store, const Tensor& t, size_t offset, size_t length) {
  const char* src = static_cast<const char*>(t.raw_data()) + offset;
  return store.Put(ChunkOf(t, offset, length), length, [src](void* dst, size_t n) {
    std::memcpy(dst, src, n);
    return OkStatus();
  });
}

Tensor Pattern(int64_t n) {
  Tensor t(DT_INT32, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<int32_t>()[i] = static_cast<int32_t>(i * 31 + 7);
  return t;
}

TEST(ChunkStoreTest, ChunksCoverTheTensorWithAPartialLastOne) {
  auto chunks = ChunksOf(2 * kChunkBytes + 5);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[2], std::make_pair(2 * kChunkBytes, size_t{5}));
  EXPECT_TRUE(ChunksOf(0).empty());
}

TEST(ChunkStoreTest, PushedChunksInAnyOrderAssembleTheTensor) {
  const Tensor t = Pattern((2 * kChunkBytes + 400) / 4);
  ChunkStore store;
  auto chunks = ChunksOf(t.TotalBytes());
  for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) {
    EXPECT_TRUE(IsInvalidArgument(store.TakePut(9, "k").status()));  // not complete yet
    ASSERT_TRUE(PutFrom(store, t, it->first, it->second).ok());
  }
  auto got = store.TakePut(9, "k");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, t);
  EXPECT_EQ(store.size(), 0u);
}

TEST(ChunkStoreTest, BadOrRepeatedChunksAreInvalidArgument) {
  const Tensor t = Pattern((kChunkBytes + 8) / 4);
  ChunkStore store;
  ASSERT_TRUE(PutFrom(store, t, 0, kChunkBytes).ok());
  Status again = PutFrom(store, t, 0, kChunkBytes);
  EXPECT_TRUE(IsInvalidArgument(again));
  EXPECT_THAT(std::string(again.message()), HasSubstr("not an expected chunk"));
  EXPECT_TRUE(IsInvalidArgument(PutFrom(store, t, 100, 8)));          // not on a boundary
  EXPECT_TRUE(IsInvalidArgument(PutFrom(store, t, kChunkBytes, 4)));  // wrong length
  // A chunk claiming more bytes than its message carries.
  Status short_message =
      store.Put(ChunkOf(t, kChunkBytes, 8), 4, [](void*, size_t) { return OkStatus(); });
  EXPECT_TRUE(IsInvalidArgument(short_message));
}

TEST(ChunkStoreTest, OfferedTensorIsServedChunkByChunkThenForgotten) {
  const Tensor t = Pattern((kChunkBytes + 12) / 4);
  ChunkStore store;
  store.Offer(9, "k", t);
  auto chunks = ChunksOf(t.TotalBytes());
  for (const auto& [offset, length] : chunks) {
    auto served = store.Serve(ChunkOf(t, offset, length));
    ASSERT_TRUE(served.ok()) << served.status();
    EXPECT_TRUE(served->SharesBufferWith(t));
  }
  EXPECT_EQ(store.size(), 0u);
  EXPECT_TRUE(IsInvalidArgument(store.Serve(ChunkOf(t, 0, kChunkBytes)).status()));
}

TEST(ChunkStoreTest, UnclaimedEntriesExpire) {
  ChunkStore store(absl::ZeroDuration());
  store.Offer(1, "old", Pattern(8));
  absl::SleepFor(absl::Milliseconds(1));
  store.Offer(2, "new", Pattern(8));  // expires the first on the way in
  proto::TensorChunk old = ChunkOf(Pattern(8), 0, 32);
  old.set_step_id(1);
  old.set_key("old");
  EXPECT_TRUE(IsInvalidArgument(store.Serve(old).status()));
  EXPECT_EQ(store.size(), 1u);
}

// A refused first chunk keeps nothing: a header alone cannot make the store hold a tensor
// of the size it names.
TEST(ChunkStoreTest, ARefusedFirstChunkKeepsNoTensor) {
  const Tensor t = Pattern((kChunkBytes + 8) / 4);
  ChunkStore store;
  EXPECT_TRUE(IsInvalidArgument(PutFrom(store, t, 8, 64)));
  EXPECT_EQ(store.size(), 0u);
}

// A chunk whose entry expired while its bytes were being read, and whose key was put again
// meanwhile, does not count for the new entry (which never received its bytes).
TEST(ChunkStoreTest, AChunkOfAnExpiredEntryDoesNotCountForItsSuccessor) {
  const Tensor t = Pattern((kChunkBytes + 8) / 4);  // two chunks
  ChunkStore store(absl::ZeroDuration());
  auto chunks = ChunksOf(t.TotalBytes());
  ASSERT_EQ(chunks.size(), 2u);
  Status late =
      store.Put(ChunkOf(t, 0, chunks[0].second), chunks[0].second, [&](void* dst, size_t n) {
        absl::SleepFor(absl::Milliseconds(2));  // the entry expires
        // The key again: a new entry, which gets the second chunk.
        EXPECT_TRUE(PutFrom(store, t, chunks[1].first, chunks[1].second).ok());
        std::memcpy(dst, t.raw_data(), n);
        return OkStatus();
      });
  EXPECT_TRUE(absl::IsAborted(late)) << late;
  auto taken = store.TakePut(9, "k");
  EXPECT_TRUE(IsInvalidArgument(taken.status())) << "its first chunk never arrived";
  EXPECT_THAT(std::string(taken.status().message()), HasSubstr("1 chunks of k are missing"));
}

}  // namespace
}  // namespace tw
