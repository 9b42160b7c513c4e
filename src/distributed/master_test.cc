// The master over in-process workers (testing/in_process_cluster.h): sessions created while
// tasks are down, steps split across tasks, errors and their follow-on cancellations, and
// closing a session while its step runs.
#include "src/distributed/master.h"

#include <set>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/framework/resource_mgr.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/ops.h"
#include "testing/in_process_cluster.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::InProcessCluster;

const std::string kPs = "/job:ps/replica:0/task:0";
const std::string kWorker = "/job:worker/replica:0/task:0";

// A call that completes later: its status, and a notification when it has.
struct Pending {
  absl::Notification done;
  Status status;
  Master::StatusCallback Callback() {
    return [this](const Status& s) {
      status = s;
      done.Notify();
    };
  }
  // Bounded: a call that never completes fails the test instead of hanging it.
  Status Wait() {
    if (!done.WaitForNotificationWithTimeout(absl::Seconds(60))) {
      return errors::DeadlineExceeded("the call did not complete");
    }
    return status;
  }
};

class MasterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = InProcessCluster::Create({kPs, kWorker});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    master_ = cluster_->NewMaster(kWorker, {.wait_for_cluster = absl::Seconds(30)});
  }
  void TearDown() override { master_.reset(); }

  // Creates a session for `graph`; its handle.
  StatusOr<std::string> CreateSession(const proto::GraphDef& graph) {
    proto::CreateSessionRequest request;
    *request.mutable_graph_def() = graph;
    proto::CreateSessionResponse response;
    Pending call;
    master_->CreateSessionAsync(&request, &response, nullptr, call.Callback());
    TW_RETURN_IF_ERROR(call.Wait());
    return response.session_handle();
  }

  StatusOr<std::vector<Tensor>> Run(const std::string& session,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets = {}) {
    RunStepArgs args;
    args.proto.set_session_handle(session);
    for (const std::string& f : fetches) args.proto.add_fetch(f);
    for (const std::string& t : targets) args.proto.add_target(t);
    RunStepResult result;
    Pending step;
    master_->RunStepAsync(&args, &result, nullptr, step.Callback());
    TW_RETURN_IF_ERROR(step.Wait());
    std::vector<Tensor> out;
    for (NamedTensor& t : result.tensor) out.push_back(std::move(t.tensor));
    return out;
  }

  std::unique_ptr<InProcessCluster> cluster_;
  std::unique_ptr<Master> master_;
};

TEST_F(MasterTest, AStepAcrossTasksFetchesTheSameTensorTwice) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "v", DT_FLOAT, {});
  ops::Assign(root.WithOpName("init"), v, 2.0f);
  auto read = ops::ReadVariable(root.WithOpName("read"), v);
  ops::Mul(root.WithOpName("twice").WithDevice("/job:worker/task:0"), read, 2.0f);
  auto session = CreateSession(*root.ToGraphDef());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE(Run(*session, {}, {"init"}).ok());
  auto out = Run(*session, {"twice:0", "read:0", "twice:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].scalar<float>(), 4.0f);
  EXPECT_EQ((*out)[1].scalar<float>(), 2.0f);
  EXPECT_EQ((*out)[2].scalar<float>(), 4.0f);
}

// The error of the task that failed is reported, named by its task, not the cancellations
// it caused on the other task (whose partition waited for the failed one's tensor).
TEST_F(MasterTest, APartitionErrorWinsOverTheCancellationsItCauses) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "never_set", DT_FLOAT, {});
  auto read = ops::ReadVariable(root.WithOpName("read"), v);
  ops::Mul(root.WithOpName("twice").WithDevice("/job:worker/task:0"), read, 2.0f);
  auto session = CreateSession(*root.ToGraphDef());
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = Run(*session, {"twice:0"});
  EXPECT_TRUE(IsFailedPrecondition(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("From /job:ps/replica:0/task:0: "));
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("Attempting to use uninitialized value never_set"));
  // The failed step left nothing behind on either task.
  EXPECT_EQ(cluster_->worker(kPs)->ActiveSteps(), 0u);
  EXPECT_EQ(cluster_->worker(kWorker)->ActiveSteps(), 0u);
}

