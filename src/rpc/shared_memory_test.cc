// The shared-memory blocks within one process: the sender and the receiver are the same
// process here, which opens its own blocks through /proc/<pid>/fd like a peer would.
#include "src/rpc/shared_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tw::shm {
namespace {

std::vector<uint32_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = seed = seed * 1664525u + 1013904223u;
  return v;
}

TEST(SharedMemoryTest, HostIdentityIsKnownHereAndOnlyEqualIdentitiesShareAHost) {
  ASSERT_FALSE(HostIdentity().empty()) << "this machine can reopen memfds through /proc";
  EXPECT_TRUE(SameHost(HostIdentity()));
  EXPECT_FALSE(SameHost(""));
  EXPECT_FALSE(SameHost(HostIdentity() + "x"));
}

// The key is read through /proc like any peer's file: only at the advertised place, with
// the advertised id (a restarted peer with the same pid and fd has another).
// ServerOptions.shared_memory = false comes through TurnOff, which refuses once the process
// has offered shared memory (a transfer in flight could break) and leaves it on.
TEST(SharedMemoryTest, TurningItOffAfterUseIsFailedPreconditionAndChangesNothing) {
  ASSERT_FALSE(HostIdentity().empty());
  Status s = TurnOff();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(std::string(s.message()).find("this process already uses it"), std::string::npos) << s;
  EXPECT_FALSE(HostIdentity().empty());
}

