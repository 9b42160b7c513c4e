#include "src/rpc/task_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
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
    port_->Start(std::move(acceptor), chunks_.get());
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
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_->port()));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
  }
  // Reads until the peer closes: true when it did (within the receive timeout).
  static bool ClosedByPeer(int fd) {
    char buf[4096];
    for (;;) {
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

  std::unique_ptr<EchoService> echo_;
  ChunkStore store_;
  std::unique_ptr<ChunkSocketServer> chunks_;
  std::unique_ptr<grpc::Server> grpc_;
  std::unique_ptr<TaskPort> port_;
};

constexpr char kPing[] = "ping";

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
  absl::SleepFor(absl::Milliseconds(100));
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

// Bytes that are neither gRPC's nor the chunk socket's go to gRPC, which closes the
// connection; both go on serving.
TEST_F(TaskPortTest, GarbageGoesToGrpcWhichClosesIt) {
  const int fd = Connect();
  const std::string garbage = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(garbage.size()));
  EXPECT_TRUE(ClosedByPeer(fd));
  close(fd);
  EXPECT_EQ(Echo(), kPing);
  EXPECT_TRUE(PutChunk("after").ok());
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

// Connections that say nothing cannot pile up: beyond kMaxUnsorted the oldest is closed.
TEST_F(TaskPortTest, BeyondTheLimitTheOldestUnsortedConnectionIsClosed) {
  std::vector<int> silent;
  for (int i = 0; i <= TaskPort::kMaxUnsorted; ++i) silent.push_back(Connect());
  EXPECT_TRUE(ClosedByPeer(silent[0]));
  EXPECT_EQ(Echo(), kPing) << "the port still serves";
  for (int fd : silent) close(fd);
}

// Without a chunk socket (TLS, or chunk sockets off) every connection is gRPC's, unread: a
// chunk socket client's is closed, and the client is told it cannot reach a chunk socket.
TEST_F(TaskPortTest, WithoutAChunkSocketEveryConnectionIsGrpcs) {
  Serve(/*chunk_sockets=*/false, "127.0.0.1");
  EXPECT_EQ(Echo(), kPing);
  const Status s = PutChunk("nowhere");
  EXPECT_FALSE(s.ok());
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
  const int v6 = socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 loopback{};
  loopback.sin6_family = AF_INET6;
  loopback.sin6_addr = in6addr_loopback;
  const bool has_ipv6 =
      v6 >= 0 && bind(v6, reinterpret_cast<sockaddr*>(&loopback), sizeof(loopback)) == 0;
  if (v6 >= 0) close(v6);
  if (has_ipv6) {
    EXPECT_EQ(Echo("[::1]"), kPing);
  }
}

// After Stop nothing listens, and the connections it had not sorted are closed.
TEST_F(TaskPortTest, StopClosesThePortAndUnsortedConnections) {
  const int port = port_->port();
  const int waiting = Connect();
  absl::SleepFor(absl::Milliseconds(50));  // accepted by now
  port_->Stop();
  EXPECT_TRUE(ClosedByPeer(waiting));
  close(waiting);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_NE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(errno, ECONNREFUSED);
  close(fd);
}

}  // namespace
}  // namespace tw
