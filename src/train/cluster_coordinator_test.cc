// ClusterCoordinator over real servers on loopback (ps:0, worker:0, worker:1 in this
// process): functions spread over the workers, a stopped worker loses no function and comes
// back, a lost ps task is the program's error, errors come back once.
#include "tensorweave/train/cluster_coordinator.h"

#include <map>
#include <set>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "testing/ports.h"

namespace tw::train {
namespace {

// The model: a counter on ps:0. Worker i's replica of "add" adds a constant made on that
// worker and fetches the counter's new value.
class ClusterCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* job : {"ps", "worker", "worker"}) {
      addresses_[job].push_back("127.0.0.1:" + std::to_string(testing::PickUnusedPort()));
    }
    ASSERT_TRUE(cluster_.AddJob("ps", addresses_["ps"]).ok());
    ASSERT_TRUE(cluster_.AddJob("worker", addresses_["worker"]).ok());
    StartTask("ps", 0);
    StartTask("worker", 0);
    StartTask("worker", 1);

    Scope root = Scope::NewRootScope();
    auto counter = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "counter", DT_INT64, {});
    ops::Assign(root.WithOpName("init"), counter, int64_t{0});
    auto initialized = ops::IsVariableInitialized(root.WithOpName("initialized"), counter);
    // The indices of the variables not initialized: empty once the model is ready.
    ops::Where(root.WithOpName("uninitialized"),
               ops::LogicalNot(root, ops::Pack(root, {initialized})));
    for (int i = 0; i < 2; ++i) {
      Scope on_worker = root.WithDevice("/job:worker/task:" + std::to_string(i));
      auto one =
          ops::Const(on_worker.WithOpName("one_" + std::to_string(i)), Tensor::Scalar<int64_t>(1));
      ops::AssignAdd(root.WithOpName("add_" + std::to_string(i)), counter, one,
                     {.use_locking = true});
      auto amount = ops::Placeholder(on_worker.WithOpName("amount_" + std::to_string(i)), DT_INT64);
      ops::AssignAdd(root.WithOpName("add_fed_" + std::to_string(i)), counter, amount,
                     {.use_locking = true});
    }
    ops::ReadVariable(root.WithOpName("read"), counter);
    auto graph = root.ToGraphDef();
    ASSERT_TRUE(graph.ok()) << graph.status();
    graph_ = *graph;

    add_ = std::make_shared<ScheduledFunction>();
    add_->name = "add";
    add_fed_ = std::make_shared<ScheduledFunction>();
    add_fed_->name = "add_fed";
    for (int i = 0; i < 2; ++i) {
      add_->per_worker.push_back({.fetches = {"add_" + std::to_string(i) + ":0"}});
      add_fed_->per_worker.push_back({.feeds = {"amount_" + std::to_string(i) + ":0"},
                                      .fetches = {"add_fed_" + std::to_string(i) + ":0"}});
    }
    read_ = std::make_shared<ScheduledFunction>();
    read_->name = "read";
    read_->per_worker.push_back({.fetches = {"read:0"}});
  }

  void StartTask(const std::string& job, int index) {
    auto server = Server::Create(
        cluster_, job, index,
        {.bind_host = "127.0.0.1", .num_threads = 1, .wait_for_cluster = absl::Seconds(20)});
    ASSERT_TRUE(server.ok()) << server.status();
    ASSERT_TRUE((*server)->Start().ok());
    servers_[job + std::to_string(index)] = *std::move(server);
  }

  std::unique_ptr<ClusterCoordinator> MakeCoordinator() {
    ClusterCoordinatorOptions options;
    for (const std::string& address : addresses_["worker"]) {
      options.worker_targets.push_back("grpc://" + address);
    }
    options.worker_retry_interval = absl::Milliseconds(50);
    auto coordinator = ClusterCoordinator::Create(options);
    EXPECT_TRUE(coordinator.ok()) << coordinator.status();
    if (!coordinator.ok()) return nullptr;
    EXPECT_TRUE((*coordinator)->ExtendGraph(graph_).ok());
    return *std::move(coordinator);
  }

  Status Initialize(ClusterCoordinator& c) {
    return c.InitializeModel({.fetches = {"uninitialized:0"}}, {.targets = {"init"}});
  }

  int64_t Counter(ClusterCoordinator& c) {
    auto value = c.Schedule(read_);
    EXPECT_TRUE(value.ok()) << value.status();
    if (!value.ok()) return -1;
    auto out = (*value)->Fetch(absl::Seconds(60));
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].scalar<int64_t>() : -1;
  }

  std::map<std::string, std::vector<std::string>> addresses_;
  ClusterSpec cluster_;
  std::map<std::string, std::unique_ptr<Server>> servers_;
  proto::GraphDef graph_;
  std::shared_ptr<ScheduledFunction> add_, add_fed_, read_;
};

