#include "src/rpc/chunk_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <future>
#include <optional>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/rpc/task_port.h"
#include "testing/ports.h"

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
  const int fd = testing::ConnectToLoopback(port);
  EXPECT_GE(fd, 0) << "cannot connect to port " << port;
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

// Wire bytes made by hand (src/rpc/chunk_socket.h): a frame {magic, op or code, size}
// little-endian, then `body`. kMagic is "TWC1".
constexpr uint32_t kMagic = 0x31435754;
std::string Frame(uint32_t magic, uint32_t op_or_code, uint32_t size, const std::string& body) {
  std::string f(12, '\0');
  for (int i = 0; i < 4; ++i) {
    f[i] = static_cast<char>(magic >> (8 * i));
    f[4 + i] = static_cast<char>(op_or_code >> (8 * i));
    f[8 + i] = static_cast<char>(size >> (8 * i));
  }
  return f + body;
}
// A well-formed request: op 1 put, 2 fetch.
std::string Request(uint32_t op, const proto::TensorChunk& chunk, const std::string& payload = "") {
  const std::string body = chunk.SerializeAsString();
  return Frame(kMagic, op, static_cast<uint32_t>(body.size()), body) + payload;
}

class ChunkSocketTest : public ::testing::Test {
 protected:
  // A chunk socket behind a task port of its own, with no gRPC server: other connections
  // are closed.
  void SetUp() override {
    server_ = std::make_unique<ChunkSocketServer>(&store_);
    auto listening = TaskPort::Listen("127.0.0.1", 0);
    ASSERT_TRUE(listening.ok()) << listening.status();
    port_ = *std::move(listening);
    ASSERT_GT(port_->port(), 0);
    ASSERT_TRUE(port_->Start(nullptr, server_.get()).ok());
  }
  int port() const { return port_->port(); }
  // Closes the port, then the chunk socket's connections.
  void StopServer() {
    port_.reset();
    server_.reset();
  }

  ChunkStore store_;
  std::unique_ptr<ChunkSocketServer> server_;
  std::unique_ptr<TaskPort> port_;
};

TEST_F(ChunkSocketTest, PushedChunksLandInTheStoreBitExact) {
  const Tensor t = Pattern((2 * kChunkBytes + 12) / 4);  // 2 full chunks and a partial one
  ChunkSocketClient client("127.0.0.1", port(), 2);
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
  ChunkSocketClient client("127.0.0.1", port(), 2);
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
  ChunkSocketClient client("127.0.0.1", port(), 1);
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
  const int port = this->port();
  StopServer();  // the port is closed now
  ChunkSocketClient client("127.0.0.1", port, 1);
  const Tensor t = Pattern(16);
  Outcome o = PutOne(client, t, "k", 0, t.TotalBytes());
  EXPECT_TRUE(IsUnavailable(o.status)) << o.status;
  EXPECT_THAT(std::string(o.status.message()),
              HasSubstr("cannot connect to the chunk socket at 127.0.0.1:" + std::to_string(port)));
  EXPECT_TRUE(o.unreachable) << "the caller may send it another way";
  EXPECT_FALSE(client.Usable()) << "for a while, connecting is not tried again";
  // Later chunks fail at once, without another connect (where SYNs are dropped, each would
  // wait for the connect timeout).
  o = PutOne(client, t, "k", 0, t.TotalBytes());
  EXPECT_TRUE(o.unreachable);
  EXPECT_THAT(std::string(o.status.message()), HasSubstr("cannot connect"));
}

