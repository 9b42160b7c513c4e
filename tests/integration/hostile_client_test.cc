// A task's server against careless and hostile clients, over gRPC on loopback: requests that
// do not parse, clients that give up while the cluster is down, a flood of abandoned calls,
// and the lifecycle of the server itself (ports bound exclusively, Join before Start).
#include <malloc.h>

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "src/distributed/messages.h"
#include "src/framework/rendezvous.h"
#include "src/rpc/tensor_wire.h"
#include "tensorweave/ops.h"
#include "tensorweave/protobuf/master.pb.h"
#include "tensorweave/protobuf/worker.pb.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

std::string FreeAddress() { return "127.0.0.1:" + std::to_string(testing::PickUnusedPort()); }

// One raw unary call, waited for; `timeout` is the client's deadline.
grpc::Status RawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                     const grpc::ByteBuffer& request, absl::Duration timeout,
                     grpc::ByteBuffer* reply = nullptr) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::ByteBuffer ignored;
  absl::Notification finished;
  grpc::Status status;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &request, reply != nullptr ? reply : &ignored,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   finished.Notify();
                 });
  finished.WaitForNotification();
  return status;
}

std::shared_ptr<grpc::Channel> ChannelTo(const Server& server) {
  return grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()),
                             grpc::InsecureChannelCredentials());
}