TEST_F(ClusterCoordinatorTest, FunctionsRunOnEveryWorkerEachExactlyOnce) {
  auto coordinator = MakeCoordinator();
  ASSERT_NE(coordinator, nullptr);
  ASSERT_TRUE(Initialize(*coordinator).ok());
  constexpr int kSteps = 200;
  std::vector<std::shared_ptr<RemoteValue>> values;
  for (int i = 0; i < kSteps; ++i) {
    auto value = coordinator->Schedule(add_);
    ASSERT_TRUE(value.ok()) << value.status();
    values.push_back(*value);
  }
  ASSERT_TRUE(coordinator->Join().ok());
  auto done = coordinator->Done();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(*done);
  // Each function added one: together the counter's new values are 1..kSteps.
  std::set<int64_t> seen;
  for (const auto& value : values) {
    ASSERT_TRUE(value->IsReady());
    auto out = value->Fetch();
    ASSERT_TRUE(out.ok()) << out.status();
    seen.insert((*out)[0].scalar<int64_t>());
    EXPECT_GE(value->worker(), 0);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kSteps));
  EXPECT_EQ(*seen.begin(), 1);
  EXPECT_EQ(*seen.rbegin(), kSteps);
  ClusterCoordinatorStats stats = coordinator->stats();
  EXPECT_EQ(stats.completed, kSteps + 1);  // and InitializeModel
  EXPECT_GT(stats.completed_by_worker[0], 0);
  EXPECT_GT(stats.completed_by_worker[1], 0);
  EXPECT_EQ(stats.rescheduled, 0);
}

TEST_F(ClusterCoordinatorTest, FeedsReachTheWorkersReplica) {
  auto coordinator = MakeCoordinator();
  ASSERT_NE(coordinator, nullptr);
  ASSERT_TRUE(Initialize(*coordinator).ok());
  for (int64_t amount : {5, 7, 11}) {
    auto value = coordinator->Schedule(add_fed_, {Tensor::Scalar<int64_t>(amount)});
    ASSERT_TRUE(value.ok()) << value.status();
    ASSERT_TRUE((*value)->Fetch().ok());
  }
  EXPECT_EQ(Counter(*coordinator), 23);
  auto wrong = coordinator->Schedule(add_fed_);
  EXPECT_TRUE(IsInvalidArgument(wrong.status())) << wrong.status();
  EXPECT_THAT(std::string(wrong.status().message()), ::testing::HasSubstr("'add_fed' takes 1"));
}

TEST_F(ClusterCoordinatorTest, InitializeModelKeepsAModelThePsTasksHold) {
  auto first = MakeCoordinator();
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(Initialize(*first).ok());
  ASSERT_TRUE(first->Schedule(add_fed_, {Tensor::Scalar<int64_t>(40)}).ok());
  ASSERT_TRUE(first->Join().ok());
  first.reset();
  // A coordinator started again keeps what the ps task holds.
  auto second = MakeCoordinator();
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(Initialize(*second).ok());
  EXPECT_EQ(Counter(*second), 40);
}

TEST_F(ClusterCoordinatorTest, AStoppedWorkerLosesNoFunctionAndComesBack) {
  auto coordinator = MakeCoordinator();
  ASSERT_NE(coordinator, nullptr);
  ASSERT_TRUE(Initialize(*coordinator).ok());
  constexpr int kSteps = 400;
  for (int i = 0; i < kSteps; ++i) ASSERT_TRUE(coordinator->Schedule(add_).ok());
  // Stop worker 1 while the queue is still full: the function it runs or takes next fails.
  while (coordinator->stats().completed_by_worker[1] < 20) absl::SleepFor(absl::Milliseconds(1));
  servers_["worker1"]->Stop();
  Status joined = coordinator->Join();
  ASSERT_TRUE(joined.ok()) << joined;
  ClusterCoordinatorStats stats = coordinator->stats();
  EXPECT_GE(stats.rescheduled, 1);
  EXPECT_GE(stats.worker_failures, 1);
  EXPECT_FALSE(stats.worker_available[1]);
  // Every function ran at least once; one running when its worker died may have run twice.
  const int64_t applied = Counter(*coordinator);
  EXPECT_GE(applied, kSteps);
  EXPECT_LE(applied, kSteps + stats.worker_failures);

  // Worker 1 comes back on its address and takes functions again.
  servers_.erase("worker1");
  StartTask("worker", 1);
  const int64_t before = coordinator->stats().completed_by_worker[1];
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (coordinator->stats().completed_by_worker[1] == before && absl::Now() < deadline) {
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(coordinator->Schedule(add_).ok());
    ASSERT_TRUE(coordinator->Join().ok());
  }
  stats = coordinator->stats();
  EXPECT_GT(stats.completed_by_worker[1], before);
  EXPECT_GE(stats.worker_recoveries, 1);
  EXPECT_TRUE(stats.worker_available[1]);
}

