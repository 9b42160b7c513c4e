// Workers of two tasks in one process, driven the way a master drives them: register the
// partitions of a step, run them in parallel, collect the fetches from RunGraph replies,
// pull cross-task tensors with RecvTensor, and clean up.
#include "src/distributed/worker.h"

#include <atomic>
#include <map>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/distributed/client_terminated.h"
#include "src/framework/attr_value.h"
#include "src/framework/rendezvous.h"
#include "src/graph/graph.h"
#include "src/graph/partition.h"
#include "src/graph/placer.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/device_name.h"
#include "tensorweave/ops.h"
#include "testing/in_process_cluster.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

const std::string kPs = "/job:ps/replica:0/task:0/device:CPU:0";
const std::string kWorker = "/job:worker/replica:0/task:0/device:CPU:0";

// Calls an async worker method and waits for it.
template <typename Method, typename... Args>
Status Call(Method method, Args... args) {
  absl::Notification done;
  Status result;
  method(args..., [&](const Status& s) {
    result = s;
    done.Notify();
  });
  done.WaitForNotification();
  return result;
}

class TwoTaskTest : public ::testing::Test {
 protected:
  TwoTaskTest()
      : cluster_(*testing::InProcessCluster::Create(
            {DeviceName::TaskOf(kPs), DeviceName::TaskOf(kWorker)})) {
    for (const std::string& name : {kPs, kWorker}) {
      devices_[name] = cluster_->device(DeviceName::TaskOf(name));
      workers_[name] = cluster_->worker(DeviceName::TaskOf(name));
    }
  }
  // How many times the workers looked a peer up (once per RecvTensor call they make).
  int Lookups() {
    return cluster_->lookups(DeviceName::TaskOf(kPs)) +
           cluster_->lookups(DeviceName::TaskOf(kWorker));
  }

