#include "src/rpc/chunk_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <future>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

Tensor Pattern(int64_t n, int seed = 7) {
  Tensor t(DT_INT32, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<int32_t>()[i] = static_cast<int32_t>(i * 31 + seed);
  return t;
}

proto::TensorChunk ChunkOf(const Tensor& t, const std::string& key, size_t offset, size_t length) {
  proto::TensorChunk chunk;
  chunk.set_step_id(3);
  chunk.set_key(key);
  TensorMetaToProto(t, chunk.mutable_meta());
  chunk.set_offset(offset);
  chunk.set_length(length);
  return chunk;
}

struct Outcome {
  Status status;
  bool unreachable = false;
};

// Runs one chunk through `client` and waits for its outcome.
Outcome PutOne(ChunkSocketClient& client, const Tensor& t, const std::string& key, size_t offset,
               size_t length, CancellationManager* cm = nullptr) {
  std::promise<Outcome> done;
  client.Put(ChunkOf(t, key, offset, length), t, cm, [&](const Status& s, bool unreachable) {
    done.set_value({s, unreachable});
  });
  return done.get_future().get();
}
Outcome FetchOne(ChunkSocketClient& client, const proto::TensorChunk& chunk, void* dst,
                 CancellationManager* cm = nullptr) {
  std::promise<Outcome> done;
  client.Fetch(chunk, dst, cm, [&](const Status& s, bool unreachable) {
    done.set_value({s, unreachable});
  });
  return done.get_future().get();
}

// A plain TCP connection to 127.0.0.1:`port`, for bytes no client would send.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// Everything the server sends until it closes the connection (or 5 s pass).
std::string ReadToEnd(int fd) {
  std::string all;
  char buf[4096];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) all.append(buf, static_cast<size_t>(n));
  return all;
}

class ChunkSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ChunkSocketServer::Start("127.0.0.1", &store_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_GT(server_->port(), 0);
  }

  ChunkStore store_;
  std::unique_ptr<ChunkSocketServer> server_;
};

TEST_F(ChunkSocketTest, PushedChunksLandInTheStoreBitExact) {
  const Tensor t = Pattern((2 * kChunkBytes + 12) / 4);  // 2 full chunks and a partial one
  ChunkSocketClient client("127.0.0.1", server_->port(), 2);
  for (const auto& [offset, length] : ChunksOf(t.TotalBytes())) {
    Outcome o = PutOne(client, t, "pushed", offset, length);
    ASSERT_TRUE(o.status.ok()) << o.status;
    EXPECT_FALSE(o.unreachable);
  }
  auto got = store_.TakePut(3, "pushed");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, t);
}

TEST_F(ChunkSocketTest, OfferedTensorsAreFetchedBitExactOnSeveralConnectionsAtOnce) {
  const Tensor t = Pattern((3 * kChunkBytes + 8) / 4, 11);
  store_.Offer(3, "fetched", t);
  Tensor into(DT_INT32, t.shape());
  ChunkSocketClient client("127.0.0.1", server_->port(), 2);
  std::vector<std::future<Outcome>> pending;
  std::vector<std::promise<Outcome>> promises(ChunksOf(t.TotalBytes()).size());
  size_t i = 0;
  for (const auto& [offset, length] : ChunksOf(t.TotalBytes())) {
    pending.push_back(promises[i].get_future());
    proto::TensorChunk chunk;
    chunk.set_step_id(3);
    chunk.set_key("fetched");
    chunk.set_offset(offset);
    chunk.set_length(length);
    client.Fetch(chunk, static_cast<char*>(into.raw_data()) + offset, nullptr,
                 [&promises, i](const Status& s, bool unreachable) {
                   promises[i].set_value({s, unreachable});
                 });
    ++i;
  }
  for (auto& p : pending) {
    Outcome o = p.get();
    ASSERT_TRUE(o.status.ok()) << o.status;
  }
  EXPECT_EQ(into, t);
  EXPECT_EQ(store_.size(), 0u) << "every chunk served: the entry is gone";
}

// The store's errors come back to the caller with their code and message, and the client
// connects again for the next chunk (the server closed the connection after the error).
TEST_F(ChunkSocketTest, RefusedChunksReportTheStoresErrorAndTheNextChunkStillWorks) {
  ChunkSocketClient client("127.0.0.1", server_->port(), 1);
  proto::TensorChunk missing;
  missing.set_step_id(3);
  missing.set_key("nobody");
  missing.set_length(16);
  char buf[16];
  Outcome o = FetchOne(client, missing, buf);
  EXPECT_TRUE(IsInvalidArgument(o.status)) << o.status;
  EXPECT_THAT(std::string(o.status.message()), HasSubstr("no tensor nobody of step 3"));
  EXPECT_FALSE(o.unreachable);

  // A put at an offset that is no chunk's: refused before its bytes are read.
  const Tensor t = Pattern(kChunkBytes / 4 + 100);
  o = PutOne(client, t, "bad", 8, 64);
  EXPECT_TRUE(IsInvalidArgument(o.status)) << o.status;
  EXPECT_THAT(std::string(o.status.message()), HasSubstr("is not an expected chunk"));

  const Tensor small = Pattern(kChunkBytes / 4 - 1);  // one chunk
  o = PutOne(client, small, "good", 0, small.TotalBytes());
  ASSERT_TRUE(o.status.ok()) << o.status;
  auto got = store_.TakePut(3, "good");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, small);
}

