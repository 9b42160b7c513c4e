#include "src/rpc/task_port.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "gtest/gtest.h"
#include "src/rpc/chunk_socket.h"
#include "testing/ports.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// Answers every call with the messages it was sent.
class EchoService : public grpc::CallbackGenericService {
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    class Reactor : public grpc::ServerGenericBidiReactor {
     public:
      Reactor() { StartRead(&message_); }
      void OnReadDone(bool ok) override {
        if (ok) {
          StartWrite(&message_);
        } else {
          Finish(grpc::Status::OK);
        }
      }
      void OnWriteDone(bool ok) override {
        if (ok) {
          StartRead(&message_);
        } else {
          Finish(grpc::Status::OK);
        }
      }
      void OnDone() override { delete this; }

     private:
      grpc::ByteBuffer message_;
    };
    return new Reactor;
  }
};

// A real gRPC server whose only service echoes, reached through a TaskPort, and a chunk
// socket on the same port.
class TaskPortTest : public ::testing::Test {
 protected:
  void SetUp() override { Serve(/*chunk_sockets=*/true, "127.0.0.1"); }
  void TearDown() override { StopAll(); }

  void Serve(bool chunk_sockets, const std::string& host,
             absl::Duration sort_timeout = TaskPort::kSortTimeout) {
    StopAll();
    auto listening = TaskPort::Listen(host, 0, sort_timeout);
    ASSERT_TRUE(listening.ok()) << listening.status();
    port_ = *std::move(listening);
    grpc::ServerBuilder builder;
    echo_ = std::make_unique<EchoService>();  // a service serves one server only
    builder.RegisterCallbackGenericService(echo_.get());
    auto acceptor = builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
        grpc::InsecureServerCredentials());
    grpc_ = builder.BuildAndStart();
    ASSERT_NE(grpc_, nullptr);
    if (chunk_sockets) chunks_ = std::make_unique<ChunkSocketServer>(&store_);
    ASSERT_TRUE(port_->Start(std::move(acceptor), chunks_.get()).ok());
  }
  void StopAll() {
    port_.reset();
    if (grpc_ != nullptr) grpc_->Shutdown(std::chrono::system_clock::now());
    grpc_.reset();
    echo_.reset();
    chunks_.reset();
  }

  // A call over a new gRPC channel to `host`:port: what it echoed, or its error.
  std::string Echo(const std::string& host = "127.0.0.1") {
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1);  // a connection of its own
    auto channel = grpc::CreateCustomChannel(host + ":" + std::to_string(port_->port()),
                                             grpc::InsecureChannelCredentials(), args);
    grpc::GenericStub stub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Slice ping("ping");
    grpc::ByteBuffer request(&ping, 1);
    grpc::ByteBuffer response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&ctx, "/test.Echo/Echo", grpc::StubOptions(), &request, &response,
                   [&done](grpc::Status s) { done.set_value(std::move(s)); });
    const grpc::Status s = done.get_future().get();
    if (!s.ok()) return "error: " + s.error_message();
    std::vector<grpc::Slice> slices;
    if (!response.Dump(&slices).ok()) return "error: dump";
    std::string bytes;
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    return bytes;
  }

  // A chunk put through a chunk socket client on the port: its status.
  Status PutChunk(const std::string& key) {
    Tensor t(DT_INT32, TensorShape({4}));
    for (int i = 0; i < 4; ++i) t.flat<int32_t>()[i] = i + 1;
    proto::TensorChunk chunk;
    chunk.set_step_id(1);
    chunk.set_key(key);
    TensorMetaToProto(t, chunk.mutable_meta());
    chunk.set_length(t.TotalBytes());
    ChunkSocketClient client("127.0.0.1", port_->port(), 1);
    std::promise<Status> done;
    client.Put(chunk, t, nullptr, [&done](const Status& s, bool) { done.set_value(s); });
    Status s = done.get_future().get();
    if (s.ok()) {
      auto taken = store_.TakePut(1, key);
      if (!taken.ok()) return taken.status();
      if (!(*taken == t)) return errors::Internal("the put tensor differs");
    }
    return s;
  }

  int Connect() const {
    const int fd = testing::ConnectToLoopback(port_->port());
    EXPECT_GE(fd, 0) << "cannot connect to the task port";
    return fd;
  }
  // Reads until the peer closes (or the receive timeout, `seconds`, passes): everything it
  // sent, and whether it closed.
  struct Ending {
    std::string bytes;
    bool closed = false;
    bool reset = false;  // closed with a reset rather than an orderly end
  };
  static Ending ReadToEnd(int fd, int seconds = 10) {
    timeval tv{seconds, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    Ending end;
    char buf[4096];
    for (;;) {
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n > 0) {
        end.bytes.append(buf, static_cast<size_t>(n));
        continue;
      }
      end.closed = n == 0 || errno == ECONNRESET;
      end.reset = n < 0 && errno == ECONNRESET;
      return end;
    }
  }
  static bool ClosedByPeer(int fd, int seconds = 10) { return ReadToEnd(fd, seconds).closed; }

  std::unique_ptr<EchoService> echo_;
  ChunkStore store_;
  std::unique_ptr<ChunkSocketServer> chunks_;
  std::unique_ptr<grpc::Server> grpc_;
  std::unique_ptr<TaskPort> port_;
};