  // Plans and runs one step like a master whose own task is the worker task. `cleanup`:
  // send CleanupGraph to every task afterwards (a master does only after a failed step).
  StatusOr<std::vector<Tensor>> RunStep(const proto::GraphDef& graph,
                                        const std::vector<std::pair<std::string, Tensor>>& feeds,
                                        const std::vector<std::string>& fetches,
                                        const std::vector<std::string>& targets,
                                        bool cleanup = true) {
    std::vector<std::string> feed_names;
    for (const auto& f : feeds) feed_names.push_back(f.first);
    TW_ASSIGN_OR_RETURN(proto::GraphDef step, PruneForStep(graph, feed_names, fetches, targets));
    TW_RETURN_IF_ERROR(PlaceGraph({kPs, kWorker}, kWorker, &step));
    auto incarnation = [this](const std::string& d) { return devices_.at(d)->incarnation(); };
    TW_ASSIGN_OR_RETURN(ClientTerminatedKeys keys,
                        MakeClientTerminated(feed_names, fetches, kWorker, incarnation, &step));
    TW_ASSIGN_OR_RETURN(auto parts, PartitionGraph(step, {.incarnation = incarnation}));

    const int64_t step_id = next_step_++;
    std::map<std::string, RunGraphArgs> requests;
    for (auto& [device, part] : parts) {
      proto::RegisterGraphRequest reg;
      reg.set_session_handle("s1");
      *reg.mutable_graph_def() = part;
      proto::RegisterGraphResponse handle;
      TW_RETURN_IF_ERROR(Call(
          [target = workers_[device]](auto* req, auto* resp, auto done) {
            target->RegisterGraphAsync(req, resp, done);
          },
          &reg, &handle));
      requests[device].proto.set_graph_handle(handle.graph_handle());
      requests[device].proto.set_session_handle("s1");
      requests[device].proto.set_step_id(step_id);
    }
    for (size_t i = 0; i < feeds.size(); ++i) {
      requests[keys.feed_devices[i]].send.push_back({keys.feed_keys[i], feeds[i].second});
    }
    for (size_t i = 0; i < fetches.size(); ++i) {
      requests[keys.fetch_devices[i]].proto.add_recv_key(keys.fetch_keys[i]);
    }
    // All partitions at once: they wait on each other through RecvTensor.
    std::map<std::string, RunGraphResult> responses;
    std::map<std::string, Status> statuses;
    absl::Mutex mu;
    int pending = static_cast<int>(requests.size());
    for (auto& [device, request] : requests) {
      workers_[device]->RunGraphAsync(&request, &responses[device], nullptr,
                                      [&, device = device](const Status& s) {
                                        absl::MutexLock lock(&mu);
                                        statuses[device] = s;
                                        --pending;
                                      });
    }
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(
          +[](int* p) { return *p == 0; }, &pending));
    }
    for (auto& [device, worker] : workers_) {
      if (!cleanup) break;
      proto::CleanupGraphRequest request;
      request.set_step_id(step_id);
      proto::CleanupGraphResponse ignored;
      (void)Call([target = worker](auto* req, auto* resp,
                                   auto done) { target->CleanupGraphAsync(req, resp, done); },
                 &request, &ignored);
    }
    for (auto& [device, s] : statuses) {
      if (!s.ok() && !IsCancelled(s) && !IsAborted(s)) return s;
    }
    for (auto& [device, s] : statuses) TW_RETURN_IF_ERROR(s);
    std::vector<Tensor> out;
    for (size_t i = 0; i < fetches.size(); ++i) {
      for (const NamedTensor& r : responses[keys.fetch_devices[i]].recv) {
        if (r.name == keys.fetch_keys[i]) out.push_back(r.tensor);
      }
    }
    return out;
  }

  // The part of `graph` that runs `targets`, all of it on the ps task.
  proto::GraphDef PsPartition(const proto::GraphDef& graph,
                              const std::vector<std::string>& targets) {
    auto pruned = PruneForStep(graph, {}, {}, targets);
    EXPECT_TRUE(pruned.ok()) << pruned.status();
    if (!pruned.ok()) return {};
    EXPECT_TRUE(PlaceGraph({kPs}, kPs, &*pruned).ok());
    return *std::move(pruned);
  }

  // Registers `partition` with the ps task's worker; returns the graph handle.
  std::string RegisterWithPs(const proto::GraphDef& partition) {
    proto::RegisterGraphRequest reg;
    reg.set_session_handle("s1");
    *reg.mutable_graph_def() = partition;
    proto::RegisterGraphResponse handle;
    EXPECT_TRUE(Call([this](auto* req, auto* resp,
                            auto done) { workers_[kPs]->RegisterGraphAsync(req, resp, done); },
                     &reg, &handle)
                    .ok());
    return handle.graph_handle();
  }

  std::string RegisterOnPs(const proto::GraphDef& graph, const std::vector<std::string>& targets) {
    return RegisterWithPs(PsPartition(graph, targets));
  }

  // A call that completes later: its status, and a notification when it has.
  struct Pending {
    absl::Notification done;
    Status status;
    WorkerInterface::StatusCallback Callback() {
      return [this](const Status& s) {
        status = s;
        done.Notify();
      };
    }
  };

  Status CleanupOnPs(int64_t step_id) {
    proto::CleanupGraphRequest cleanup;
    cleanup.set_step_id(step_id);
    proto::CleanupGraphResponse ignored;
    return Call([this](auto* req, auto* resp,
                       auto done) { workers_[kPs]->CleanupGraphAsync(req, resp, done); },
                &cleanup, &ignored);
  }

  std::unique_ptr<testing::InProcessCluster> cluster_;
  std::map<std::string, CpuDevice*> devices_;  // by device name, owned by cluster_
  std::map<std::string, Worker*> workers_;
  int64_t next_step_ = 1;
};