TEST_F(ChunkSocketTest, NothingListeningIsUnavailableAndUnreached) {
  const int port = server_->port();
  server_.reset();  // the port is closed now
  ChunkSocketClient client("127.0.0.1", port, 1);
  const Tensor t = Pattern(16);
  Outcome o = PutOne(client, t, "k", 0, t.TotalBytes());
  EXPECT_TRUE(IsUnavailable(o.status)) << o.status;
  EXPECT_THAT(std::string(o.status.message()),
              HasSubstr("cannot connect to the chunk socket at 127.0.0.1:" + std::to_string(port)));
  EXPECT_TRUE(o.unreachable) << "the caller may send it another way";
  // Later chunks fail at once, without another connect (where SYNs are dropped, each would
  // wait for the connect timeout).
  o = PutOne(client, t, "k", 0, t.TotalBytes());
  EXPECT_TRUE(o.unreachable);
  EXPECT_THAT(std::string(o.status.message()), HasSubstr("cannot connect"));
}

// Bytes from the network never crash the server: a wrong magic, an oversized header and a
// header that does not parse each get an error reply and a closed connection, and the
// server goes on serving.
TEST_F(ChunkSocketTest, GarbageGetsAnErrorReplyAndTheServerGoesOn) {
  auto frame = [](uint32_t magic, uint32_t op, uint32_t size, const std::string& body) {
    std::string f(12, '\0');
    for (int i = 0; i < 4; ++i) {
      f[i] = static_cast<char>(magic >> (8 * i));
      f[4 + i] = static_cast<char>(op >> (8 * i));
      f[8 + i] = static_cast<char>(size >> (8 * i));
    }
    return f + body;
  };
  const uint32_t magic = 0x31435754;
  const struct {
    std::string bytes;
    std::string error;
  } cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", "not a chunk socket request"},
      {frame(magic, 9, 0, ""), "not a chunk socket request"},
      {frame(magic, 1, 1u << 30, ""), "exceeds"},
      {frame(magic, 2, 5, "\xff\xff\xff\xff\xff"), "does not parse as tw.proto.TensorChunk"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    const int fd = Connect(server_->port());
    ASSERT_EQ(send(fd, c.bytes.data(), c.bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(c.bytes.size()));
    const std::string reply = ReadToEnd(fd);
    close(fd);
    ASSERT_GE(reply.size(), 12u);
    EXPECT_EQ(reply[4], static_cast<char>(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(reply.substr(12), HasSubstr(c.error));
  }
  // A connection that stops mid-header just ends.
  const int fd = Connect(server_->port());
  const std::string half = frame(magic, 1, 100, "abc");
  send(fd, half.data(), half.size(), MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);
  EXPECT_EQ(ReadToEnd(fd), "");
  close(fd);

  ChunkSocketClient client("127.0.0.1", server_->port(), 1);
  const Tensor t = Pattern(1000);
  Outcome o = PutOne(client, t, "after", 0, t.TotalBytes());
  EXPECT_TRUE(o.status.ok()) << o.status;
}

// A chunk whose server never answers ends when its step is cancelled.
TEST(ChunkSocketClientTest, CancellationEndsAChunkInProgress) {
  // A listener that accepts (the kernel does, from its backlog) and never reads or answers.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length);
  ChunkSocketClient client("127.0.0.1", ntohs(addr.sin_port), 1);
  CancellationManager cm;
  proto::TensorChunk chunk;
  chunk.set_key("never");
  chunk.set_length(64);
  char buf[64];
  std::promise<Outcome> done;
  client.Fetch(chunk, buf, &cm, [&](const Status& s, bool unreachable) {
    done.set_value({s, unreachable});
  });
  auto outcome = done.get_future();
  EXPECT_EQ(outcome.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  const absl::Time start = absl::Now();
  cm.StartCancel();
  ASSERT_EQ(outcome.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  Outcome o = outcome.get();
  EXPECT_TRUE(IsCancelled(o.status)) << o.status;
  EXPECT_FALSE(o.unreachable);
  // Chunks of a step cancelled before they start are refused at once.
  o.status = FetchOne(client, chunk, buf, &cm).status;
  EXPECT_TRUE(IsCancelled(o.status)) << o.status;
  close(listener);
}

// Destroying a client ends the chunk in progress and fails the queued ones: every callback
// runs before the destructor returns.
TEST(ChunkSocketClientTest, DestroyingTheClientRunsEveryCallback) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length);
  std::atomic<int> failed{0};
  {
    ChunkSocketClient client("127.0.0.1", ntohs(addr.sin_port), 1);
    proto::TensorChunk chunk;
    chunk.set_key("never");
    chunk.set_length(64);
    static char buf[64];
    for (int i = 0; i < 3; ++i) {
      client.Fetch(chunk, buf, nullptr, [&](const Status& s, bool) {
        if (!s.ok()) ++failed;
      });
    }
    absl::SleepFor(absl::Milliseconds(100));  // the first one is in progress
  }
  EXPECT_EQ(failed.load(), 3);
  close(listener);
}

// Stopping the server ends its idle connections too: the destructor does not wait for
// clients to go away.
TEST_F(ChunkSocketTest, StoppingTheServerDoesNotWaitForIdleClients) {
  ChunkSocketClient client("127.0.0.1", server_->port(), 2);
  const Tensor t = Pattern(1000);
  ASSERT_TRUE(PutOne(client, t, "k", 0, t.TotalBytes()).status.ok());
  const int idle = Connect(server_->port());
  const absl::Time start = absl::Now();
  server_.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(ReadToEnd(idle), "");
  close(idle);
}

}  // namespace
}  // namespace tw
