// Servers of one cluster in this process, talking over gRPC on loopback: the seeds'
// patterns of shared variables and queues across tasks.
#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "src/rpc/grpc_worker_cache.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// Whether `server`'s stats come to satisfy `holds` within `limit`, looked at every
// millisecond: the tests wait on what the task shows (ServerStats, which its metrics
// endpoint serves as tw_active_steps and the chief watch's state), never for a fixed time.
template <typename Predicate>
::testing::AssertionResult StatsReach(const Server& server, Predicate holds, const char* what,
                                      absl::Duration limit = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + limit;
  while (!holds(server.stats())) {
    if (absl::Now() >= deadline) {
      return ::testing::AssertionFailure()
             << "not " << what << " after " << limit << " (active steps "
             << server.stats().active_steps << ")";
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  return ::testing::AssertionSuccess();
}

// Whether `server`'s worker runs a step within 10 s: a step blocked there is then really
// blocked, not yet on its way.
::testing::AssertionResult HasActiveStep(const Server& server) {
  return StatsReach(
      server, [](const ServerStats& s) { return s.active_steps > 0; }, "running a step");
}

// ps:0, worker:0 and worker:1 on free loopback ports, all started.
class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> ps{Address()}, workers{Address(), Address()};
    ASSERT_TRUE(cluster_.AddJob("ps", ps).ok());
    ASSERT_TRUE(cluster_.AddJob("worker", workers).ok());
    for (const auto& [job, n] :
         std::vector<std::pair<std::string, int>>{{"ps", 1}, {"worker", 2}}) {
      for (int i = 0; i < n; ++i) {
        auto server = Server::Create(
            cluster_, job, i,
            {.bind_host = "127.0.0.1", .num_threads = 2, .wait_for_cluster = absl::Seconds(10)});
        ASSERT_TRUE(server.ok()) << server.status();
        ASSERT_TRUE((*server)->Start().ok());
        servers_[job + std::to_string(i)] = *std::move(server);
      }
    }
  }

  static std::string Address() { return "127.0.0.1:" + std::to_string(testing::PickUnusedPort()); }
  std::string Target(const std::string& name) { return servers_[name]->target(); }

  ClusterSpec cluster_;
  std::map<std::string, std::unique_ptr<Server>> servers_;
};

TEST_F(ClusterTest, VariableOnPsSharedByTwoWorkers) {
  Scope root = Scope::NewRootScope();
  auto total = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "total", DT_INT64, {});
  auto init = ops::Assign(root.WithOpName("init"), total, int64_t{0});
  auto count = ops::Placeholder(root.WithOpName("count"), DT_INT64);
  auto add = ops::AssignAdd(root.WithOpName("add"), total, count, {.use_locking = true});
  auto read = ops::ReadVariable(root.WithOpName("read"), total);
  ClientSession chief(root, {.target = Target("worker0")});
  ASSERT_TRUE(chief.Run({}, {}, {init.op()}).ok());
  ClientSession other(root, {.target = Target("worker1")});  // a session on another task
  for (int i = 1; i <= 10; ++i) {
    auto a = chief.Run({{count, Tensor::Scalar<int64_t>(i)}}, {}, {add.op()});
    ASSERT_TRUE(a.ok()) << a.status();
    auto b = other.Run({{count, Tensor::Scalar<int64_t>(100)}}, {}, {add.op()});
    ASSERT_TRUE(b.ok()) << b.status();
  }
  auto out = other.Run({}, {read});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 55 + 1000);
}

TEST_F(ClusterTest, QueueOnOneTaskFilledByOneSessionDrainedByAnother) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_STRING},
                          {.capacity = 10, .shared_name = "filenames"});
  auto name = ops::Placeholder(root.WithOpName("name"), DT_STRING);
  auto put = ops::QueueEnqueue(root, q, {name});
  auto close = ops::QueueClose(root, q);
  auto take = ops::QueueDequeue(root, q);
  ClientSession producer(root, {.target = Target("worker0")});
  ClientSession consumer(root, {.target = Target("worker1")});
  for (const char* f : {"a.txt", "b.txt"}) {
    ASSERT_TRUE(producer.Run({{name, Tensor::Scalar<std::string>(f)}}, {}, {put}).ok());
  }
  ASSERT_TRUE(producer.Run({}, {}, {close}).ok());
  std::vector<std::string> got;
  while (true) {
    auto out = consumer.Run({}, take);
    if (IsOutOfRange(out.status())) break;
    ASSERT_TRUE(out.ok()) << out.status();
    got.push_back((*out)[0].scalar<std::string>());
    ASSERT_LE(got.size(), 2u);
  }
  EXPECT_THAT(got, ::testing::ElementsAre("a.txt", "b.txt"));
}