TEST(SharedMemoryTest, KeysAreReadThroughProcAndCheckedAgainstTheirId) {
  const proto::SharedMemoryKeyRef own = KeyLocation();
  ASSERT_EQ(own.pid(), getpid());
  const std::string key = PeerKey(own);
  ASSERT_EQ(key.size(), 32u);
  // The same file under another fd is read through /proc/<pid>/fd, as a peer would.
  const int copy = dup(static_cast<int>(own.fd()));
  ASSERT_GE(copy, 0);
  proto::SharedMemoryKeyRef where = own;
  where.set_fd(copy);
  EXPECT_EQ(PeerKey(where), key);
  where.set_key_id(own.key_id() ^ 1);
  EXPECT_EQ(PeerKey(where), "") << "another key id: a restarted peer";
  close(copy);
  where = own;
  where.set_fd(1 << 20);
  EXPECT_EQ(PeerKey(where), "") << "no such fd";
  // Something that is not a key file.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  where.set_fd(pipe_fds[0]);
  where.set_key_id(own.key_id() + 1);  // not cached under the id of the key read above
  EXPECT_EQ(PeerKey(where), "") << "a pipe";
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

// Refs in requests must carry this process's key; the check comes before any open.
TEST(SharedMemoryTest, RequestRefsWithoutTheKeyAreInvalidArgumentAndOpenNothing) {
  const auto src = Pattern(40'000, 5);
  std::vector<uint32_t> dst(src.size());
  const size_t n = dst.size() * 4;
  const std::string key = PeerKey(KeyLocation());
  proto::SharedMemoryRef offered;
  ASSERT_TRUE(Export(src.data(), n, key, &offered).ok());
  proto::SharedMemoryRef other = offered;
  other.set_key(std::string(32, 'x'));
  const uint64_t opened = GetStats().opened;
  Status s = ImportFromRequest(other, dst.data(), n);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  other.clear_key();
  EXPECT_TRUE(IsInvalidArgument(ImportFromRequest(other, dst.data(), n)));
  EXPECT_EQ(GetStats().opened, opened);
  ASSERT_TRUE(ImportFromRequest(offered, dst.data(), n).ok());
  EXPECT_EQ(dst, src);
}

TEST(SharedMemoryTest, ExportThenImportIsBitExact) {
  const auto src = Pattern(300'001, 7);
  proto::SharedMemoryRef ref;
  ASSERT_TRUE(Export(src.data(), src.size() * 4, "", &ref).ok());
  EXPECT_EQ(ref.pid(), getpid());
  EXPECT_EQ(ref.length(), src.size() * 4);
  std::vector<uint32_t> dst(src.size());
  ASSERT_TRUE(Import(ref, dst.data(), dst.size() * 4).ok());
  EXPECT_EQ(dst, src);
}

TEST(SharedMemoryTest, AReleasedBlockIsReusedForTheNextTransfer) {
  const auto src = Pattern(200'000, 1);
  std::vector<uint32_t> dst(src.size());
  proto::SharedMemoryRef ref;
  ASSERT_TRUE(Export(src.data(), src.size() * 4, "", &ref).ok());
  ASSERT_TRUE(Import(ref, dst.data(), dst.size() * 4).ok());
  const Stats before = GetStats();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Export(src.data(), src.size() * 4, "", &ref).ok());
    ASSERT_TRUE(Import(ref, dst.data(), dst.size() * 4).ok());
  }
  const Stats after = GetStats();
  EXPECT_EQ(after.blocks, before.blocks);
  EXPECT_EQ(after.exported - before.exported, 20u);
  EXPECT_EQ(after.imported - before.imported, 20u);
}

TEST(SharedMemoryTest, ABlockReadTwiceIsDataLoss) {
  const auto src = Pattern(50'000, 2);
  std::vector<uint32_t> dst(src.size());
  proto::SharedMemoryRef ref;
  ASSERT_TRUE(Export(src.data(), src.size() * 4, "", &ref).ok());
  ASSERT_TRUE(Import(ref, dst.data(), dst.size() * 4).ok());
  Status again = Import(ref, dst.data(), dst.size() * 4);
  EXPECT_TRUE(IsDataLoss(again)) << again;
}

TEST(SharedMemoryTest, ABlockTakenBackBeforeItWasReadIsDataLossAndReused) {
  const auto src = Pattern(60'000, 3);
  std::vector<uint32_t> dst(src.size());
  proto::SharedMemoryRef lost;
  ASSERT_TRUE(Export(src.data(), src.size() * 4, "", &lost).ok());
  const Stats before = GetStats();
  ReclaimUnclaimed(absl::ZeroDuration());  // as if kUnclaimedAfter had passed
  EXPECT_EQ(GetStats().reclaimed - before.reclaimed, 1u);
  Status late = Import(lost, dst.data(), dst.size() * 4);
  EXPECT_TRUE(IsDataLoss(late)) << late;

  proto::SharedMemoryRef next;
  ASSERT_TRUE(Export(src.data(), src.size() * 4, "", &next).ok());
  EXPECT_EQ(next.block_id(), lost.block_id()) << "the block taken back serves again";
  EXPECT_NE(next.ticket(), lost.ticket());
  EXPECT_TRUE(IsDataLoss(Import(lost, dst.data(), dst.size() * 4))) << "an old use stays dead";
  ASSERT_TRUE(Import(next, dst.data(), dst.size() * 4).ok());
  EXPECT_EQ(dst, src);
}

// References come from the network: every malformed one is an error, never a crash or a
// read outside a block.
TEST(SharedMemoryTest, MalformedReferencesAreErrors) {
  const auto src = Pattern(40'000, 4);
  std::vector<uint32_t> dst(src.size());
  proto::SharedMemoryRef good;
  ASSERT_TRUE(Export(src.data(), src.size() * 4, "", &good).ok());
  const size_t n = dst.size() * 4;

  EXPECT_TRUE(IsInvalidArgument(Import(good, dst.data(), n - 4))) << "length disagrees";
  proto::SharedMemoryRef r = good;
  r.set_pid(0);
  EXPECT_TRUE(IsInvalidArgument(Import(r, dst.data(), n)));
  r = good;
  r.set_ticket(0);
  EXPECT_TRUE(IsInvalidArgument(Import(r, dst.data(), n)));
  r = good;
  r.set_fd(1 << 20);  // no such fd
  EXPECT_TRUE(IsUnavailable(Import(r, dst.data(), n)));
  r = good;
  r.set_block_id(good.block_id() ^ 1);  // another block's id
  EXPECT_TRUE(IsUnavailable(Import(r, dst.data(), n)));
  r = good;
  r.set_ticket(good.ticket() + 1);  // a use that has not happened
  EXPECT_TRUE(IsDataLoss(Import(r, dst.data(), n)));

  // A longer length than the block holds.
  std::vector<uint32_t> big(32 << 20);
  r = good;
  r.set_length(big.size() * 4);
  EXPECT_TRUE(IsInvalidArgument(Import(r, big.data(), big.size() * 4)));

  // fds that are not blocks: a pipe, and a regular file without a block header.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  r = good;
  r.set_fd(pipe_fds[0]);
  EXPECT_TRUE(IsUnavailable(Import(r, dst.data(), n)));
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  const std::string file = ::testing::TempDir() + "/not_a_block";
  const int fd = open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 1 << 20), 0);
  r = good;
  r.set_fd(fd);
  r.set_block_id(0);
  EXPECT_TRUE(IsUnavailable(Import(r, dst.data(), n)));
  close(fd);
  unlink(file.c_str());

  // The good reference still works after all that.
  ASSERT_TRUE(Import(good, dst.data(), n).ok());
  EXPECT_EQ(dst, src);
}

TEST(SharedMemoryTest, ConcurrentTransfersAreBitExact) {
  constexpr int kThreads = 4, kRounds = 50;
  std::vector<std::thread> threads;
  std::vector<int> wrong(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &wrong] {
      for (int i = 0; i < kRounds; ++i) {
        const auto src = Pattern(40'000 + 1000 * t + i, t * 1000 + i);
        std::vector<uint32_t> dst(src.size());
        proto::SharedMemoryRef ref;
        if (!Export(src.data(), src.size() * 4, "", &ref).ok() ||
            !Import(ref, dst.data(), dst.size() * 4).ok() || dst != src) {
          ++wrong[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(kThreads, 0));
}

}  // namespace
}  // namespace tw::shm