std::unique_ptr<Server> StartLocal() {
  auto server = Server::CreateLocal({.num_threads = 2});
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

// A request that does not parse is the client's error, InvalidArgument naming the message
// type, on every method of both services; gRPC's own answer would be UNIMPLEMENTED, which
// reads as a missing method. The server keeps serving.
TEST(HostileClientTest, UnparsableRequestsAreInvalidArgumentOnEveryMethod) {
  std::unique_ptr<Server> server = StartLocal();
  ASSERT_NE(server, nullptr);
  auto channel = ChannelTo(*server);
  // A varint that never ends, then a length that runs past the end.
  grpc::Slice garbage(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x0a\x7f", 12));
  const grpc::ByteBuffer request(&garbage, 1);
  const std::vector<std::string> methods = {
      "/tw.proto.WorkerService/GetStatus",       "/tw.proto.WorkerService/RegisterGraph",
      "/tw.proto.WorkerService/DeregisterGraph", "/tw.proto.WorkerService/RunGraph",
      "/tw.proto.WorkerService/RecvTensor",      "/tw.proto.WorkerService/CleanupGraph",
      "/tw.proto.WorkerService/CleanupAll",      "/tw.proto.WorkerService/Shutdown",
      "/tw.proto.WorkerService/PutChunk",        "/tw.proto.WorkerService/RecvChunk",
      "/tw.proto.MasterService/CreateSession",   "/tw.proto.MasterService/ExtendSession",
      "/tw.proto.MasterService/RunStep",         "/tw.proto.MasterService/CloseSession",
      "/tw.proto.MasterService/ListDevices",     "/tw.proto.MasterService/Reset"};
  for (const std::string& method : methods) {
    grpc::Status s = RawCall(channel, method, request, absl::Seconds(10));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << method << ": " << s.error_code() << " " << s.error_message();
    EXPECT_FALSE(s.error_message().empty()) << method;
  }
  // Still serving (the garbage Shutdown did not stop it).
  Scope root = Scope::NewRootScope();
  auto hello = ops::Const(root, Tensor::Scalar<std::string>("still here"));
  ClientSession s(root, {.target = server->target()});
  auto out = s.Run({}, {hello});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<std::string>(), "still here");
}

// The serialized `message` as a request's ByteBuffer.
grpc::ByteBuffer Encode(const google::protobuf::Message& message) {
  grpc::Slice slice(message.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

// An error quotes a bounded prefix of what the request sent: a 1 MB session handle or op
// name quoted whole would not fit the reply's metadata, and the client would get
// RESOURCE_EXHAUSTED "received initial metadata size exceeds limit" instead of the error.
TEST(HostileClientTest, ErrorsQuoteABoundedPrefixOfHugeRequestStrings) {
  std::unique_ptr<Server> server = StartLocal();
  ASSERT_NE(server, nullptr);
  auto channel = ChannelTo(*server);
  const std::string huge(1 << 20, 'h');
  const std::string quoted = std::string(128, 'h') + "... (1048576 bytes)";

  proto::ListDevicesRequest list;
  list.set_session_handle(huge);
  grpc::Status s =
      RawCall(channel, "/tw.proto.MasterService/ListDevices", Encode(list), absl::Seconds(30));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message().size();
  EXPECT_EQ(s.error_message(),
            "Session " + quoted + " is not found. Possibly, this master has restarted.");

  proto::CloseSessionRequest close;
  close.set_session_handle(huge);
  s = RawCall(channel, "/tw.proto.MasterService/CloseSession", Encode(close), absl::Seconds(30));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message().size();
  EXPECT_THAT(s.error_message(), HasSubstr(quoted));

  proto::ExtendSessionRequest extend;
  extend.set_session_handle(huge);
  s = RawCall(channel, "/tw.proto.MasterService/ExtendSession", Encode(extend), absl::Seconds(30));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message().size();
  EXPECT_THAT(s.error_message(), HasSubstr(quoted));

  // A path that quotes a request string whole (the op registry names the op it lacks) is
  // cut at the transport, keeping its code.
  proto::CreateSessionRequest create;
  proto::NodeDef* node = create.mutable_graph_def()->add_node();
  node->set_name("x");
  node->set_op("NoSuchOp" + huge);
  s = RawCall(channel, "/tw.proto.MasterService/CreateSession", Encode(create), absl::Seconds(30));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message().size();
  EXPECT_LE(s.error_message().size(), 4200u);
  EXPECT_THAT(s.error_message(), HasSubstr("NoSuchOphhhh"));

  RunStepArgs step;
  step.proto.set_session_handle(huge);
  s = RawCall(channel, "/tw.proto.MasterService/RunStep", EncodeRunStepArgs(step),
              absl::Seconds(30));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message().size();
  EXPECT_THAT(s.error_message(), HasSubstr(quoted));

  RunGraphArgs run;
  run.proto.set_graph_handle(huge);
  s = RawCall(channel, "/tw.proto.WorkerService/RunGraph", EncodeRunGraphArgs(run),
              absl::Seconds(30));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message().size();
  EXPECT_THAT(s.error_message(), HasSubstr("Graph handle is not found: " + quoted));
}

// A port is bound by one server only: gRPC's default SO_REUSEPORT would let a stale task
// and its replacement share it.
TEST(ServerLifecycleTest, StartOnAPortInUseFailsNamingTheReason) {
  ClusterSpec cluster;
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{FreeAddress()}).ok());
  auto first = Server::Create(cluster, "ps", 0, {.bind_host = "127.0.0.1"});
  auto second = Server::Create(cluster, "ps", 0, {.bind_host = "127.0.0.1"});
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE((*first)->Start().ok());
  Status s = (*second)->Start();
  EXPECT_TRUE(IsUnavailable(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("Could not start gRPC server on 127.0.0.1:"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("Address already in use"));
  // Once the first has stopped, the port is free for a new server.
  (*first)->Stop();
  auto third = Server::Create(cluster, "ps", 0, {.bind_host = "127.0.0.1"});
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE((*third)->Start().ok());
}

// As TensorFlow's: Join of a server never started returns at once, and the server is then
// stopped for good.
TEST(ServerLifecycleTest, JoinOfAServerNeverStartedReturnsAtOnce) {
  ClusterSpec cluster;
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{FreeAddress()}).ok());
  auto server = Server::Create(cluster, "ps", 0, {.bind_host = "127.0.0.1"});
  ASSERT_TRUE(server.ok());
  absl::Notification joined;
  std::thread joiner([&] {
    (*server)->Join();
    joined.Notify();
  });
  // Bounded: a Join that waits for a Stop nobody will call fails here instead of hanging.
  const bool returned = joined.WaitForNotificationWithTimeout(absl::Seconds(30));
  if (!returned) (*server)->Stop();
  joiner.join();
  EXPECT_TRUE(returned);
  Status s = (*server)->Start();
  EXPECT_TRUE(IsFailedPrecondition(s)) << s;
  EXPECT_EQ(s.message(), "Server has stopped.");
}

// ps:0 (not started) and worker:0 (started), for sessions that wait for the ps task.
class WaitingForClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.AddJob("ps", std::vector<std::string>{FreeAddress()}).ok());
    ASSERT_TRUE(cluster_.AddJob("worker", std::vector<std::string>{FreeAddress()}).ok());
    auto worker = Server::Create(cluster_, "worker", 0,
                                 {.bind_host = "127.0.0.1", .num_threads = 2, .master_threads = 4});
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = *std::move(worker);
    ASSERT_TRUE(worker_->Start().ok());
  }

  static grpc::ByteBuffer CreateRequest(const std::vector<std::string>& filters = {}) {
    proto::CreateSessionRequest request;
    for (const std::string& f : filters) request.add_device_filters(f);
    return EncodeProto(request);
  }

  ClusterSpec cluster_;
  std::unique_ptr<Server> worker_;
};