TEST_F(ClusterTest, RemoteErrorNamesTaskAndNode) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "unset", DT_FLOAT, {});
  auto read = ops::ReadVariable(root.WithOpName("read_unset"), v);
  auto copy = ops::Identity(root.WithOpName("copy"), read);
  ClientSession session(root, {.target = Target("worker0")});
  auto out = session.Run({}, {copy});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsFailedPrecondition(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("From /job:ps/replica:0/task:0: node read_unset (ReadVariable)"));
}

TEST_F(ClusterTest, TimeoutOnARemoteBlockedDequeue) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_INT32}, {.shared_name = "empty"});
  auto take = ops::QueueDequeue(root, q);
  ClientSession session(root, {.target = Target("worker0")});
  auto value = ops::Placeholder(root, DT_INT32);
  auto put = ops::QueueEnqueue(root, q, {value});
  // Each round: a dequeue times out, then an element is enqueued and dequeued. The timed-out
  // dequeue must be gone from the ps task before the enqueue arrives there, or it takes the
  // element and the round's dequeue waits in vain. Repeated, since that was a race.
  for (int round = 0; round < 10; ++round) {
    auto out = session.Run({}, take, {}, {.timeout = absl::Milliseconds(50)});
    EXPECT_TRUE(IsDeadlineExceeded(out.status())) << out.status();
    ASSERT_TRUE(session.Run({{value, Tensor::Scalar<int32_t>(round)}}, {}, {put}).ok());
    auto again = session.Run({}, take, {}, {.timeout = absl::Seconds(10)});
    ASSERT_TRUE(again.ok()) << "round " << round << ": " << again.status();
    EXPECT_EQ((*again)[0].scalar<int32_t>(), round);
  }
}

TEST_F(ClusterTest, CloseCancelsARemoteBlockedDequeue) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_INT32}, {.shared_name = "never"});
  auto take = ops::QueueDequeue(root, q);
  ClientSession session(root, {.target = Target("worker0")});
  StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
  std::thread consumer([&] { out = session.Run({}, take); });
  EXPECT_TRUE(HasActiveStep(*servers_["ps0"]));  // the dequeue waits on the ps task
  ASSERT_TRUE(session.Close().ok());
  consumer.join();  // would hang if Close did not reach the ps task
  EXPECT_TRUE(IsCancelled(out.status())) << out.status();
}

// Through a master of this process (worker0's own server) and through gRPC: a target in
// gRPC's "ipv4:" spelling names no master of this process, so its session takes the
// network path.
TEST_F(ClusterTest, TheCallerCancelsARemoteBlockedDequeueAndTheSessionGoesOn) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_INT32}, {.shared_name = "c"});
  auto take = ops::QueueDequeue(root, q);
  auto put = ops::QueueEnqueue(root, q, {Input(5)});
  const std::string remote = "grpc://ipv4:127.0.0.1:" + std::to_string(servers_["worker1"]->port());
  for (const std::string& target : {Target("worker0"), remote}) {
    ClientSession session(root, {.target = target});
    StepCancellation cancellation;
    StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
    std::thread consumer([&] { out = session.Run({}, take, {}, {.cancellation = &cancellation}); });
    EXPECT_TRUE(HasActiveStep(*servers_["ps0"])) << target;
    cancellation.Cancel();
    consumer.join();  // would hang if the cancellation did not reach the ps task
    EXPECT_TRUE(IsCancelled(out.status())) << target << ": " << out.status();
    // The dequeue is gone from the ps task: the next one gets the element.
    ASSERT_TRUE(session.Run({}, {}, {put}).ok());
    auto again = session.Run({}, take, {}, {.timeout = absl::Seconds(10)});
    ASSERT_TRUE(again.ok()) << target << ": " << again.status();
    EXPECT_EQ((*again)[0].scalar<int32_t>(), 5);
    // Ended on the ps task too, before the next target's step is looked for there.
    ASSERT_TRUE(StatsReach(
        *servers_["ps0"], [](const ServerStats& s) { return s.active_steps == 0; }, "idle"))
        << target;
  }
}