// Closing a session cancels its running step on every task.
TEST_F(MasterTest, CloseDuringAStepCancelsIt) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_FLOAT}, {.shared_name = "q"});
  ops::QueueDequeue(root.WithOpName("take"), q);
  auto session = CreateSession(*root.ToGraphDef());
  ASSERT_TRUE(session.ok()) << session.status();
  RunStepArgs args;
  args.proto.set_session_handle(*session);
  args.proto.add_fetch("take:0");
  RunStepResult result;
  Pending step;
  master_->RunStepAsync(&args, &result, nullptr, step.Callback());
  // The step is under way once the ps worker holds it (bounded wait on that condition).
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (cluster_->worker(kPs)->ActiveSteps() == 0 && !step.done.HasBeenNotified() &&
         absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  proto::CloseSessionRequest close;
  close.set_session_handle(*session);
  ASSERT_TRUE(master_->CloseSession(close).ok());
  Status s = step.Wait();
  EXPECT_TRUE(IsCancelled(s) || IsAborted(s)) << s;
  EXPECT_TRUE(IsAborted(Run(*session, {"take:0"}).status()));  // the session is gone
}

// A client that gives up (its call's cancellation) ends its step on every task, instead of
// leaving it waiting on the queue until the session closes.
TEST_F(MasterTest, AClientThatGivesUpEndsItsStepEverywhere) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_FLOAT}, {.shared_name = "q"});
  ops::QueueDequeue(root.WithOpName("take"), q);
  auto session = CreateSession(*root.ToGraphDef());
  ASSERT_TRUE(session.ok()) << session.status();
  for (bool before_start : {false, true}) {
    RunStepArgs args;
    args.proto.set_session_handle(*session);
    args.proto.add_fetch("take:0");
    RunStepResult result;
    CancellationManager client;
    if (before_start) client.StartCancel();
    Pending step;
    master_->RunStepAsync(&args, &result, &client, step.Callback());
    client.StartCancel();
    Status s = step.Wait();
    EXPECT_TRUE(IsCancelled(s)) << s;
    EXPECT_EQ(s.message(), "Step was cancelled by the client");
    EXPECT_EQ(cluster_->worker(kPs)->ActiveSteps(), 0u);
    EXPECT_EQ(cluster_->worker(kWorker)->ActiveSteps(), 0u);
  }
}

// A step's timeout cancels it on every task, and the step ends with DeadlineExceeded.
TEST_F(MasterTest, AStepTimeoutCancelsItOnEveryTask) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_FLOAT}, {.shared_name = "q"});
  ops::QueueDequeue(root.WithOpName("take"), q);
  auto session = CreateSession(*root.ToGraphDef());
  ASSERT_TRUE(session.ok()) << session.status();
  RunStepArgs args;
  args.proto.set_session_handle(*session);
  args.proto.add_fetch("take:0");
  args.proto.set_timeout_ms(50);
  RunStepResult result;
  Pending step;
  master_->RunStepAsync(&args, &result, nullptr, step.Callback());
  Status s = step.Wait();
  EXPECT_TRUE(IsDeadlineExceeded(s)) << s;
  EXPECT_EQ(cluster_->worker(kPs)->ActiveSteps(), 0u);
}

// A task that neither finishes its partition nor hears the cancellation (stuck, or cut off)
// is given up on after the master's grace: the step still ends, with its own error.
TEST_F(MasterTest, AStepEndsAfterTheGraceWhenATaskDoesNotConfirmItsCancellation) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_FLOAT}, {.shared_name = "q"});
  ops::QueueSize(root.WithOpName("size"), q);
  ops::QueueDequeue(root.WithOpName("take"), q);
  auto session = CreateSession(*root.ToGraphDef());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE(Run(*session, {"size:0"}).ok());  // registers the queue's partition
  RunStepArgs args;
  args.proto.set_session_handle(*session);
  args.proto.add_fetch("take:0");
  args.proto.set_timeout_ms(50);
  ASSERT_TRUE(master_->IsPrepared(args) == false);
  // Register the step's partitions while the task is up, then let it hang.
  {
    RunStepArgs warm = args;
    warm.proto.set_timeout_ms(1);
    RunStepResult ignored;
    Pending step;
    master_->RunStepAsync(&warm, &ignored, nullptr, step.Callback());
    EXPECT_TRUE(IsDeadlineExceeded(step.Wait()));
  }
  cluster_->SetState(kPs, InProcessCluster::TaskState::kHung);
  RunStepResult result;
  Pending step;
  master_->RunStepAsync(&args, &result, nullptr, step.Callback());
  Status s = step.Wait();
  EXPECT_TRUE(IsDeadlineExceeded(s)) << s;
  cluster_->SetState(kPs, InProcessCluster::TaskState::kUp);
}