// Clients that give up while a task is down hold nothing on the master: more of them than
// it has threads, then a session that needs only the running task is created at once.
TEST_F(WaitingForClusterTest, ClientsThatGiveUpHoldNoThread) {
  auto channel = ChannelTo(*worker_);
  std::vector<std::thread> clients;
  std::atomic<int> gave_up{0};
  for (int i = 0; i < 20; ++i) {  // five times the master's 4 threads
    clients.emplace_back([&] {
      grpc::Status s = RawCall(channel, "/tw.proto.MasterService/CreateSession", CreateRequest(),
                               absl::Milliseconds(300));
      if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) ++gave_up;
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(gave_up.load(), 20);
  grpc::ByteBuffer reply;
  grpc::Status s = RawCall(channel, "/tw.proto.MasterService/CreateSession",
                           CreateRequest({"/job:worker"}), absl::Seconds(5), &reply);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
}

// Stop ends a CreateSession waiting for the cluster at once, and returns at once itself.
TEST_F(WaitingForClusterTest, StopEndsAWaitingCreateSession) {
  auto channel = ChannelTo(*worker_);
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Minutes(10)));
  const grpc::ByteBuffer request = CreateRequest();
  grpc::ByteBuffer reply;
  absl::Notification answered;
  grpc::Status status;
  stub.UnaryCall(&ctx, "/tw.proto.MasterService/CreateSession", grpc::StubOptions(), &request,
                 &reply, [&](grpc::Status s) {
                   status = std::move(s);
                   answered.Notify();
                 });
  // A second call on the same connection, answered: the first, sent before it, has reached
  // the master too.
  grpc::Status probe = RawCall(channel, "/tw.proto.MasterService/CreateSession",
                               CreateRequest({"/job:worker"}), absl::Seconds(10));
  ASSERT_TRUE(probe.ok()) << probe.error_message();
  EXPECT_FALSE(answered.HasBeenNotified());
  worker_->Stop();
  // Bounded: without the fix Stop itself would not return for minutes, failing by timeout.
  const bool ended = answered.WaitForNotificationWithTimeout(absl::Seconds(30));
  if (!ended) ctx.TryCancel();
  answered.WaitForNotification();
  EXPECT_TRUE(ended);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
}

// Close() of a session whose first call waits for the cluster ends that call: the session
// does not hold its lock across the wait.
TEST_F(WaitingForClusterTest, CloseEndsASessionWaitingForTheCluster) {
  auto session = Session::Create({.target = worker_->target()});
  ASSERT_TRUE(session.ok());
  absl::Notification calling, returned;
  Status run_status;
  std::thread client([&] {
    calling.Notify();
    std::vector<Tensor> out;
    run_status = (*session)->Run({}, {"c:0"}, {}, &out);
    returned.Notify();
  });
  calling.WaitForNotification();
  EXPECT_TRUE((*session)->Close().ok());
  const bool ended = returned.WaitForNotificationWithTimeout(absl::Seconds(30));
  if (!ended) worker_->Stop();  // ends the wait, so the test fails instead of hanging
  client.join();
  EXPECT_TRUE(ended);
  EXPECT_TRUE(IsCancelled(run_status)) << run_status;
  EXPECT_EQ(run_status.message(), "Session has been closed");
}

// The same through a ClientSession, whose first Run sends its graph (Extend) and waits.
TEST_F(WaitingForClusterTest, CloseEndsAClientSessionWaitingForTheCluster) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root.WithOpName("c"), Tensor::Scalar<float>(1));
  ClientSession session(root, {.target = worker_->target()});
  absl::Notification calling, returned;
  Status run_status;
  std::thread client([&] {
    calling.Notify();
    run_status = session.Run({}, {c}).status();
    returned.Notify();
  });
  calling.WaitForNotification();
  EXPECT_TRUE(session.Close().ok());
  const bool ended = returned.WaitForNotificationWithTimeout(absl::Seconds(30));
  if (!ended) worker_->Stop();  // ends the wait, so the test fails instead of hanging
  client.join();
  EXPECT_TRUE(ended);
  EXPECT_TRUE(IsCancelled(run_status)) << run_status;
}

