// Parameter-server training on an in-process cluster (ps and worker servers on loopback):
// asynchronous and synchronous replicas converge on a small linear problem, and the
// synchronous protocol (stale gradients dropped, backup workers) gives hand-computed values.
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/tensorweave.h"
#include "tensorweave/train/device_setter.h"
#include "tensorweave/train/monitored_session.h"
#include "tensorweave/train/sync_replicas.h"
#include "testing/ports.h"

namespace tw {
namespace {

using train::ModelVariables;

class TrainingTest : public ::testing::Test {
 protected:
  void StartCluster(int ps, int workers) {
    std::vector<std::string> ps_addresses, worker_addresses;
    for (int i = 0; i < ps; ++i) ps_addresses.push_back(Address());
    for (int i = 0; i < workers; ++i) worker_addresses.push_back(Address());
    ASSERT_TRUE(cluster_.AddJob("ps", ps_addresses).ok());
    ASSERT_TRUE(cluster_.AddJob("worker", worker_addresses).ok());
    for (const auto& [job, n] :
         std::vector<std::pair<std::string, int>>{{"ps", ps}, {"worker", workers}}) {
      for (int i = 0; i < n; ++i) {
        auto server = Server::Create(
            cluster_, job, i,
            {.bind_host = "127.0.0.1", .num_threads = 2, .wait_for_cluster = absl::Seconds(20)});
        ASSERT_TRUE(server.ok()) << server.status();
        ASSERT_TRUE((*server)->Start().ok());
        servers_[job + std::to_string(i)] = *std::move(server);
      }
    }
  }
  static std::string Address() { return "127.0.0.1:" + std::to_string(testing::PickUnusedPort()); }
  std::string WorkerTarget(int i) { return servers_["worker" + std::to_string(i)]->target(); }
  static std::string WorkerDevice(int i) { return "/job:worker/task:" + std::to_string(i); }

  ClusterSpec cluster_;
  std::map<std::string, std::unique_ptr<Server>> servers_;
};

// y = x . [1, -2, 3, 0.5] + 0.25 over 32 fixed examples. Every worker builds the same model
// with the replica device setter, so w and b land on different ps tasks.
struct LinearModel {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  ops::Variable w, b, step;
  Output loss, w_value, b_value;