TEST_F(ClusterTest, ListDevicesShowsTheTasksTheFiltersAdmit) {
  Scope root = Scope::NewRootScope();
  ClientSession all(root, {.target = Target("worker0")});
  auto devices = all.ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  std::vector<std::string> names;
  for (const DeviceAttributes& d : *devices) names.push_back(d.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("/job:ps/replica:0/task:0/device:CPU:0",
                                                     "/job:worker/replica:0/task:0/device:CPU:0",
                                                     "/job:worker/replica:0/task:1/device:CPU:0"));
  // Filters keep the master's own task (where unplaced ops run) and what they name.
  ClientSession some(root, {.target = Target("worker0"), .device_filters = {"/job:ps"}});
  devices = some.ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  names.clear();
  for (const DeviceAttributes& d : *devices) names.push_back(d.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("/job:ps/replica:0/task:0/device:CPU:0",
                                                     "/job:worker/replica:0/task:0/device:CPU:0"));
}

TEST_F(ClusterTest, ResetContainersClearsTheTasksStateAndClosesTheMastersSessions) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "reset_me", DT_FLOAT, {});
  auto set = ops::Assign(root, v, 1.0f);
  auto read = ops::ReadVariable(root, v);
  ClientSession session(root, {.target = Target("worker0")});
  ASSERT_TRUE(session.Run({}, {}, {set.op()}).ok());
  ASSERT_TRUE(ResetContainers({.target = Target("worker1")}, {""}).ok());
  // worker0's session is on another master: still open, but the variable is gone.
  auto out = session.Run({}, {read});
  EXPECT_TRUE(IsFailedPrecondition(out.status())) << out.status();
  ClientSession on_worker1(root, {.target = Target("worker1")});
  ASSERT_TRUE(on_worker1.Run({}, {}, {set.op()}).ok());
  ASSERT_TRUE(ResetContainers({.target = Target("worker1")}, {}).ok());
  EXPECT_FALSE(on_worker1.Run({}, {read}).ok());  // its session was closed
  EXPECT_TRUE(IsUnavailable(ResetContainers(
      {.target = "grpc://127.0.0.1:" + std::to_string(testing::PickUnusedPort())}, {})));
}

TEST_F(ClusterTest, TheSessionsOperationTimeoutEndsARemoteStep) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_INT32}, {.shared_name = "t"});
  auto take = ops::QueueDequeue(root, q);
  ClientSession session(root,
                        {.target = Target("worker0"), .operation_timeout = absl::Milliseconds(50)});
  EXPECT_TRUE(IsDeadlineExceeded(session.Run({}, take).status()));
}

TEST_F(ClusterTest, StopEndsJoinAndFreesThePort) {
  Server* ps = servers_["ps0"].get();
  std::thread joiner([ps] { ps->Join(); });
  ps->Stop();
  joiner.join();  // would hang if Stop did not end Join
  auto again = Server::Create(cluster_, "ps", 0, {.bind_host = "127.0.0.1"});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)->Start().ok());  // the port is free again
}

TEST_F(ClusterTest, StoppingTheMasterCancelsItsRunningSteps) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_INT32}, {.shared_name = "idle"});
  auto take = ops::QueueDequeue(root, q);
  ClientSession session(root, {.target = Target("worker0")});
  StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
  std::thread consumer([&] { out = session.Run({}, take); });
  EXPECT_TRUE(HasActiveStep(*servers_["ps0"]));
  servers_["worker0"]->Stop();  // would hang if the step kept waiting on the ps task
  consumer.join();
  EXPECT_FALSE(out.ok());
}

TEST_F(ClusterTest, StopClusterEndsEveryTasksJoin) {
  std::vector<std::thread> joiners;
  std::atomic<int> joined{0};
  for (const char* name : {"ps0", "worker1"}) {
    Server* s = servers_[name].get();
    joiners.emplace_back([s, &joined] {
      s->Join();
      ++joined;
    });
  }
  EXPECT_TRUE(servers_["worker0"]->StopCluster(absl::Seconds(10)).ok());
  for (auto& j : joiners) j.join();  // would hang if a task kept serving
  EXPECT_EQ(joined.load(), 2);
  servers_["worker0"]->Join();  // the caller stopped too
}

TEST_F(ClusterTest, StopClusterNamesTasksItCouldNotReach) {
  servers_["worker1"]->Stop();
  Status s = servers_["worker0"]->StopCluster(absl::Seconds(5));
  EXPECT_TRUE(IsUnavailable(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:worker/replica:0/task:1"));
  EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("/job:ps")));
  servers_["ps0"]->Join();  // reached, so stopped
}