TEST_F(TwoTaskTest, VariableOnPsFedAndFetchedAcrossTasks) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "total", DT_INT64, {});
  auto init = ops::Assign(root.WithOpName("init"), v, int64_t{0});
  auto x = ops::Placeholder(root.WithOpName("x"), DT_INT64);
  auto doubled = ops::Add(root.WithOpName("doubled"), x, x);
  auto add = ops::AssignAdd(root.WithOpName("add"), v, doubled);
  auto read = ops::ReadVariable(root.WithOpName("read"), v);
  auto local_copy = ops::Identity(root.WithOpName("local_copy"), read);
  proto::GraphDef graph = *root.ToGraphDef();
  auto init_status = RunStep(graph, {}, {}, {"init"});
  ASSERT_TRUE(init_status.ok()) << init_status.status();
  for (int i = 1; i <= 3; ++i) {
    auto out = RunStep(graph, {{"x:0", Tensor::Scalar<int64_t>(i)}}, {"add:0"}, {});
    ASSERT_TRUE(out.ok()) << out.status();
  }
  // "read" is fetched from the ps task's reply; "local_copy" crosses to the worker first.
  auto out = RunStep(graph, {}, {"read:0", "local_copy:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 12);
  EXPECT_EQ((*out)[1].scalar<int64_t>(), 12);
  EXPECT_EQ(devices_[kPs]->resource_manager()->size(), 1u);
  EXPECT_EQ(devices_[kWorker]->resource_manager()->size(), 0u);
}

// Weights to the worker and gradients to the ps cross in one RecvTensor call (the ps pushes
// the weights with its pull of the gradients), and a value read after the update crosses
// on its own (src/graph/partition.h): the step ends, with the values of one ordinary step,
// after two RecvTensor calls.
TEST_F(TwoTaskTest, PrefetchedTensorsAndAValueReadAfterTheUpdateCrossInOneStep) {
  Scope root = Scope::NewRootScope();
  auto w = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "w", DT_FLOAT, {});
  auto b = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "b", DT_FLOAT, {});
  auto init_w = ops::Assign(root.WithOpName("init_w"), w, 3.0f);
  auto init_b = ops::Assign(root.WithOpName("init_b"), b, 4.0f);
  auto read_w = ops::ReadVariable(root.WithOpName("read_w"), w);
  auto read_b = ops::ReadVariable(root.WithOpName("read_b"), b);
  auto grad_w = ops::Mul(root.WithOpName("grad_w"), read_w, read_b);  // on the worker
  auto grad_b = ops::Add(root.WithOpName("grad_b"), read_w, read_b);
  auto update_w = ops::AssignAdd(root.WithOpName("update_w"), w, grad_w);
  auto update_b = ops::AssignAdd(root.WithOpName("update_b"), b, grad_b);
  auto updated =
      ops::ReadVariable(root.WithOpName("updated").WithControlDependencies({update_w.op()}), w);
  ops::Identity(root.WithOpName("seen"), updated);
  const proto::GraphDef graph = *root.ToGraphDef();
  ASSERT_TRUE(RunStep(graph, {}, {}, {"init_w", "init_b"}).ok());
  const int lookups_before = Lookups();
  auto out = RunStep(graph, {}, {"seen:0"}, {"update_b"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 3.0f + 12.0f);
  EXPECT_EQ(Lookups() - lookups_before, 2);
  auto after = RunStep(graph, {}, {"read_w:0", "read_b:0"}, {});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)[0].scalar<float>(), 15.0f);
  EXPECT_EQ((*after)[1].scalar<float>(), 4.0f + 7.0f);
  // Without CleanupGraph (as after any successful step), both tasks forget the step: the
  // partitions ran and every tensor pulled or pushed was taken.
  ASSERT_TRUE(RunStep(graph, {}, {"seen:0"}, {"update_b"}, /*cleanup=*/false).ok());
  EXPECT_EQ(workers_[kPs]->ActiveSteps(), 0u);
  EXPECT_EQ(workers_[kWorker]->ActiveSteps(), 0u);
}

// Adds to `graph` (on the ps task) a _Send of `input` to the worker task.
void AddSendToWorker(proto::GraphDef* graph, const std::string& input, DataType type,
                     const std::string& tensor_name, uint64_t incarnation) {
  proto::NodeDef* send = graph->add_node();
  send->set_name(tensor_name + "/send");
  send->set_op("_Send");
  send->set_device(kPs);
  send->add_input(input);
  auto& attr = *send->mutable_attr();
  attr["T"] = MakeAttr(type);
  attr["tensor_name"] = MakeAttr(tensor_name);
  attr["send_device"] = MakeAttr(kPs);
  attr["send_device_incarnation"] = MakeAttr(static_cast<int64_t>(incarnation));
  attr["recv_device"] = MakeAttr(kWorker);
}