  LinearModel(const ClusterSpec& cluster, const std::string& worker_device) {
    auto setter = train::ReplicaDeviceSetter(cluster, {.worker_device = worker_device});
    EXPECT_TRUE(setter.ok());
    const Scope model = root.WithDeviceFunction(*setter);
    step = train::CreateGlobalStep(model, &vars);
    w = vars.Add(model, "w", DT_FLOAT, {4, 1}, ops::Fill(model, {4, 1}, 0.0f));
    b = vars.Add(model, "b", DT_FLOAT, {}, 0.0f);
    std::vector<float> xs, ys;
    const float truth[4] = {1, -2, 3, 0.5f};
    for (int i = 0; i < 32; ++i) {
      float y = 0.25f;
      for (int j = 0; j < 4; ++j) {
        const float v = static_cast<float>((i * 7 + j * 3) % 11) / 5.0f - 1.0f;
        xs.push_back(v);
        y += v * truth[j];
      }
      ys.push_back(y);
    }
    w_value = ops::ReadVariable(model, w);
    b_value = ops::ReadVariable(model, b);
    const Output pred = ops::Add(
        model, ops::MatMul(model, Tensor::FromVector<float>(xs, TensorShape({32, 4})), w_value),
        b_value);
    loss = ops::Mean(
        model,
        ops::Square(model,
                    ops::Sub(model, pred, Tensor::FromVector<float>(ys, TensorShape({32, 1})))),
        {0, 1});
  }
};

void ExpectSolved(const std::vector<Tensor>& values) {
  const float truth[4] = {1, -2, 3, 0.5f};
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(values[0].flat<float>()[j], truth[j], 0.02) << j;
  EXPECT_NEAR(values[1].scalar<float>(), 0.25f, 0.02);
}

// Trains worker `i` of the cluster until the global step reaches `steps`.
void TrainWorker(const ClusterSpec& cluster, const std::string& target, int i, int64_t steps,
                 bool sync, std::vector<Tensor>* solution) {
  LinearModel m(cluster, "/job:worker/task:" + std::to_string(i));
  auto optimizer = train::GradientDescentOptimizer(0.1f);
  std::vector<std::unique_ptr<train::SessionRunHook>> hooks;
  hooks.push_back(train::StopAtStepHook(steps));
  Operation train_op;
  std::unique_ptr<train::SyncReplicas> replicas;
  if (sync) {
    auto grads = optimizer->ComputeGradients(m.root, m.loss, m.vars);
    ASSERT_TRUE(grads.ok()) << grads.status();
    auto made =
        train::SyncReplicas::Create(m.root, optimizer.get(), *grads, &m.vars, m.step,
                                    {.replicas_to_aggregate = 2,
                                     .total_num_replicas = 2,
                                     .worker_device = "/job:worker/task:" + std::to_string(i)});
    ASSERT_TRUE(made.ok()) << made.status();
    replicas = std::move(*made);
    train_op = replicas->train_op();
    hooks.push_back(replicas->MakeHook(i == 0, {.target = target}));
  } else {
    auto op = optimizer->Minimize(m.root, m.loss, &m.vars, m.step);
    ASSERT_TRUE(op.ok()) << op.status();
    train_op = *op;
  }
  auto session = train::MonitoredTrainingSession::Create(
      {.scope = m.root, .variables = &m.vars, .global_step = m.step},
      {.target = target, .is_chief = i == 0, .wait_for_model_timeout = absl::Seconds(30)},
      std::move(hooks));
  ASSERT_TRUE(session.ok()) << session.status();
  int64_t local = 0;
  while (!(*session)->ShouldStop() && local < 10 * steps) {
    auto out = (*session)->Run({}, {}, {train_op});
    if (sync && IsOutOfRange(out.status())) break;  // the chief closed the token queue
    ASSERT_TRUE(out.ok()) << out.status();
    ++local;
  }
  EXPECT_TRUE((*session)->ShouldStop() || sync);
  if (i == 0) {
    auto values = (*session)->raw_session()->Run({}, {m.w_value, m.b_value, m.loss});
    ASSERT_TRUE(values.ok()) << values.status();
    *solution = *values;
    if (replicas) replicas->Stop();
  }
  EXPECT_TRUE((*session)->Close().ok());
}

TEST_F(TrainingTest, TwoPsTwoWorkersConvergeAsynchronously) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(2, 2));
  std::vector<Tensor> solution;
  std::thread other([&] {
    std::vector<Tensor> unused;
    TrainWorker(cluster_, WorkerTarget(1), 1, 400, /*sync=*/false, &unused);
  });
  TrainWorker(cluster_, WorkerTarget(0), 0, 400, /*sync=*/false, &solution);
  other.join();
  ASSERT_EQ(solution.size(), 3u);
  ExpectSolved(solution);
  EXPECT_LT(solution[2].scalar<float>(), 1e-3f);
}

TEST_F(TrainingTest, TwoPsTwoWorkersConvergeSynchronously) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(2, 2));
  std::vector<Tensor> solution;
  std::thread other([&] {
    std::vector<Tensor> unused;
    TrainWorker(cluster_, WorkerTarget(1), 1, 400, /*sync=*/true, &unused);
  });
  TrainWorker(cluster_, WorkerTarget(0), 0, 400, /*sync=*/true, &solution);
  other.join();
  ASSERT_EQ(solution.size(), 3u);
  ExpectSolved(solution);
  EXPECT_LT(solution[2].scalar<float>(), 1e-3f);
}

// loss = x * g with g fed: each worker's gradient is its g. Gradient descent with rate 1,
// 2 of 3 replicas aggregated.
struct SyncProbe {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  ops::Variable x, step;
  Output g, x_value, step_value;
  std::unique_ptr<train::Optimizer> optimizer = train::GradientDescentOptimizer(1.0f);
  std::unique_ptr<train::SyncReplicas> sync;