constexpr char kPing[] = "ping";

// Waits until `done` holds, looking every millisecond, for at most `limit`; whether it held.
template <typename Predicate>
bool WaitFor(Predicate done, absl::Duration limit = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + limit;
  while (!done()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

TEST_F(TaskPortTest, GrpcAndTheChunkSocketShareOnePort) {
  EXPECT_EQ(Echo(), kPing);
  EXPECT_TRUE(PutChunk("first").ok());
  EXPECT_EQ(Echo(), kPing);
  EXPECT_TRUE(PutChunk("second").ok());
}

// A client whose first bytes come in pieces is sorted once they make up the magic.
TEST_F(TaskPortTest, AMagicInPiecesIsSortedWhenComplete) {
  const int fd = Connect();
  ASSERT_EQ(send(fd, "TW", 2, MSG_NOSIGNAL), 2);
  ASSERT_TRUE(WaitFor([&] { return port_->stats().partial == 1; })) << "seen as partial";
  // The rest of the magic, then a fetch of a missing key: an error reply from the chunk
  // socket, which names the key.
  proto::TensorChunk chunk;
  chunk.set_step_id(1);
  chunk.set_key("missing");
  chunk.set_length(4);
  const std::string body = chunk.SerializeAsString();
  std::string rest = "C1";
  const uint32_t words[2] = {2, static_cast<uint32_t>(body.size())};  // fetch, header size
  for (uint32_t w : words) {
    for (int i = 0; i < 4; ++i) rest.push_back(static_cast<char>(w >> (8 * i)));
  }
  rest += body;
  ASSERT_EQ(send(fd, rest.data(), rest.size(), MSG_NOSIGNAL), static_cast<ssize_t>(rest.size()));
  std::string reply;
  char buf[512];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) reply.append(buf, static_cast<size_t>(n));
  close(fd);
  ASSERT_GE(reply.size(), 12u);
  EXPECT_EQ(reply.substr(0, 4), "TWC1");
  EXPECT_EQ(reply[4], static_cast<char>(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(reply.substr(12), HasSubstr("no tensor missing of step 1"));
}

// HTTP/2 frame type of SETTINGS, which a gRPC server sends first on every connection: the
// 4th byte of its frame header. The task port itself never writes a byte.
constexpr char kSettingsFrame = 0x4;

// Bytes that are neither gRPC's nor the chunk socket's go to gRPC, which answers with its
// SETTINGS and closes the connection; both go on serving.
TEST_F(TaskPortTest, GarbageGoesToGrpcWhichClosesIt) {
  const int fd = Connect();
  const std::string garbage = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(garbage.size()));
  const Ending end = ReadToEnd(fd);
  close(fd);
  EXPECT_TRUE(end.closed);
  ASSERT_GE(end.bytes.size(), 9u) << "gRPC's frames";
  EXPECT_EQ(end.bytes[3], kSettingsFrame);
  EXPECT_EQ(Echo(), kPing);
  EXPECT_TRUE(PutChunk("after").ok());
}

// A peer that sends part of the magic and then resets its connection is closed at once
// (rather than keeping the sorting thread busy until its deadline), and the port goes on.
TEST_F(TaskPortTest, APartialMagicThenAResetIsClosed) {
  Serve(true, "127.0.0.1", absl::Seconds(60));
  const int fd = Connect();
  ASSERT_EQ(send(fd, "TW", 2, MSG_NOSIGNAL), 2);
  ASSERT_TRUE(WaitFor([&] { return port_->stats().partial == 1; })) << "seen as partial";
  const TaskPort::Stats before = port_->stats();
  linger abort{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
  close(fd);  // a reset
  // Closed at its next look (every 20 ms), long before its sort timeout, the sorting thread
  // waking once or twice for it (and every 20 ms while this thread is not running): one
  // that spun on it would wake thousands of times a second (poll reports a reset socket at
  // once, again and again) and close it only at the timeout.
  ASSERT_TRUE(WaitFor([&] { return port_->stats().closed == before.closed + 1; }, absl::Seconds(5)))
      << "still open after 5 s, " << port_->stats().wakeups - before.wakeups << " wakeups";
  EXPECT_LE(port_->stats().wakeups - before.wakeups, 50);
  const int other = Connect();
  ASSERT_EQ(send(other, "TX", 2, MSG_NOSIGNAL), 2);  // not the magic: gRPC's at once
  EXPECT_TRUE(ClosedByPeer(other, 5));
  close(other);
  EXPECT_EQ(Echo(), kPing);
  EXPECT_TRUE(PutChunk("after a reset").ok());
}

// A connection that says nothing is closed once the sort timeout passes, and does not hold
// up the others meanwhile.
TEST_F(TaskPortTest, ASilentConnectionIsClosedAfterTheSortTimeout) {
  Serve(true, "127.0.0.1", absl::Milliseconds(300));
  const int silent = Connect();
  EXPECT_EQ(Echo(), kPing);
  EXPECT_TRUE(PutChunk("meanwhile").ok());
  const absl::Time start = absl::Now();
  EXPECT_TRUE(ClosedByPeer(silent));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  close(silent);
}

// Connections that say nothing cannot pile up: beyond kMaxUnsorted the oldest is closed at
// once (long before its sort timeout).
TEST_F(TaskPortTest, BeyondTheLimitTheOldestUnsortedConnectionIsClosed) {
  Serve(true, "127.0.0.1", absl::Seconds(60));
  std::vector<int> silent;
  for (int i = 0; i <= TaskPort::kMaxUnsorted; ++i) silent.push_back(Connect());
  EXPECT_TRUE(ClosedByPeer(silent[0], 5));
  char byte;
  EXPECT_EQ(recv(silent[1], &byte, 1, MSG_DONTWAIT), -1) << "the next one is still open";
  EXPECT_EQ(errno, EAGAIN);
  // (A new connection waits among them too until sorted, and makes room the same way.)
  EXPECT_EQ(Echo(), kPing) << "the port still serves";
  for (int fd : silent) close(fd);
}

// Without a chunk socket (TLS, or chunk sockets off) every connection is gRPC's, unread: a
// chunk socket request gets gRPC's SETTINGS and a closed connection, and a chunk socket
// client is told it cannot reach a chunk socket.
TEST_F(TaskPortTest, WithoutAChunkSocketEveryConnectionIsGrpcs) {
  Serve(/*chunk_sockets=*/false, "127.0.0.1");
  EXPECT_EQ(Echo(), kPing);
  const int fd = Connect();
  ASSERT_EQ(send(fd, "TWC1", 4, MSG_NOSIGNAL), 4);
  const Ending end = ReadToEnd(fd);
  close(fd);
  EXPECT_TRUE(end.closed);
  ASSERT_GE(end.bytes.size(), 9u);
  EXPECT_EQ(end.bytes[3], kSettingsFrame);
  EXPECT_FALSE(PutChunk("nowhere").ok());
}

TEST_F(TaskPortTest, APortInUseIsAClearError) {
  auto second = TaskPort::Listen("127.0.0.1", port_->port());
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(IsUnavailable(second.status())) << second.status();
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("127.0.0.1:" + std::to_string(port_->port()) + ": Address already in use"));
}

TEST_F(TaskPortTest, AHostThatDoesNotResolveIsAClearError) {
  auto bad = TaskPort::Listen("no-such-host.invalid", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("cannot resolve \"no-such-host"));
}

// A wildcard listens on every address: IPv4 loopback, and IPv6's where the host has it.
TEST_F(TaskPortTest, AWildcardHostIsReachableOnLoopback) {
  Serve(true, "0.0.0.0");
  EXPECT_EQ(Echo("127.0.0.1"), kPing);
  EXPECT_TRUE(PutChunk("wildcard").ok());
  if (testing::HasIpv6Loopback()) {
    EXPECT_EQ(Echo("[::1]"), kPing);
  }
}

// After Stop nothing listens, and the connections it had not sorted are closed (an orderly
// close: one still waiting in the listener's backlog would be reset instead).
TEST_F(TaskPortTest, StopClosesThePortAndUnsortedConnections) {
  const int port = port_->port();
  const int64_t accepted = port_->stats().accepted;
  const int waiting = Connect();
  // Accepted and waiting to be sorted: not in the listener's backlog any more.
  ASSERT_TRUE(WaitFor([&] { return port_->stats().accepted == accepted + 1; }));
  port_->Stop();
  const Ending end = ReadToEnd(waiting, 5);
  close(waiting);
  EXPECT_TRUE(end.closed);
  EXPECT_FALSE(end.reset);
  EXPECT_EQ(testing::ConnectToLoopback(port), -1);
  EXPECT_EQ(errno, ECONNREFUSED);
}

// A name listens on each address it resolves to, on the same port, port 0 included:
// "localhost" on 127.0.0.1, and on ::1 where /etc/hosts names it too.
TEST_F(TaskPortTest, ANameListensOnEachOfItsAddresses) {
  Serve(true, "localhost");
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  ASSERT_EQ(getaddrinfo("localhost", nullptr, &hints, &found), 0);
  std::vector<std::string> hosts;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char host[NI_MAXHOST];
    getnameinfo(a->ai_addr, a->ai_addrlen, host, sizeof(host), nullptr, 0, NI_NUMERICHOST);
    hosts.push_back(a->ai_family == AF_INET6 ? "[" + std::string(host) + "]" : host);
  }
  freeaddrinfo(found);
  ASSERT_FALSE(hosts.empty());
  for (const std::string& host : hosts) {
    SCOPED_TRACE(host);
    EXPECT_EQ(Echo(host), kPing);
  }
  EXPECT_TRUE(PutChunk("localhost").ok());
}

}  // namespace
}  // namespace tw
