#include "tensorweave/train/monitored_session.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/train/optimizer.h"

namespace tw::train {
namespace {

using ::testing::HasSubstr;

// x is pulled towards the fed target: loss = (x - target)^2, gradient descent at 0.25.
struct Toy {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  ops::Variable x, step;
  Output target, loss, x_value;
  Operation train;
  Toy() {
    step = CreateGlobalStep(root, &vars);
    x = vars.Add(root, "x", DT_FLOAT, {}, 0.0f);
    target = ops::Placeholder(root.WithOpName("target"), DT_FLOAT);
    x_value = ops::ReadVariable(root, x);
    loss = ops::Square(root, ops::Sub(root, x_value, target));
    auto op = GradientDescentOptimizer(0.25f)->Minimize(root, loss, &vars, step);
    EXPECT_TRUE(op.ok()) << op.status();
    train = *op;
  }
  Model model() { return {.scope = root, .variables = &vars, .global_step = step}; }
};

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(MonitoredTrainingSessionTest, StopsAtTheStepAndCheckpointsAtTheEnd) {
  const std::string dir = FreshDir("monitored_stop");
  Toy toy;
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(StopAtStepHook(5));
  auto session = MonitoredTrainingSession::Create(
      toy.model(), {.checkpoint_dir = dir, .save_checkpoint_steps = 100}, std::move(hooks));
  ASSERT_TRUE(session.ok()) << session.status();
  int runs = 0;
  while (!(*session)->ShouldStop() && runs < 100) {
    auto out = (*session)->Run({{toy.target, Tensor::Scalar<float>(1)}}, {toy.loss}, {toy.train});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);  // the hooks' fetches are not returned
    ++runs;
  }
  EXPECT_EQ(runs, 5);
  ASSERT_TRUE((*session)->Close().ok());
  auto latest = LatestCheckpoint(dir);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_THAT(*latest, HasSubstr("model.ckpt-5"));
}

// A new session (as after a crash of everything) restores the latest checkpoint instead of
// initializing: the global step and x continue.
TEST(MonitoredTrainingSessionTest, TheChiefRestoresTheLatestCheckpoint) {
  const std::string dir = FreshDir("monitored_restore");
  float x_after_first = 0;
  {
    Toy toy;
    std::vector<std::unique_ptr<SessionRunHook>> hooks;
    hooks.push_back(StopAtStepHook(3));
    auto session =
        MonitoredTrainingSession::Create(toy.model(), {.checkpoint_dir = dir}, std::move(hooks));
    ASSERT_TRUE(session.ok()) << session.status();
    while (!(*session)->ShouldStop()) {
      ASSERT_TRUE((*session)->Run({{toy.target, Tensor::Scalar<float>(2)}}, {}, {toy.train}).ok());
    }
    auto x = (*session)->raw_session()->Run({}, {toy.x_value});
    ASSERT_TRUE(x.ok());
    x_after_first = (*x)[0].scalar<float>();
    ASSERT_TRUE((*session)->Close().ok());
  }
  EXPECT_NEAR(x_after_first, 2 - 2 * std::pow(0.5f, 3), 1e-6);  // each step halves the gap
  Toy toy;
  auto session = MonitoredTrainingSession::Create(toy.model(), {.checkpoint_dir = dir});
  ASSERT_TRUE(session.ok()) << session.status();
  auto state =
      (*session)->raw_session()->Run({}, {toy.x_value, ops::ReadVariable(toy.root, toy.step)});
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ((*state)[0].scalar<float>(), x_after_first);
  EXPECT_EQ((*state)[1].scalar<int64_t>(), 3);
}

TEST(MonitoredTrainingSessionTest, ANanLossFailsTheStepNamingIt) {
  Toy toy;
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(NanTensorHook(toy.loss));
  auto session = MonitoredTrainingSession::Create(toy.model(), {}, std::move(hooks));
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run(
      {{toy.target, Tensor::Scalar<float>(std::numeric_limits<float>::quiet_NaN())}}, {},
      {toy.train});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("NaN loss during training"));
}

// A worker that is not the chief waits for the model instead of failing, and says what it
// still waits for when the wait ends.
TEST(MonitoredTrainingSessionTest, AWorkerWaitsForTheModelAndNamesWhatIsMissing) {
  Toy toy;
  auto session = MonitoredTrainingSession::Create(
      toy.model(), {.is_chief = false, .wait_for_model_timeout = absl::Milliseconds(300)});
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(IsDeadlineExceeded(session.status())) << session.status();
  EXPECT_THAT(std::string(session.status().message()),
              HasSubstr("variables not initialized: global_step, x"));
}