// The wait for the cluster is the server's option, and names the task that never answered.
TEST_F(WaitingForClusterTest, TheWaitEndsWithUnavailableNamingTheMissingTask) {
  auto server = Server::Create(cluster_, "worker", 0,
                               {.bind_host = "127.0.0.1", .wait_for_cluster = absl::Seconds(1)});
  ASSERT_TRUE(server.ok());
  worker_->Stop();
  ASSERT_TRUE((*server)->Start().ok());
  grpc::Status s = RawCall(ChannelTo(**server), "/tw.proto.MasterService/CreateSession",
                           CreateRequest(), absl::Seconds(30));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("CreateSession gave up after 1s waiting for "
                                           "/job:ps/replica:0/task:0"));
}

// Bytes the allocator has handed out and not had back (not what it keeps cached).
size_t HeapInUse() { return mallinfo2().uordblks; }

// Many clients that give up, cancel or disconnect in the middle of steps and tensor
// transfers, then a correct client: it is served at once, and the task holds no more memory
// than after the same load before (which warmed every cache gRPC keeps).
TEST(LoadTest, AbandonedCallsLeaveTheTaskAsItWas) {
  std::unique_ptr<Server> server = StartLocal();
  ASSERT_NE(server, nullptr);
  // A session whose step waits on an empty queue until its client gives up.
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueue(root, {DT_FLOAT}, {.shared_name = "never_filled"});
  auto take = ops::QueueDequeue(root.WithOpName("take"), queue);
  auto one = ops::Const(root.WithOpName("one"), Tensor::Scalar<float>(1));
  proto::CreateSessionRequest create;
  *create.mutable_graph_def() = *root.ToGraphDef();
  auto channel = ChannelTo(*server);
  grpc::ByteBuffer created;
  ASSERT_TRUE(RawCall(channel, "/tw.proto.MasterService/CreateSession", EncodeProto(create),
                      absl::Seconds(10), &created)
                  .ok());
  proto::CreateSessionResponse session;
  ASSERT_TRUE(DecodeProto(created, &session).ok());
  grpc::ByteBuffer status_reply;
  ASSERT_TRUE(RawCall(channel, "/tw.proto.WorkerService/GetStatus",
                      EncodeProto(proto::GetStatusRequest()), absl::Seconds(10), &status_reply)
                  .ok());
  proto::GetStatusResponse status;
  ASSERT_TRUE(DecodeProto(status_reply, &status).ok());
  const std::string device = status.device(0).name();
  const uint64_t incarnation = status.device(0).incarnation();

  std::atomic<int64_t> next_step{1 << 20};
  auto load = [&] {
    std::vector<std::thread> clients;
    for (int c = 0; c < 8; ++c) {
      clients.emplace_back([&, c] {
        // Each client its own connection, dropped at the end with whatever it left.
        auto own = grpc::CreateCustomChannel(
            "127.0.0.1:" + std::to_string(server->port()), grpc::InsecureChannelCredentials(), [c] {
              grpc::ChannelArguments args;
              args.SetInt("tw.test.client", c);  // a distinct channel per client
              return args;
            }());
        for (int i = 0; i < 300; ++i) {
          RecvTensorArgs recv;
          recv.proto.set_step_id(next_step++);
          recv.proto.add_rendezvous_key(RendezvousKey(device, incarnation, device, "never"));
          RawCall(own, "/tw.proto.WorkerService/RecvTensor", EncodeRecvTensorArgs(recv),
                  absl::Milliseconds(10));
          RunStepArgs step;
          step.proto.set_session_handle(session.session_handle());
          step.proto.add_fetch(i % 2 == 0 ? "take:0" : "one:0");
          RawCall(own, "/tw.proto.MasterService/RunStep", EncodeRunStepArgs(step),
                  absl::Milliseconds(10));
        }
      });
    }
    for (std::thread& t : clients) t.join();
  };
  load();
  malloc_trim(0);
  const size_t before = HeapInUse();
  load();
  malloc_trim(0);
  const size_t after = HeapInUse();
  // 4800 abandoned calls: a leak of even 100 bytes each would show.
  EXPECT_LT(after, before + 256 * 1024) << "before " << before << ", after " << after;

  RunStepArgs step;
  step.proto.set_session_handle(session.session_handle());
  step.proto.add_fetch("one:0");
  grpc::ByteBuffer reply;
  grpc::Status s = RawCall(channel, "/tw.proto.MasterService/RunStep", EncodeRunStepArgs(step),
                           absl::Seconds(1), &reply);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
}

}  // namespace
}  // namespace tw