TEST_F(ClusterCoordinatorTest, AKernelErrorComesBackOnceAndCancelsTheQueue) {
  auto coordinator = MakeCoordinator();
  ASSERT_NE(coordinator, nullptr);
  // Not initialized: reading the counter fails on the ps task.
  auto value = coordinator->Schedule(read_);
  ASSERT_TRUE(value.ok());
  auto out = (*value)->Fetch();
  EXPECT_TRUE(IsFailedPrecondition(out.status())) << out.status();
  Status joined = coordinator->Join();
  EXPECT_TRUE(IsFailedPrecondition(joined)) << joined;
  EXPECT_TRUE(coordinator->Join().ok());  // returned once
  // The model is still usable afterwards.
  ASSERT_TRUE(Initialize(*coordinator).ok());
  EXPECT_EQ(Counter(*coordinator), 0);
}

TEST_F(ClusterCoordinatorTest, ALostPsTaskIsTheProgramsErrorAndTrainingGoesOnAfterIt) {
  auto coordinator = MakeCoordinator();
  ASSERT_NE(coordinator, nullptr);
  ASSERT_TRUE(Initialize(*coordinator).ok());
  ASSERT_TRUE(coordinator->Schedule(add_).ok());
  ASSERT_TRUE(coordinator->Join().ok());
  servers_["ps0"]->Stop();
  auto value = coordinator->Schedule(add_);
  ASSERT_TRUE(value.ok());
  Status s = (*value)->Fetch().status();
  EXPECT_TRUE(IsUnavailable(s) || IsAborted(s)) << s;
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("/job:ps/replica:0/task:0"));
  Status joined = coordinator->Join();
  EXPECT_EQ(joined.code(), s.code()) << joined;
  EXPECT_EQ(coordinator->stats().rescheduled, 0);
  // The program starts the ps task again and makes the model anew (or restores it).
  servers_.erase("ps0");
  StartTask("ps", 0);
  ASSERT_TRUE(Initialize(*coordinator).ok());
  ASSERT_TRUE(coordinator->Schedule(add_fed_, {Tensor::Scalar<int64_t>(3)}).ok());
  ASSERT_TRUE(coordinator->Join().ok());
  EXPECT_EQ(Counter(*coordinator), 3);
}

TEST_F(ClusterCoordinatorTest, DestroyingTheCoordinatorCancelsQueuedFunctions) {
  auto coordinator = MakeCoordinator();
  ASSERT_NE(coordinator, nullptr);
  ASSERT_TRUE(Initialize(*coordinator).ok());
  std::vector<std::shared_ptr<RemoteValue>> values;
  for (int i = 0; i < 2000; ++i) values.push_back(*coordinator->Schedule(add_));
  coordinator.reset();
  int cancelled = 0;
  for (const auto& value : values) {
    ASSERT_TRUE(value->IsReady());
    Status s = value->Fetch().status();
    if (IsCancelled(s)) ++cancelled;
  }
  EXPECT_GT(cancelled, 0);
}

TEST(ClusterCoordinatorCreateTest, RefusesNoWorkersAndOtherTargets) {
  auto none = ClusterCoordinator::Create({});
  EXPECT_TRUE(IsInvalidArgument(none.status())) << none.status();
  auto local = ClusterCoordinator::Create({.worker_targets = {"grpc://127.0.0.1:1", ""}});
  EXPECT_TRUE(IsInvalidArgument(local.status())) << local.status();
  EXPECT_THAT(std::string(local.status().message()), ::testing::HasSubstr("worker_targets[1]"));
}

TEST(RemoteValueTest, FetchWithATimeoutGivesUp) {
  RemoteValue value;
  EXPECT_FALSE(value.IsReady());
  auto out = value.Fetch(absl::Milliseconds(10));
  EXPECT_TRUE(IsDeadlineExceeded(out.status())) << out.status();
  value.Set(1, std::vector<Tensor>{Tensor::Scalar<int64_t>(4)});
  value.Set(0, errors::Internal("ignored: set once"));
  auto ready = value.Fetch();
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ((*ready)[0].scalar<int64_t>(), 4);
  EXPECT_EQ(value.worker(), 1);
}

}  // namespace
}  // namespace tw::train