// Bytes from the network never crash the server: an unknown op, an oversized header and a
// header that does not parse each get an error reply and a closed connection, and the
// server goes on serving.
TEST_F(ChunkSocketTest, GarbageGetsAnErrorReplyAndTheServerGoesOn) {
  const struct {
    std::string bytes;
    std::string error;
  } cases[] = {
      {Frame(kMagic, 9, 0, ""), "not a chunk socket request"},
      {Frame(kMagic, 1, 1u << 30, ""), "exceeds"},
      {Frame(kMagic, 2, 5, "\xff\xff\xff\xff\xff"), "does not parse as tw.proto.TensorChunk"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    const int fd = Connect(port());
    ASSERT_EQ(send(fd, c.bytes.data(), c.bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(c.bytes.size()));
    const std::string reply = ReadToEnd(fd);
    close(fd);
    ASSERT_GE(reply.size(), 12u);
    EXPECT_EQ(reply[4], static_cast<char>(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(reply.substr(12), HasSubstr(c.error));
  }
  // A connection that stops mid-header just ends.
  const int fd = Connect(port());
  const std::string half = Frame(kMagic, 1, 100, "abc");
  send(fd, half.data(), half.size(), MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);
  EXPECT_EQ(ReadToEnd(fd), "");
  close(fd);

  ChunkSocketClient client("127.0.0.1", port(), 1);
  const Tensor t = Pattern(1000);
  Outcome o = PutOne(client, t, "after", 0, t.TotalBytes());
  EXPECT_TRUE(o.status.ok()) << o.status;
}

// A listener on 127.0.0.1 that a test drives by hand: it accepts connections and reads and
// writes raw bytes, to play a server that misbehaves.
class FakeServer {
 public:
  FakeServer() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listener_, 8), 0);
    socklen_t length = sizeof(addr);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &length);
    port_ = ntohs(addr.sin_port);
  }
  ~FakeServer() { close(listener_); }
  int port() const { return port_; }
  // The next connection (waits up to 5 s), -1 when none came.
  int Accept(int timeout_ms = 5000) {
    pollfd p{listener_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) != 1) return -1;
    const int fd = accept(listener_, nullptr, nullptr);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
  }
  // Reads one fetch request; its TensorChunk, or nullopt.
  static std::optional<proto::TensorChunk> ReadFetch(int fd) {
    char frame[12];
    if (recv(fd, frame, 12, MSG_WAITALL) != 12) return std::nullopt;
    uint32_t size = 0;
    std::memcpy(&size, frame + 8, 4);
    std::string header(size, '\0');
    if (recv(fd, header.data(), size, MSG_WAITALL) != static_cast<ssize_t>(size)) {
      return std::nullopt;
    }
    proto::TensorChunk chunk;
    if (!chunk.ParseFromString(header)) return std::nullopt;
    return chunk;
  }
  // Answers a fetch of `length` bytes with OK and bytes of value `fill`.
  static void AnswerFetch(int fd, size_t length, char fill) {
    const std::string reply = Frame(kMagic, 0, 0, std::string(length, fill));
    send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  }

 private:
  int listener_ = -1;
  int port_ = 0;
};

proto::TensorChunk FetchOf(size_t length) {
  proto::TensorChunk chunk;
  chunk.set_step_id(3);
  chunk.set_key("k");
  chunk.set_length(length);
  return chunk;
}

// A connection the server closed while it was idle (keepalive, or room made for another) is
// replaced: the chunk goes again on a new connection, and arrives.
TEST(ChunkSocketClientTest, AReusedConnectionTheServerClosedIsReplacedOnce) {
  FakeServer server;
  ChunkSocketClient client("127.0.0.1", server.port(), 1);
  char buf[64];
  std::thread script([&] {
    const int first = server.Accept();
    ASSERT_GE(first, 0);
    ASSERT_TRUE(FakeServer::ReadFetch(first).has_value());
    FakeServer::AnswerFetch(first, sizeof(buf), 'a');
    ASSERT_TRUE(FakeServer::ReadFetch(first).has_value());
    close(first);  // the second request finds the connection gone
    const int second = server.Accept();
    ASSERT_GE(second, 0);
    ASSERT_TRUE(FakeServer::ReadFetch(second).has_value());
    FakeServer::AnswerFetch(second, sizeof(buf), 'b');
    close(second);
  });
  Outcome o = FetchOne(client, FetchOf(sizeof(buf)), buf);
  ASSERT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(buf[63], 'a');
  o = FetchOne(client, FetchOf(sizeof(buf)), buf);
  EXPECT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(buf[63], 'b');
  script.join();
}

// A new connection that the server closes before answering (all its connections busy, or
// a proxy in between that passes only HTTP/2) is "unreachable" for that chunk, which the
// caller then sends another way.
TEST(ChunkSocketClientTest, ANewConnectionClosedUnansweredLeavesTheChunkUnreached) {
  FakeServer server;
  ChunkSocketClient client("127.0.0.1", server.port(), 1);
  std::thread script([&] {
    const int fd = server.Accept();
    if (fd >= 0) close(fd);
  });
  char buf[64];
  Outcome o = FetchOne(client, FetchOf(sizeof(buf)), buf);
  script.join();
  EXPECT_TRUE(IsUnavailable(o.status)) << o.status;
  EXPECT_TRUE(o.unreachable);
  // As after a failed connect: for a while chunks go another way without trying (a proxy
  // that passes only HTTP/2 would close every new connection).
  EXPECT_FALSE(client.Usable());
  o = FetchOne(client, FetchOf(sizeof(buf)), buf);
  EXPECT_TRUE(o.unreachable);
  EXPECT_EQ(server.Accept(500), -1) << "no second connection";
}