// A registration is a request from the network: attributes a _Send or _Recv needs are
// checked before they are read, and a missing one is InvalidArgument naming it.
TEST_F(TwoTaskTest, RegisterGraphWithASendMissingAttributesIsInvalidArgument) {
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("one").WithDevice("/job:ps/task:0"), Tensor::Scalar<float>(1));
  proto::GraphDef part = PsPartition(*root.ToGraphDef(), {"one"});
  AddSendToWorker(&part, "one", DT_FLOAT, "first", devices_[kPs]->incarnation());
  for (const char* attr : {"send_device_incarnation", "send_device", "tensor_name"}) {
    proto::RegisterGraphRequest reg;
    *reg.mutable_graph_def() = part;
    reg.mutable_graph_def()->mutable_node()->rbegin()->mutable_attr()->erase(attr);
    proto::RegisterGraphResponse handle;
    Status s = Call([this](auto* req, auto* resp,
                           auto done) { workers_[kPs]->RegisterGraphAsync(req, resp, done); },
                    &reg, &handle);
    EXPECT_TRUE(IsInvalidArgument(s)) << attr << ": " << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("is missing attribute \"" + std::string(attr) + "\""));
  }
}

// A RecvTensor for a step that never runs here, abandoned by its caller, leaves nothing
// behind: not the step's rendezvous, not the tensors it pushed. One that another call still
// waits on keeps the step for that call.
TEST_F(TwoTaskTest, AbandonedRecvTensorsLeaveNoStepBehind) {
  const uint64_t incarnation = devices_[kPs]->incarnation();
  constexpr int kCalls = 50;
  for (int i = 0; i < kCalls; ++i) {
    RecvTensorArgs recv;
    recv.proto.set_step_id(1000 + i);
    recv.proto.add_rendezvous_key(RendezvousKey(kPs, incarnation, kWorker, "never"));
    recv.push.push_back({RendezvousKey(kWorker, 1, kPs, "pushed"), Tensor::Scalar<float>(1)});
    RecvTensorResult got;
    CancellationManager cm;
    Pending call;
    workers_[kPs]->RecvTensorAsync(&recv, &got, &cm, call.Callback());
    EXPECT_EQ(workers_[kPs]->ActiveSteps(), 1u);
    cm.StartCancel();
    call.done.WaitForNotification();
    EXPECT_TRUE(IsCancelled(call.status)) << call.status;
  }
  EXPECT_EQ(workers_[kPs]->ActiveSteps(), 0u);

  // Two calls on one step: the one that gives up leaves the step to the other, which still
  // gets its tensor when the partition runs.
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("one").WithDevice("/job:ps/task:0"), Tensor::Scalar<float>(1));
  proto::GraphDef part = PsPartition(*root.ToGraphDef(), {"one"});
  AddSendToWorker(&part, "one", DT_FLOAT, "first", incarnation);
  RecvTensorArgs patient, impatient;
  patient.proto.set_step_id(2000);
  patient.proto.add_rendezvous_key(RendezvousKey(kPs, incarnation, kWorker, "first"));
  impatient.proto.set_step_id(2000);
  impatient.proto.add_rendezvous_key(RendezvousKey(kPs, incarnation, kWorker, "second"));
  RecvTensorResult patient_got, impatient_got;
  CancellationManager impatient_cm;
  Pending patient_call, impatient_call;
  workers_[kPs]->RecvTensorAsync(&patient, &patient_got, nullptr, patient_call.Callback());
  workers_[kPs]->RecvTensorAsync(&impatient, &impatient_got, &impatient_cm,
                                 impatient_call.Callback());
  impatient_cm.StartCancel();
  impatient_call.done.WaitForNotification();
  EXPECT_EQ(workers_[kPs]->ActiveSteps(), 1u);
  RunGraphArgs run;
  run.proto.set_graph_handle(RegisterWithPs(part));
  run.proto.set_step_id(2000);
  RunGraphResult ran;
  Pending partition;
  workers_[kPs]->RunGraphAsync(&run, &ran, nullptr, partition.Callback());
  partition.done.WaitForNotification();
  patient_call.done.WaitForNotification();
  ASSERT_TRUE(patient_call.status.ok()) << patient_call.status;
  EXPECT_EQ(patient_got.tensor[0].tensor, Tensor::Scalar<float>(1));
  EXPECT_EQ(workers_[kPs]->ActiveSteps(), 0u);
}