// CreateSession while a task is down: it waits without a thread, and ends at the deadline
// naming the task, when the client cancels, or when the master stops; a task that comes
// back in time ends the wait with a session.
TEST_F(MasterTest, CreateSessionWaitsForATaskThatIsDown) {
  cluster_->SetDown(kPs, true);
  master_ = cluster_->NewMaster(kWorker, {.wait_for_cluster = absl::Milliseconds(200)});
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("c"), Tensor::Scalar<float>(1));
  proto::CreateSessionRequest request;
  *request.mutable_graph_def() = *root.ToGraphDef();

  // The deadline.
  proto::CreateSessionResponse response;
  Pending timed_out;
  master_->CreateSessionAsync(&request, &response, nullptr, timed_out.Callback());
  Status s = timed_out.Wait();
  EXPECT_TRUE(IsUnavailable(s)) << s;
  EXPECT_EQ(s.message(), "CreateSession gave up after 200ms waiting for " + kPs);
  EXPECT_GE(cluster_->lookups(kPs), 2);  // asked again after the first refusal

  // The client's cancellation, long before the deadline. 50 waits at once hold no thread.
  request.set_wait_for_cluster_ms(600'000);
  CancellationManager cm;
  constexpr int kClients = 50;
  std::vector<proto::CreateSessionResponse> responses(kClients);
  std::vector<Pending> waits(kClients);
  for (int i = 0; i < kClients; ++i) {
    master_->CreateSessionAsync(&request, &responses[i], &cm, waits[i].Callback());
  }
  EXPECT_EQ(master_->PendingCreates(), static_cast<size_t>(kClients));
  cm.StartCancel();
  for (Pending& w : waits) {
    Status c = w.Wait();
    EXPECT_TRUE(IsCancelled(c)) << c;
    EXPECT_EQ(c.message(), "CreateSession was cancelled by the client");
  }
  EXPECT_EQ(master_->PendingCreates(), 0u);

  // The task comes back while a session waits for it.
  Pending back;
  master_->CreateSessionAsync(&request, &response, nullptr, back.Callback());
  cluster_->SetDown(kPs, false);
  ASSERT_TRUE(back.Wait().ok()) << back.status;
  EXPECT_FALSE(response.session_handle().empty());

  // The master stops.
  cluster_->SetDown(kPs, true);
  Pending stopped;
  master_->CreateSessionAsync(&request, &response, nullptr, stopped.Callback());
  master_->Stop();
  ASSERT_TRUE(stopped.done.HasBeenNotified());  // Stop returns after the wait has ended
  EXPECT_TRUE(IsCancelled(stopped.status)) << stopped.status;
  EXPECT_EQ(stopped.status.message(), "CreateSession: the server is stopping");
  Pending after;
  master_->CreateSessionAsync(&request, &response, nullptr, after.Callback());
  EXPECT_TRUE(IsCancelled(after.Wait()));
}

// A client already gone when its CreateSession arrives is answered at once.
TEST_F(MasterTest, CreateSessionOfAClientAlreadyGoneEndsAtOnce) {
  cluster_->SetDown(kPs, true);
  proto::CreateSessionRequest request;
  proto::CreateSessionResponse response;
  CancellationManager cm;
  cm.StartCancel();
  Pending call;
  master_->CreateSessionAsync(&request, &response, &cm, call.Callback());
  ASSERT_TRUE(call.done.HasBeenNotified());
  EXPECT_TRUE(IsCancelled(call.status)) << call.status;
  EXPECT_EQ(master_->PendingCreates(), 0u);
}

TEST_F(MasterTest, CreateSessionWithABadGraphIsInvalidArgument) {
  proto::CreateSessionRequest request;
  proto::NodeDef* node = request.mutable_graph_def()->add_node();
  node->set_name("x");
  node->set_op("NoSuchOp");
  proto::CreateSessionResponse response;
  Pending call;
  master_->CreateSessionAsync(&request, &response, nullptr, call.Callback());
  Status s = call.Wait();
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("NoSuchOp"));
}