// A chunk whose server never answers ends when its step is cancelled.
TEST(ChunkSocketClientTest, CancellationEndsAChunkInProgress) {
  FakeServer server;  // accepts (the kernel does, from its backlog) and never answers
  ChunkSocketClient client("127.0.0.1", server.port(), 1);
  CancellationManager cm;
  proto::TensorChunk chunk = FetchOf(64);
  char buf[64];
  std::promise<Outcome> done;
  client.Fetch(chunk, buf, &cm, [&](const Status& s, bool unreachable) {
    done.set_value({s, unreachable});
  });
  const int fd = server.Accept();
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(FakeServer::ReadFetch(fd).has_value()) << "the chunk is in progress";
  auto outcome = done.get_future();
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
  close(fd);
}

// Closing a client interrupts the chunk in progress and fails the queued ones, promptly:
// every callback has run when Close returns.
TEST(ChunkSocketClientTest, ClosingTheClientRunsEveryCallbackPromptly) {
  FakeServer server;
  std::atomic<int> cancelled{0};
  ChunkSocketClient client("127.0.0.1", server.port(), 1);
  static char buf[64];
  for (int i = 0; i < 3; ++i) {
    client.Fetch(FetchOf(sizeof(buf)), buf, nullptr, [&](const Status& s, bool unreachable) {
      if (IsCancelled(s) || (IsUnavailable(s) && !unreachable)) ++cancelled;
    });
  }
  const int fd = server.Accept();
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(FakeServer::ReadFetch(fd).has_value()) << "the first chunk is in progress";
  const absl::Time start = absl::Now();
  client.Close();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(cancelled.load(), 3);
  // Closed: a new chunk is refused at once.
  Outcome o = FetchOne(client, FetchOf(sizeof(buf)), buf);
  EXPECT_TRUE(IsCancelled(o.status)) << o.status;
  EXPECT_FALSE(client.Usable());
  close(fd);
}

// Stopping the server ends its idle connections too: the destructor does not wait for
// clients to go away, and they see the end of the stream.
TEST_F(ChunkSocketTest, StoppingTheServerDoesNotWaitForIdleClients) {
  ChunkSocketClient client("127.0.0.1", port(), 2);
  const Tensor t = Pattern(1000);
  ASSERT_TRUE(PutOne(client, t, "k", 0, t.TotalBytes()).status.ok());
  // A connection that has been served once (so surely accepted), then idles.
  const int idle = Connect(port());
  proto::TensorChunk missing = FetchOf(8);
  missing.set_key("missing");
  const std::string request = Request(2, missing);
  ASSERT_EQ(send(idle, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  char reply[12];
  ASSERT_EQ(recv(idle, reply, sizeof(reply), MSG_WAITALL), 12) << "served";
  const absl::Time start = absl::Now();
  StopServer();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  close(idle);
}

// At its limit of connections, a server makes room for a new one by closing the oldest
// idle one, so idle peers (or anyone who opens connections and leaves them) cannot lock
// others out.
TEST_F(ChunkSocketTest, AtTheLimitTheOldestIdleConnectionMakesRoom) {
  const Tensor t = Pattern(4);
  std::vector<int> idle;
  for (int i = 0; i < ChunkSocketServer::kMaxConnections; ++i) {
    // Each served once (so surely accepted and counted), then idle.
    const int fd = Connect(port());
    proto::TensorChunk chunk;
    chunk.set_step_id(3);
    chunk.set_key("idle" + std::to_string(i));
    TensorMetaToProto(t, chunk.mutable_meta());
    chunk.set_length(t.TotalBytes());
    const std::string request =
        Request(1, chunk, std::string(static_cast<const char*>(t.raw_data()), t.TotalBytes()));
    ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    char reply[12];
    ASSERT_EQ(recv(fd, reply, sizeof(reply), MSG_WAITALL), 12);
    ASSERT_EQ(reply[4], 0) << "put " << i << " failed";
    idle.push_back(fd);
  }
  ChunkSocketClient client("127.0.0.1", port(), 1);
  Outcome o = PutOne(client, t, "one more", 0, t.TotalBytes());
  EXPECT_TRUE(o.status.ok()) << o.status;
  // The first idle connection was closed to make room.
  char byte;
  EXPECT_EQ(recv(idle[0], &byte, 1, 0), 0);
  for (int fd : idle) close(fd);
}

}  // namespace
}  // namespace tw