// A partition that sends nothing to peers forgets its step when it ends, well or with a
// refused feed: a RecvTensor still waiting on that step (for a key nothing produces) must
// end then, since a later CleanupGraph no longer finds the step. Found by
// worker_service_fuzz: the call waited for ever.
TEST_F(TwoTaskTest, ReceivesWaitingOnAStepItsPartitionForgotEnd) {
  const uint64_t incarnation = devices_[kPs]->incarnation();
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("one").WithDevice("/job:ps/task:0"), Tensor::Scalar<float>(1));
  const std::string handle = RegisterOnPs(*root.ToGraphDef(), {"one"});
  for (bool bad_feed : {false, true}) {
    SCOPED_TRACE(bad_feed ? "refused feed" : "partition ran");
    const int64_t step_id = bad_feed ? 3000 : 3001;
    RecvTensorArgs recv;
    recv.proto.set_step_id(step_id);
    recv.proto.add_rendezvous_key(RendezvousKey(kPs, incarnation, kWorker, "never"));
    RecvTensorResult got;
    Pending waiting;
    workers_[kPs]->RecvTensorAsync(&recv, &got, nullptr, waiting.Callback());

    RunGraphArgs run;
    run.proto.set_graph_handle(handle);
    run.proto.set_step_id(step_id);
    if (bad_feed) {  // the same key twice: the second is refused
      const std::string key = RendezvousKey(kWorker, 0, kPs, "fed");
      run.send.push_back({key, Tensor::Scalar<float>(1)});
      run.send.push_back({key, Tensor::Scalar<float>(2)});
    }
    RunGraphResult ran;
    Pending partition;
    workers_[kPs]->RunGraphAsync(&run, &ran, nullptr, partition.Callback());
    ASSERT_TRUE(partition.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_EQ(IsInvalidArgument(partition.status), bad_feed) << partition.status;
    ASSERT_TRUE(CleanupOnPs(step_id).ok());

    ASSERT_TRUE(waiting.done.WaitForNotificationWithTimeout(absl::Seconds(10)))
        << "RecvTensor of step " << step_id << " never ended";
    EXPECT_TRUE(IsCancelled(waiting.status)) << waiting.status;
    EXPECT_THAT(std::string(waiting.status.message()), HasSubstr("has ended"));
    EXPECT_EQ(workers_[kPs]->ActiveSteps(), 0u);
  }
}