// TensorFlow's master answers a handle it does not know with Aborted for CloseSession (and
// RunStep) but InvalidArgument for ListDevices; closing again a session it closed is fine.
TEST_F(MasterTest, UnknownSessionHandlesAnswerAsTensorFlowsMaster) {
  const std::string not_found =
      "Session never-issued is not found. Possibly, this master has "
      "restarted.";
  proto::CloseSessionRequest close;
  close.set_session_handle("never-issued");
  Status s = master_->CloseSession(close);
  EXPECT_TRUE(IsAborted(s)) << s;
  EXPECT_EQ(s.message(), not_found);

  proto::ListDevicesRequest list;
  list.set_session_handle("never-issued");
  proto::ListDevicesResponse devices;
  s = master_->ListDevices(list, &devices);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_EQ(s.message(), not_found);

  Scope root = Scope::NewRootScope();
  ops::NoOp(root.WithOpName("nothing"));
  auto session = CreateSession(*root.ToGraphDef());
  ASSERT_TRUE(session.ok()) << session.status();
  list.set_session_handle(*session);
  ASSERT_TRUE(master_->ListDevices(list, &devices).ok());
  EXPECT_EQ(devices.device_size(), 2);
  close.set_session_handle(*session);
  EXPECT_TRUE(master_->CloseSession(close).ok());
  EXPECT_TRUE(master_->CloseSession(close).ok());  // again: this master issued it
  EXPECT_TRUE(IsAborted(Run(*session, {}, {"nothing"}).status()));
  // A session closed by Reset may be closed by its client afterwards.
  auto other = CreateSession(*root.ToGraphDef());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(master_->Reset(proto::ResetRequest()).ok());
  close.set_session_handle(*other);
  EXPECT_TRUE(master_->CloseSession(close).ok());
}

// An error quotes at most a bounded prefix of what the request sent: a 1 MB handle quoted
// whole would not fit the reply's metadata (tests/integration/hostile_client_test.cc).
TEST_F(MasterTest, AnUnknownHugeHandleIsQuotedByItsPrefix) {
  const std::string huge(1 << 20, 'h');
  proto::ListDevicesRequest list;
  list.set_session_handle(huge);
  proto::ListDevicesResponse devices;
  Status s = master_->ListDevices(list, &devices);
  EXPECT_TRUE(IsInvalidArgument(s)) << s.code();
  EXPECT_LT(s.message().size(), 300u);
  EXPECT_THAT(std::string(s.message()), HasSubstr("hhhh... (1048576 bytes) is not found"));
  proto::CloseSessionRequest close;
  close.set_session_handle(huge);
  s = master_->CloseSession(close);
  EXPECT_TRUE(IsAborted(s));
  EXPECT_LT(s.message().size(), 300u);
  EXPECT_TRUE(IsAborted(Run(huge, {"x:0"}).status()));
  EXPECT_LT(Run(huge, {"x:0"}).status().message().size(), 300u);
}

// Reset with no containers clears each task's default container only, as TensorFlow's
// DeviceMgr::ClearContainers does; a container no task has is no error and clears nothing.
TEST_F(MasterTest, ResetClearsTheDefaultContainerOnlyUnlessContainersAreNamed) {
  Scope root = Scope::NewRootScope();
  auto plain = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "plain", DT_FLOAT, {});
  auto kept = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "kept", DT_FLOAT, {},
                                {.container = "experiment"});
  ops::Assign(root.WithOpName("init_plain"), plain, 1.0f);
  ops::Assign(root.WithOpName("init_kept"), kept, 2.0f);
  auto init = [&] {
    auto session = CreateSession(*root.ToGraphDef());
    ASSERT_TRUE(session.ok()) << session.status();
    ASSERT_TRUE(Run(*session, {}, {"init_plain", "init_kept"}).ok());
  };
  auto containers = [&] {
    std::set<std::string> held;
    cluster_->device(kPs)->resource_manager()->ForEach(
        [&](const std::string& container, const std::string&, const ResourceBase&) {
          held.insert(container);
        });
    return held;
  };
  const std::string default_container =
      cluster_->device(kPs)->resource_manager()->default_container();
  ASSERT_NO_FATAL_FAILURE(init());
  ASSERT_EQ(containers(), (std::set<std::string>{default_container, "experiment"}));

  proto::ResetRequest unknown;
  unknown.add_container("no_such_container");
  EXPECT_TRUE(master_->Reset(unknown).ok());
  EXPECT_EQ(containers(), (std::set<std::string>{default_container, "experiment"}));
  EXPECT_EQ(master_->NumSessions(), 0u);  // the sessions are closed all the same

  EXPECT_TRUE(master_->Reset(proto::ResetRequest()).ok());
  EXPECT_EQ(containers(), std::set<std::string>{"experiment"});

  ASSERT_NO_FATAL_FAILURE(init());
  proto::ResetRequest named;
  named.add_container("experiment");
  EXPECT_TRUE(master_->Reset(named).ok());
  EXPECT_EQ(containers(), std::set<std::string>{default_container});
}

}  // namespace
}  // namespace tw