TEST_F(ClusterTest, StopClusterServersWorksFromAProcessWithoutAServer) {
  EXPECT_TRUE(StopClusterServers(cluster_, {}, absl::Seconds(10)).ok());
  for (auto& [name, server] : servers_) server->Join();
}

TEST_F(ClusterTest, IsolatedSessionsKeepTheirResourcesToThemselves) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "v", DT_FLOAT, {});
  auto value = ops::Placeholder(root, DT_FLOAT);
  auto set = ops::Assign(root, v, value);
  auto read = ops::ReadVariable(root, v);
  ClientSession a(root, {.target = Target("worker0"), .isolate_session = true});
  ClientSession b(root, {.target = Target("worker1"), .isolate_session = true});
  ClientSession shared(root, {.target = Target("worker0")});
  ASSERT_TRUE(a.Run({{value, Tensor::Scalar(1.0f)}}, {}, {set.op()}).ok());
  ASSERT_TRUE(b.Run({{value, Tensor::Scalar(2.0f)}}, {}, {set.op()}).ok());
  EXPECT_EQ((*a.Run({}, {read}))[0].scalar<float>(), 1.0f);
  EXPECT_EQ((*b.Run({}, {read}))[0].scalar<float>(), 2.0f);
  // Neither isolated variable is the shared one, which nobody has initialized.
  auto unseen = shared.Run({}, {read});
  EXPECT_TRUE(IsFailedPrecondition(unseen.status())) << unseen.status();
  ASSERT_TRUE(shared.Run({{value, Tensor::Scalar(3.0f)}}, {}, {set.op()}).ok());
  EXPECT_EQ((*a.Run({}, {read}))[0].scalar<float>(), 1.0f);
}

// What a Kubernetes gRPC probe does: grpc.health.v1.Health/Check with an empty service name.
TEST_F(ClusterTest, ServesTheStandardHealthService) {
  auto channel = grpc::CreateChannel(cluster_.task_address("ps", 0).value(),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::Slice empty("");  // HealthCheckRequest{service: ""} encodes to no bytes
  grpc::ByteBuffer request(&empty, 1), response;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  absl::Notification done;
  grpc::Status status;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const auto& slice : slices)
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  EXPECT_EQ(bytes, std::string("\x08\x01"));  // HealthCheckResponse{status: SERVING}
}

TEST(ServerDefaultsTest, TheServersOperationTimeoutEndsStepsThatSetNone) {
  auto server = Server::CreateLocal({.default_operation_timeout = absl::Milliseconds(50)});
  ASSERT_TRUE(server.ok()) << server.status();
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root, {DT_INT32});
  auto take = ops::QueueDequeue(root, q);
  ClientSession session(root, {.target = (*server)->target()});
  auto out = session.Run({}, take);
  EXPECT_TRUE(IsDeadlineExceeded(out.status())) << out.status();
  EXPECT_EQ(out.status().message(),
            "Timed out waiting for notification: the step did not finish within 50ms");
  // A step's own timeout wins.
  out = session.Run({}, take, {}, {.timeout = absl::Milliseconds(80)});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("80ms"));
}

// The first step of a session waits for the cluster's tasks: a cancellation ends that wait,
// and the session is usable once the tasks are up.
TEST(SessionWaitTest, TheCallersCancellationEndsAWaitForTheCluster) {
  ClusterSpec cluster;
  const std::string worker = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string ps = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  ASSERT_TRUE(cluster.AddJob("worker", std::vector<std::string>{worker}).ok());
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{ps}).ok());
  auto worker_server = Server::Create(cluster, "worker", 0, {.bind_host = "127.0.0.1"});
  ASSERT_TRUE(worker_server.ok() && (*worker_server)->Start().ok());
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root.WithDevice("/job:ps/task:0"), Tensor::Scalar<int32_t>(3));
  ClientSession session(root, {.target = (*worker_server)->target()});
  StepCancellation cancellation;
  StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
  std::thread runner([&] { out = session.Run({}, {c}, {}, {.cancellation = &cancellation}); });
  cancellation.Cancel();  // before or during the wait for the ps task: either way it ends
  runner.join();          // would take the cluster wait's 5 minutes without the cancellation
  EXPECT_TRUE(IsCancelled(out.status())) << out.status();
  auto ps_server = Server::Create(cluster, "ps", 0, {.bind_host = "127.0.0.1"});
  ASSERT_TRUE(ps_server.ok() && (*ps_server)->Start().ok());
  out = session.Run({}, {c});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 3);
}