// One RecvTensor call for several tensors answers when the last of them is there, with
// each in the order asked.
TEST_F(TwoTaskTest, RecvTensorOfSeveralKeysAnswersWhenAllAreThere) {
  const uint64_t incarnation = devices_[kPs]->incarnation();
  // The ps partition sends "first" at once and "second" once the queue has an element.
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_INT32}, {.shared_name = "g"});
  ops::QueueDequeue(root.WithOpName("take"), q);
  ops::Const(root.WithOpName("one"), Tensor::Scalar<float>(1));
  ops::QueueEnqueue(root.WithOpName("put"), q, {2});
  const proto::GraphDef graph = *root.ToGraphDef();
  proto::GraphDef part = PsPartition(graph, {"take", "one"});
  AddSendToWorker(&part, "one", DT_FLOAT, "first", incarnation);
  AddSendToWorker(&part, "take", DT_INT32, "second", incarnation);
  RunGraphArgs run;
  run.proto.set_graph_handle(RegisterWithPs(part));
  run.proto.set_step_id(300);
  RunGraphResult ran;
  Pending partition;
  workers_[kPs]->RunGraphAsync(&run, &ran, nullptr, partition.Callback());

  RecvTensorArgs recv;
  recv.proto.set_step_id(300);
  recv.proto.add_rendezvous_key(RendezvousKey(kPs, incarnation, kWorker, "second"));
  recv.proto.add_rendezvous_key(RendezvousKey(kPs, incarnation, kWorker, "first"));
  RecvTensorResult got;
  Pending answered;
  workers_[kPs]->RecvTensorAsync(&recv, &got, nullptr, answered.Callback());
  EXPECT_FALSE(answered.done.WaitForNotificationWithTimeout(absl::Milliseconds(100)))
      << "answered with one of two tensors: " << answered.status;
  ASSERT_TRUE(RunStep(graph, {}, {}, {"put"}).ok());
  ASSERT_TRUE(answered.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(answered.status.ok()) << answered.status;
  ASSERT_EQ(got.tensor.size(), 2u);
  EXPECT_EQ(got.tensor[0].tensor.scalar<int32_t>(), 2);
  EXPECT_EQ(got.tensor[1].tensor.scalar<float>(), 1.0f);
  ASSERT_TRUE(partition.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(partition.status.ok()) << partition.status;
}

// Values crossing both ways, each needed by the other side's answer (see
// PartitionTest.PrefetchNeverLetsTwoBatchesWaitForEachOther): the step completes.
TEST_F(TwoTaskTest, TensorsCrossingBothWaysDoNotWaitForEachOther) {
  Scope root = Scope::NewRootScope();
  auto ps = root.WithDevice("/job:ps/task:0");
  auto worker = root.WithDevice("/job:worker/task:0");
  auto a1 = ops::Const(ps.WithOpName("a1"), Tensor::Scalar<float>(1));
  auto b1 = ops::Const(worker.WithOpName("b1"), Tensor::Scalar<float>(2));
  auto a2 = ops::Identity(ps.WithOpName("a2"), b1);
  auto b2 = ops::Identity(worker.WithOpName("b2"), a1);
  ops::Identity(ps.WithOpName("h"), b2);
  ops::Identity(worker.WithOpName("k"), a2);
  auto out = RunStep(*root.ToGraphDef(), {}, {"h:0", "k:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 1.0f);
  EXPECT_EQ((*out)[1].scalar<float>(), 2.0f);
}

TEST_F(TwoTaskTest, ErrorOnOneTaskReachesTheOtherAndNamesTheNode) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "never_set", DT_FLOAT, {});
  auto read = ops::ReadVariable(root.WithOpName("read"), v);
  ops::Identity(root.WithOpName("copy"), read);  // waits for the ps task's tensor
  auto out = RunStep(*root.ToGraphDef(), {}, {"copy:0"}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsFailedPrecondition(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node read (ReadVariable)"));
}

TEST_F(TwoTaskTest, StaleHandlesAndIncarnationsAreAborted) {
  RunGraphArgs run;
  run.proto.set_graph_handle("00000000deadbeef");
  RunGraphResult ignored;
  Status s = Call([&](auto* req, auto* resp,
                      auto done) { workers_[kPs]->RunGraphAsync(req, resp, nullptr, done); },
                  &run, &ignored);
  EXPECT_TRUE(IsAborted(s));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("Possibly this worker (/job:ps/replica:0/task:0) just restarted"));

  RecvTensorArgs recv;
  recv.proto.set_step_id(1);
  recv.proto.add_rendezvous_key(
      RendezvousKey(kPs, devices_[kPs]->incarnation() + 1, kWorker, "edge_0_x"));
  RecvTensorResult tensor;
  s = Call([&](auto* req, auto* resp,
               auto done) { workers_[kPs]->RecvTensorAsync(req, resp, nullptr, done); },
           &recv, &tensor);
  EXPECT_TRUE(IsAborted(s));
  EXPECT_THAT(std::string(s.message()), HasSubstr("the task restarted"));
}

// Pushed tensors come from the network: anything but tensors another task sends to this
// one, each once, to a step that has not ended, is refused before it reaches the step.
TEST_F(TwoTaskTest, MalformedOrLatePushesAreRefused) {
  const uint64_t ps = devices_[kPs]->incarnation(), worker = devices_[kWorker]->incarnation();
  auto recv = [&](int64_t step, std::vector<NamedTensor> push) {
    RecvTensorArgs args;
    args.proto.set_step_id(step);
    args.proto.add_rendezvous_key(RendezvousKey(kWorker, worker, kPs, "asked"));
    args.push = std::move(push);
    RecvTensorResult ignored;
    return Call([&](auto* req, auto* resp,
                    auto done) { workers_[kWorker]->RecvTensorAsync(req, resp, nullptr, done); },
                &args, &ignored);
  };
  const Tensor one = Tensor::Scalar<float>(1);
  Status s = recv(5, {{"nonsense", one}});
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  s = recv(5, {{RendezvousKey(kPs, ps, kPs, "elsewhere"), one}});
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("not from another task to this task"));
  s = recv(5, {{RendezvousKey(kWorker, worker, kWorker, "own"), one}});
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  const std::string key = RendezvousKey(kPs, ps, kWorker, "twice");
  s = recv(5, {{key, one}, {key, one}});
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("twice"));
  EXPECT_EQ(workers_[kWorker]->ActiveSteps(), 0u);  // none of them reached a step

  proto::CleanupGraphRequest cleanup;
  cleanup.set_step_id(6);
  proto::CleanupGraphResponse ignored;
  ASSERT_TRUE(Call([this](auto* req, auto* resp,
                          auto done) { workers_[kWorker]->CleanupGraphAsync(req, resp, done); },
                   &cleanup, &ignored)
                  .ok());
  s = recv(6, {{RendezvousKey(kPs, ps, kWorker, "late"), one}});
  EXPECT_TRUE(IsCancelled(s)) << s;
}