  SyncProbe(const ClusterSpec& cluster, int worker) {
    const std::string device = "/job:worker/task:" + std::to_string(worker);
    auto setter = train::ReplicaDeviceSetter(cluster, {.worker_device = device});
    const Scope model = root.WithDeviceFunction(*setter);
    step = train::CreateGlobalStep(model, &vars);
    x = vars.Add(model, "x", DT_FLOAT, {}, 0.0f);
    g = ops::Placeholder(model.WithOpName("g"), DT_FLOAT);
    x_value = ops::ReadVariable(model, x);
    step_value = ops::ReadVariable(model, step);
    auto grads = optimizer->ComputeGradients(model, ops::Mul(model, x_value, g), vars);
    EXPECT_TRUE(grads.ok()) << grads.status();
    auto made = train::SyncReplicas::Create(
        model, optimizer.get(), *grads, &vars, step,
        {.replicas_to_aggregate = 2, .total_num_replicas = 3, .worker_device = device});
    EXPECT_TRUE(made.ok()) << made.status();
    sync = std::move(*made);
  }
};

TEST_F(TrainingTest, SyncReplicasDropStaleGradientsAndUseBackupWorkers) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(1, 3));
  std::vector<std::unique_ptr<SyncProbe>> probes;
  std::vector<std::unique_ptr<ClientSession>> sessions;
  std::vector<std::unique_ptr<train::SessionRunHook>> hooks;
  for (int i = 0; i < 3; ++i) {
    probes.push_back(std::make_unique<SyncProbe>(cluster_, i));
    sessions.push_back(std::make_unique<ClientSession>(probes[i]->root,
                                                       SessionOptions{.target = WorkerTarget(i)}));
  }
  ASSERT_TRUE(sessions[0]->Run({}, {}, {probes[0]->vars.InitOp(probes[0]->root)}).ok());
  for (int i = 0; i < 3; ++i) {
    hooks.push_back(probes[i]->sync->MakeHook(i == 0, {.target = WorkerTarget(i)}));
    ASSERT_TRUE(hooks[i]->AfterCreateSession(*sessions[i]).ok());  // local steps = 0
  }
  auto push = [&](int i, float g) {
    // Bounded: a protocol regression fails the test (DeadlineExceeded) instead of hanging it.
    auto out = sessions[i]->Run({{probes[i]->g, Tensor::Scalar<float>(g)}}, {},
                                {probes[i]->sync->train_op()}, {.timeout = absl::Seconds(30)});
    EXPECT_TRUE(out.ok()) << "worker " << i << ": " << out.status();
  };
  auto read = [&] {
    auto out = sessions[0]->Run({}, {probes[0]->x_value, probes[0]->step_value});
    EXPECT_TRUE(out.ok()) << out.status();
    return std::make_pair((*out)[0].scalar<float>(), (*out)[1].scalar<int64_t>());
  };

  // Round 1: workers 0 and 1 push 1 and 3; the chief applies their mean and releases three
  // tokens. x = 0 - 1 * (1 + 3) / 2.
  std::thread w1([&] { push(1, 3.0f); });
  push(0, 1.0f);
  w1.join();
  EXPECT_EQ(read(), std::make_pair(-2.0f, int64_t{1}));

  // Worker 2, a backup, computed its gradient at step 0: stale, dropped. It takes the spare
  // token and goes on at step 1; x does not move.
  push(2, 100.0f);
  EXPECT_EQ(read(), std::make_pair(-2.0f, int64_t{1}));

  // Round 2: workers 0 and 2 (now at step 1) push 1 and 100: x = -2 - 50.5.
  std::thread w2([&] { push(2, 100.0f); });
  push(0, 1.0f);
  w2.join();
  EXPECT_EQ(read(), std::make_pair(-52.5f, int64_t{2}));
  probes[0]->sync->Stop();
}

}  // namespace
}  // namespace tw