TEST(ChiefWatchTest, TasksStopWhenTheChiefIsGone) {
  ClusterSpec cluster;
  const std::string chief = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string ps = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  ASSERT_TRUE(cluster.AddJob("chief", std::vector<std::string>{chief}).ok());
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{ps}).ok());
  auto chief_server = Server::Create(cluster, "chief", 0, {.bind_host = "127.0.0.1"});
  auto ps_server = Server::Create(
      cluster, "ps", 0,
      {.bind_host = "127.0.0.1", .stop_when_chief_unreachable = absl::Milliseconds(300)});
  ASSERT_TRUE(chief_server.ok() && ps_server.ok());
  ASSERT_TRUE((*chief_server)->Start().ok());
  ASSERT_TRUE((*ps_server)->Start().ok());
  // The watch counts only from a first answer of the chief.
  ASSERT_TRUE(StatsReach(
      **ps_server,
      [](const ServerStats& s) { return s.chief_last_answered != absl::InfinitePast(); },
      "answered by the chief"));
  const absl::Time gone = absl::Now();
  (*chief_server)->Stop();
  (*ps_server)->Join();  // would hang if the ps task did not watch the chief
  // Not before the limit, counted from the chief's last answer (at most one 75 ms poll
  // before it stopped).
  EXPECT_GE(absl::Now() - gone, absl::Milliseconds(300 - 75));
}

TEST(DeviceFilterTest, ASessionNeverWaitsForTasksOutsideItsFilters) {
  ClusterSpec cluster;
  const std::string ps = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string worker = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string evaluator = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{ps}).ok());
  ASSERT_TRUE(cluster.AddJob("worker", std::vector<std::string>{worker}).ok());
  ASSERT_TRUE(
      cluster.AddJob("evaluator", std::vector<std::string>{evaluator}).ok());  // never started
  ServerOptions options{
      .bind_host = "127.0.0.1", .num_threads = 1, .wait_for_cluster = absl::Seconds(2)};
  auto ps_server = Server::Create(cluster, "ps", 0, options);
  auto worker_server = Server::Create(cluster, "worker", 0, options);
  ASSERT_TRUE(ps_server.ok() && worker_server.ok());
  ASSERT_TRUE((*ps_server)->Start().ok() && (*worker_server)->Start().ok());
  Scope root = Scope::NewRootScope();
  auto c = ops::Identity(root.WithDevice("/job:ps/task:0"), 1.0f);

  ClientSession filtered(root, {.target = (*worker_server)->target(),
                                .device_filters = {"/job:ps", "/job:worker/task:0"}});
  auto out = filtered.Run({}, {c});
  ASSERT_TRUE(out.ok()) << out.status();

  // Without filters the session waits for the evaluator and gives up naming it.
  ClientSession unfiltered(root, {.target = (*worker_server)->target()});
  auto waited = unfiltered.Run({}, {c});
  EXPECT_TRUE(IsUnavailable(waited.status())) << waited.status();
  EXPECT_THAT(std::string(waited.status().message()),
              HasSubstr("waiting for /job:evaluator/replica:0/task:0"));
}