TEST_F(TwoTaskTest, GetStatusAndCleanupAll) {
  proto::GetStatusRequest req;
  proto::GetStatusResponse status;
  ASSERT_TRUE(Call([&](auto* r, auto* p, auto done) { workers_[kPs]->GetStatusAsync(r, p, done); },
                   &req, &status)
                  .ok());
  ASSERT_EQ(status.device_size(), 1);
  EXPECT_EQ(status.device(0).name(), kPs);
  EXPECT_EQ(status.device(0).incarnation(), devices_[kPs]->incarnation());

  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "w", DT_FLOAT, {});
  ops::Assign(root.WithOpName("init"), v, 1.0f);
  ASSERT_TRUE(RunStep(*root.ToGraphDef(), {}, {}, {"init"}).ok());
  EXPECT_EQ(devices_[kPs]->resource_manager()->size(), 1u);
  proto::CleanupAllRequest all;
  proto::CleanupAllResponse done_all;
  ASSERT_TRUE(Call([&](auto* r, auto* p, auto done) { workers_[kPs]->CleanupAllAsync(r, p, done); },
                   &all, &done_all)
                  .ok());
  EXPECT_EQ(devices_[kPs]->resource_manager()->size(), 0u);
}

// A master cancels a step with CleanupGraph: the running partition stops before its
// RunGraph replies, and a RunGraph of that step arriving after the cleanup is refused. So a
// dequeue of a cancelled step can never take an element enqueued by a later step.
TEST_F(TwoTaskTest, CleanupGraphCancelsARunningPartitionAndRefusesALateOne) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_INT32}, {.shared_name = "q"});
  ops::QueueDequeue(root.WithOpName("take"), q);
  ops::QueueEnqueue(root.WithOpName("put"), q, {7});
  auto size = ops::QueueSize(root.WithOpName("size"), q);
  const proto::GraphDef graph = *root.ToGraphDef();
  const std::string take = RegisterOnPs(graph, {"take"});

  RunGraphArgs blocked;
  blocked.proto.set_graph_handle(take);
  blocked.proto.set_step_id(100);
  RunGraphResult blocked_result;
  Pending pending;
  workers_[kPs]->RunGraphAsync(&blocked, &blocked_result, nullptr, pending.Callback());
  EXPECT_FALSE(pending.done.WaitForNotificationWithTimeout(absl::Milliseconds(100)))
      << "the dequeue of an empty queue returned: " << pending.status;
  ASSERT_TRUE(CleanupOnPs(100).ok());
  ASSERT_TRUE(pending.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(IsCancelled(pending.status)) << pending.status;

  RunGraphArgs late = blocked;
  RunGraphResult late_result;
  Status s = Call([&](auto* req, auto* resp,
                      auto done) { workers_[kPs]->RunGraphAsync(req, resp, nullptr, done); },
                  &late, &late_result);
  EXPECT_TRUE(IsCancelled(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("step 100 was ended before"));

  // Nothing of the cancelled step waits on the queue any more: the element stays there.
  ASSERT_TRUE(RunStep(graph, {}, {}, {"put"}).ok());
  auto left = RunStep(graph, {}, {"size:0"}, {});
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ((*left)[0].scalar<int32_t>(), 1);
}

// The task enforces a step's timeout itself, without the master's cancellation.
TEST_F(TwoTaskTest, RunGraphTimeoutEndsTheStepOnTheTaskWithDeadlineExceeded) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithDevice("/job:ps/task:0"), {DT_INT32}, {.shared_name = "e"});
  ops::QueueDequeue(root.WithOpName("take"), q);
  RunGraphArgs run;
  run.proto.set_graph_handle(RegisterOnPs(*root.ToGraphDef(), {"take"}));
  run.proto.set_step_id(200);
  run.proto.set_timeout_ms(100);
  RunGraphResult result;
  Status s = Call([&](auto* req, auto* resp,
                      auto done) { workers_[kPs]->RunGraphAsync(req, resp, nullptr, done); },
                  &run, &result);
  EXPECT_TRUE(IsDeadlineExceeded(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("Timed out after 100 ms running step 200"));
}

}  // namespace
}  // namespace tw
