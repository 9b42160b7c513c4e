// SyncReplicas' hook on a one-task server (the token queue is shared by name between the
// chief's and the test's sessions): the chief's initial tokens, TensorFlow's num_tokens.
// tests/integration/training_test.cc covers the protocol across workers.
#include "tensorweave/train/sync_replicas.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"

namespace tw::train {
namespace {

using ::testing::HasSubstr;

constexpr char kDevice[] = "/job:localhost/replica:0/task:0";

// loss = x * g with g fed; 2 of 3 replicas aggregated, gradient descent at rate 1.
struct Probe {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  ops::Variable x, step;
  Output g, x_value, step_value, tokens_left;
  std::unique_ptr<Optimizer> optimizer = GradientDescentOptimizer(1.0f);
  std::unique_ptr<SyncReplicas> sync;
  std::unique_ptr<Server> server;
  std::unique_ptr<ClientSession> session;

  Probe() {
    auto made_server = Server::CreateLocal({.num_threads = 2});
    EXPECT_TRUE(made_server.ok()) << made_server.status();
    server = *std::move(made_server);
    step = CreateGlobalStep(root, &vars);
    x = vars.Add(root, "x", DT_FLOAT, {}, 0.0f);
    g = ops::Placeholder(root.WithOpName("g"), DT_FLOAT);
    x_value = ops::ReadVariable(root, x);
    step_value = ops::ReadVariable(root, step);
    auto grads = optimizer->ComputeGradients(root, ops::Mul(root, x_value, g), vars);
    EXPECT_TRUE(grads.ok()) << grads.status();
    auto made = SyncReplicas::Create(
        root, optimizer.get(), *grads, &vars, step,
        {.replicas_to_aggregate = 2, .total_num_replicas = 3, .worker_device = kDevice});
    EXPECT_TRUE(made.ok()) << made.status();
    sync = *std::move(made);
    // The token queue, by its shared name.
    const ops::Queue tokens = ops::FIFOQueue(root.ColocateWith(step.op()), {DT_INT64},
                                             {.shapes = {{}}, .shared_name = "sync_token_queue"});
    tokens_left = ops::QueueSize(root, tokens);
    session = std::make_unique<ClientSession>(root, SessionOptions{.target = target()});
    EXPECT_TRUE(session->Run({}, {}, {vars.InitOp(root)}).ok());
  }
  ~Probe() { sync->Stop(); }
  std::string target() const { return server->target(); }

  // Makes the hook and runs it as the monitored session does when it makes a session.
  Status StartHook(bool is_chief, int num_tokens) {
    hook = sync->MakeHook(is_chief, {.target = target()}, num_tokens);
    TW_RETURN_IF_ERROR(hook->Begin({.global_step = step_value, .is_chief = is_chief}));
    return hook->AfterCreateSession(*session);
  }
  int32_t Tokens() {
    auto out = session->Run({}, {tokens_left});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].scalar<int32_t>() : -1;
  }
  // One worker step: push g, take a token.
  Status Push(float value, absl::Duration timeout) {
    return session
        ->Run({{g, Tensor::Scalar<float>(value)}}, {}, {sync->train_op()}, {.timeout = timeout})
        .status();
  }

  std::unique_ptr<SessionRunHook> hook;
};

// TensorFlow's make_session_run_hook(is_chief, num_tokens=-1): replicas_to_aggregate
// tokens, so a worker's first step goes on before the first update.
TEST(SyncReplicasTest, TheChiefPutsReplicasToAggregateTokensForMinusOne) {
  Probe p;
  ASSERT_TRUE(p.StartHook(/*is_chief=*/true, SyncReplicas::kTokensPerAggregate).ok());
  EXPECT_EQ(p.Tokens(), 2);
  Status pushed = p.Push(1.0f, absl::Seconds(30));
  ASSERT_TRUE(pushed.ok()) << pushed;
  EXPECT_EQ(p.Tokens(), 1);
  // One gradient of the two an update needs: nothing applied yet.
  auto state = p.session->Run({}, {p.x_value, p.step_value});
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ((*state)[0].scalar<float>(), 0.0f);
  EXPECT_EQ((*state)[1].scalar<int64_t>(), 0);
}

TEST(SyncReplicasTest, TheChiefPutsTheTokensAskedFor) {
  Probe p;
  ASSERT_TRUE(p.StartHook(/*is_chief=*/true, 5).ok());
  EXPECT_EQ(p.Tokens(), 5);
}

// The default: no initial tokens, a worker's first step waits for the first update.
TEST(SyncReplicasTest, WithoutInitialTokensAWorkerWaitsForTheFirstUpdate) {
  Probe p;
  p.hook = p.sync->MakeHook(/*is_chief=*/true, {.target = p.target()});
  ASSERT_TRUE(p.hook->Begin({.global_step = p.step_value, .is_chief = true}).ok());
  ASSERT_TRUE(p.hook->AfterCreateSession(*p.session).ok());
  EXPECT_EQ(p.Tokens(), 0);
  EXPECT_TRUE(IsDeadlineExceeded(p.Push(1.0f, absl::Milliseconds(300))));
}

TEST(SyncReplicasTest, OnlyTheChiefPutsTokens) {
  Probe p;
  ASSERT_TRUE(p.StartHook(/*is_chief=*/false, SyncReplicas::kTokensPerAggregate).ok());
  EXPECT_EQ(p.Tokens(), 0);
}

// TensorFlow's check: num_tokens >= replicas_to_aggregate - total_num_replicas (-1 here).
TEST(SyncReplicasTest, TooFewTokensFailBegin) {
  Probe p;
  Status s = p.StartHook(/*is_chief=*/true, -2);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("Too few tokens to finish the first step: -2 (given) vs -1 (needed)"));
  EXPECT_EQ(p.Tokens(), 0);
}

}  // namespace
}  // namespace tw::train