// TensorFlow's StopAtStepHook(num_steps=...): the count starts at the step the session
// starts from (here 3, restored), not at 0.
TEST(MonitoredTrainingSessionTest, StopAtStepHookForStepsCountsFromTheRestoredStep) {
  const std::string dir = FreshDir("monitored_num_steps");
  {
    Toy toy;
    std::vector<std::unique_ptr<SessionRunHook>> hooks;
    hooks.push_back(StopAtStepHook(3));
    auto session =
        MonitoredTrainingSession::Create(toy.model(), {.checkpoint_dir = dir}, std::move(hooks));
    ASSERT_TRUE(session.ok()) << session.status();
    while (!(*session)->ShouldStop()) {
      ASSERT_TRUE((*session)->Run({{toy.target, Tensor::Scalar<float>(1)}}, {}, {toy.train}).ok());
    }
    ASSERT_TRUE((*session)->Close().ok());
  }
  Toy toy;
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(StopAtStepHookForSteps(4));
  auto session =
      MonitoredTrainingSession::Create(toy.model(), {.checkpoint_dir = dir}, std::move(hooks));
  ASSERT_TRUE(session.ok()) << session.status();
  int runs = 0;
  while (!(*session)->ShouldStop() && runs < 100) {
    ASSERT_TRUE((*session)->Run({{toy.target, Tensor::Scalar<float>(1)}}, {}, {toy.train}).ok());
    ++runs;
  }
  EXPECT_EQ(runs, 4);
  auto step = (*session)->raw_session()->Run({}, {ops::ReadVariable(toy.root, toy.step)});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ((*step)[0].scalar<int64_t>(), 7);
  ASSERT_TRUE((*session)->Close().ok());
}

// Feeds `value` to `tensor` with every step and fetches `fetch`, as a TensorFlow hook
// returning SessionRunArgs(fetches, feed_dict).
class FeedingHook : public SessionRunHook {
 public:
  FeedingHook(Output tensor, float value, Output fetch, std::vector<float>* fetched)
      : tensor_(std::move(tensor)), value_(value), fetch_(std::move(fetch)), fetched_(fetched) {}
  SessionRunArgs BeforeRunArgs() override {
    return {.fetches = {fetch_}, .feeds = {{tensor_, Tensor::Scalar<float>(value_)}}};
  }
  Status AfterRun(const std::vector<Tensor>& values, RunContext*) override {
    fetched_->push_back(values.at(0).scalar<float>());
    return OkStatus();
  }

 private:
  const Output tensor_;
  const float value_;
  const Output fetch_;
  std::vector<float>* fetched_;
};

TEST(MonitoredTrainingSessionTest, AHookFeedsTheStep) {
  Toy toy;
  std::vector<float> losses;
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(std::make_unique<FeedingHook>(toy.target, 4.0f, toy.loss, &losses));
  hooks.push_back(StopAtStepHook(2));  // a hook of BeforeRun's fetches alongside
  auto session = MonitoredTrainingSession::Create(toy.model(), {}, std::move(hooks));
  ASSERT_TRUE(session.ok()) << session.status();
  while (!(*session)->ShouldStop()) {
    auto out = (*session)->Run({}, {toy.x_value}, {toy.train});  // target: fed by the hook
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
  }
  // x: 0 -> 2 -> 3 (each step halves the gap to 4); the loss is fetched before each update.
  EXPECT_THAT(losses, ::testing::ElementsAre(16.0f, 4.0f));
  ASSERT_TRUE((*session)->Close().ok());
}

TEST(MonitoredTrainingSessionTest, ATensorFedByAHookAndTheCallerFailsTheStep) {
  Toy toy;
  std::vector<float> losses;
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(std::make_unique<FeedingHook>(toy.target, 4.0f, toy.loss, &losses));
  auto session = MonitoredTrainingSession::Create(toy.model(), {}, std::move(hooks));
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({{toy.target, Tensor::Scalar<float>(1)}}, {}, {toy.train});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status())) << out.status();
  EXPECT_THAT(
      std::string(out.status().message()),
      HasSubstr("Same tensor is fed by a SessionRunHook and user. Conflict(s): [target:0]"));
  EXPECT_TRUE(losses.empty());  // the step did not run, nor the hooks' AfterRun
  auto state = (*session)->raw_session()->Run({}, {toy.x_value});
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ((*state)[0].scalar<float>(), 0.0f);
}

TEST(MonitoredTrainingSessionTest, ATensorFedByTwoHooksFailsTheStep) {
  Toy toy;
  std::vector<float> losses;
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(std::make_unique<FeedingHook>(toy.target, 4.0f, toy.loss, &losses));
  hooks.push_back(std::make_unique<FeedingHook>(toy.target, 5.0f, toy.loss, &losses));
  auto session = MonitoredTrainingSession::Create(toy.model(), {}, std::move(hooks));
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({}, {}, {toy.train});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Same tensor is fed by two hooks."));
  EXPECT_TRUE(losses.empty());
}

TEST(MonitoredTrainingSessionTest, ACheckpointSaverHookNeedsADirectory) {
  Toy toy;
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(CheckpointSaverHook(10));
  auto session = MonitoredTrainingSession::Create(toy.model(), {}, std::move(hooks));
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(std::string(session.status().message()), HasSubstr("needs a checkpoint_dir"));
}

}  // namespace
}  // namespace tw::train