TEST(LocalServerTest, HelloDistributedTensorweave) {
  auto server = Server::CreateLocal({.num_threads = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  Scope root = Scope::NewRootScope();
  auto hello = ops::Const(root, Tensor::Scalar<std::string>("Hello, distributed tensorweave!"));
  ClientSession session(root, {.target = (*server)->target()});
  auto out = session.Run({}, {hello});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<std::string>(), "Hello, distributed tensorweave!");
}

// What the server reports as bound is what it listens on: CreateLocal binds loopback.
TEST(ServerBindTest, ListenAddressIsTheAddressReallyBound) {
  auto server = Server::CreateLocal({.num_threads = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->listen_address(), "127.0.0.1:" + std::to_string((*server)->port()));
}

// An IPv6 bind host is bracketed for gRPC: "::1:0" could not be bound, "[::1]:0" can.
TEST(ServerBindTest, AnIpv6LoopbackBindHostIsServed) {
  if (!testing::HasIpv6Loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  auto server = Server::CreateLocal({.bind_host = "::1", .num_threads = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = "[::1]:" + std::to_string((*server)->port());
  EXPECT_EQ((*server)->listen_address(), address);
  Scope root = Scope::NewRootScope();
  auto two = ops::Add(root, 1, 1);
  ClientSession session(root, {.target = "grpc://" + address});
  auto out = session.Run({}, {two}, {}, {.timeout = absl::Seconds(30)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 2);
}

// A server bound to one address that localhost does not reach (127.0.0.2 is loopback to
// the kernel, but not 127.0.0.1) names that address in its target, and a session on the
// target works.
TEST(ServerBindTest, TheTargetOfAServerBoundToOneAddressIsThatAddress) {
  auto server = Server::CreateLocal({.bind_host = "127.0.0.2", .num_threads = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->target(), "grpc://127.0.0.2:" + std::to_string((*server)->port()));
  Scope root = Scope::NewRootScope();
  auto two = ops::Add(root, 1, 1);
  ClientSession session(root, {.target = (*server)->target()});
  auto out = session.Run({}, {two}, {}, {.timeout = absl::Seconds(30)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 2);
}

TEST(ServerCreateTest, BadRoleIsInvalidArgument) {
  ClusterSpec cluster;
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{"127.0.0.1:1"}).ok());
  EXPECT_EQ(Server::Create(cluster, "worker", 0).status().message(),
            "Job \"worker\" was not defined in cluster");
  EXPECT_EQ(Server::Create(cluster, "ps", 2).status().message(),
            "Task 2 was not defined in job \"ps\"");
}

// A step may fetch one tensor several times (hooks asking for the global step, say); it is
// received once and returned at every position.
TEST_F(ClusterTest, ATensorFetchedTwiceIsReturnedTwice) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "twice", DT_INT64, {});
  auto init = ops::Assign(root, v, int64_t{41});
  auto read = ops::ReadVariable(root, v);
  auto plus = ops::Add(root.WithDevice("/job:worker/task:0"), read, int64_t{1});
  ClientSession session(root, {.target = Target("worker0")});
  ASSERT_TRUE(session.Run({}, {}, {init.op()}).ok());
  auto out = session.Run({}, {read, plus, read});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 41);
  EXPECT_EQ((*out)[1].scalar<int64_t>(), 42);
  EXPECT_EQ((*out)[2].scalar<int64_t>(), 41);
}

}  // namespace
}  // namespace tw

namespace tw {
namespace {

// Calls a peer's worker service through the client a task uses for it; the status.
Status Deregister(WorkerInterface* peer, absl::Duration wait) {
  proto::DeregisterGraphRequest request;
  request.set_graph_handle("no-such-graph");
  proto::DeregisterGraphResponse response;
  absl::Notification done;
  Status status;
  peer->DeregisterGraphAsync(&request, &response, [&](const Status& s) {
    status = s;
    done.Notify();
  });
  if (!done.WaitForNotificationWithTimeout(wait)) return errors::DeadlineExceeded("no reply");
  return status;
}

// A task's first call to a peer waits for the peer's connection to come up (a cluster
// still starting, a handshake that timed out) instead of failing with Unavailable; once the
// peer has answered, a peer that is gone is Unavailable at once, as before.
TEST(FirstContactTest, AFirstCallWaitsForThePeerAndLaterOnesFailFast) {
  const std::string ps_address = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  ClusterSpec spec;
  ASSERT_TRUE(spec.AddJob("ps", std::vector<std::string>{ps_address}).ok());
  ASSERT_TRUE(spec.AddJob("worker", std::vector<std::string>{"127.0.0.1:1"}).ok());
  GrpcWorkerCache cache(spec, "/job:worker/replica:0/task:0");
  auto peer = cache.GetWorker("/job:ps/replica:0/task:0");
  ASSERT_TRUE(peer.ok()) << peer.status();

  // The ps task comes up a moment after the call was made.
  std::unique_ptr<Server> ps;
  std::thread starter([&] {
    absl::SleepFor(absl::Milliseconds(300));
    auto server = Server::Create(spec, "ps", 0, {.bind_host = "127.0.0.1", .num_threads = 1});
    if (server.ok() && (*server)->Start().ok()) ps = *std::move(server);
  });
  Status first = Deregister(*peer, absl::Seconds(20));
  starter.join();
  ASSERT_NE(ps, nullptr);
  EXPECT_FALSE(IsUnavailable(first)) << first;
  EXPECT_FALSE(absl::IsDeadlineExceeded(first)) << first;

  ps->Stop();
  const absl::Time start = absl::Now();
  Status gone = Deregister(*peer, absl::Seconds(20));
  EXPECT_TRUE(IsUnavailable(gone)) << gone;
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

}  // namespace
}  // namespace tw
