// Summaries in training: SummarySaverHook, StepCounterHook's "global_step/sec" and the
// MonitoredTrainingSession options that add them, read back from the event file.
#include <filesystem>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/summary/event_file_reader.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "tensorweave/train/monitored_session.h"
#include "tensorweave/train/optimizer.h"

namespace tw::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// x is pulled towards 1 by gradient descent at 0.25, so x - 1 halves every step and the
// loss (x - 1)^2 of the n-th step (from 0) is 0.25^n.
struct Toy {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  ops::Variable x, step;
  Output loss, summary;
  Operation train;
  Toy() {
    step = CreateGlobalStep(root, &vars);
    x = vars.Add(root, "x", DT_FLOAT, {}, 0.0f);
    loss = ops::Square(root, ops::Sub(root, ops::ReadVariable(root, x), 1.0f));
    auto op = GradientDescentOptimizer(0.25f)->Minimize(root, loss, &vars, step);
    EXPECT_TRUE(op.ok()) << op.status();
    train = *op;
    summary = ops::MergeSummary(root, {ops::ScalarSummary(root, std::string("loss"), loss)});
  }
  Model model() {
    return {.scope = root, .variables = &vars, .global_step = step, .summary = summary};
  }
};

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

std::vector<proto::Event> ReadEvents(const std::string& dir) {
  auto files = summary::ListEventFiles(dir);
  EXPECT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->size(), 1u);
  std::vector<proto::Event> events;
  if (!files.ok() || files->size() != 1) return events;
  auto reader = summary::EventFileReader::Open(files->front());
  while (true) {
    auto event = (*reader)->Next();
    if (!event.ok()) {
      EXPECT_TRUE(IsOutOfRange(event.status())) << event.status();
      break;
    }
    events.push_back(*std::move(event));
  }
  return events;
}

Status Train(MonitoredTrainingSession& session, const Toy& toy) {
  for (int i = 0; i < 100 && !session.ShouldStop(); ++i) {
    TW_RETURN_IF_ERROR(session.Run({}, {}, {toy.train}).status());
  }
  return session.Close();
}

TEST(SummaryHooksTest, TheChiefSavesSummariesAndStepRate) {
  const std::string dir = FreshDir("summaries_chief");
  Toy toy;
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(StopAtStepHook(7));
  auto session = MonitoredTrainingSession::Create(
      toy.model(), {.summary_dir = dir, .save_summaries_steps = 2, .log_step_count_steps = 2},
      std::move(hooks));
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_NE((*session)->summary_writer(), nullptr);
  ASSERT_TRUE(Train(**session, toy).ok());

  std::map<int64_t, float> loss;
  std::vector<int64_t> rate_steps, starts;
  const std::vector<proto::Event> events = ReadEvents(dir);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  for (const proto::Event& e : events) {
    if (e.has_session_log() && e.session_log().status() == proto::SessionLog::START) {
      starts.push_back(e.step());
    }
    for (const auto& v : e.summary().value()) {
      if (v.tag() == "loss") loss[e.step()] = v.simple_value();
      if (v.tag() == "global_step/sec") {
        rate_steps.push_back(e.step());
        EXPECT_GT(v.simple_value(), 0);
      }
    }
  }
  EXPECT_THAT(starts, ElementsAre(1));
  // Written after the 1st step, then every 2 global steps: the loss of step n (from 1) is
  // 0.25^(n-1).
  ASSERT_THAT(loss.size(), 4u);
  EXPECT_FLOAT_EQ(loss.at(1), 1.0f);
  EXPECT_FLOAT_EQ(loss.at(3), 0.0625f);
  EXPECT_FLOAT_EQ(loss.at(5), 0.00390625f);
  EXPECT_FLOAT_EQ(loss.at(7), 0.000244140625f);
  // Every 2 global steps after the first (which starts the clock).
  EXPECT_THAT(rate_steps, ElementsAre(3, 5, 7));
}

TEST(SummaryHooksTest, SummariesGoToTheCheckpointDirByDefaultAndOnlyFromTheChief) {
  const std::string dir = FreshDir("summaries_default");
  {
    Toy toy;
    std::vector<std::unique_ptr<SessionRunHook>> hooks;
    hooks.push_back(StopAtStepHook(2));
    auto session =
        MonitoredTrainingSession::Create(toy.model(), {.checkpoint_dir = dir}, std::move(hooks));
    ASSERT_TRUE(session.ok()) << session.status();
    ASSERT_TRUE(Train(**session, toy).ok());
  }
  EXPECT_EQ(summary::ListEventFiles(dir)->size(), 1u);

  // Only the chief writes: a worker given a summary_dir makes no file there.
  auto server = Server::CreateLocal({.num_threads = 2});
  ASSERT_TRUE(server.ok()) << server.status();
  // 127.0.0.1 rather than target()'s localhost: resolving a name leaves c-ares allocations
  // that LeakSanitizer reports in the sanitizer build.
  const std::string target = "grpc://" + (*server)->listen_address();
  const std::string other = FreshDir("summaries_worker");
  Toy toy;
  auto chief = MonitoredTrainingSession::Create(toy.model(), {.target = target, .is_chief = true});
  ASSERT_TRUE(chief.ok()) << chief.status();
  EXPECT_EQ((*chief)->summary_writer(), nullptr);  // no directory, no summaries
  auto worker = MonitoredTrainingSession::Create(
      toy.model(), {.target = target, .is_chief = false, .summary_dir = other});
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_EQ((*worker)->summary_writer(), nullptr);
  EXPECT_FALSE(std::filesystem::exists(other));
  ASSERT_TRUE((*worker)->Close().ok());
  ASSERT_TRUE((*chief)->Close().ok());
}

TEST(SummaryHooksTest, BadSummaryTensorIsAnErrorAtCreate) {
  Toy toy;
  auto writer = EventFileWriter::Create(FreshDir("summaries_bad"));
  ASSERT_TRUE(writer.ok());
  std::shared_ptr<EventFileWriter> shared = std::move(*writer);
  std::vector<std::unique_ptr<SessionRunHook>> hooks;
  hooks.push_back(SummarySaverHook(toy.loss, 1, shared));  // a float, not a Summary
  auto session = MonitoredTrainingSession::Create(toy.model(), {}, std::move(hooks));
  EXPECT_TRUE(IsInvalidArgument(session.status())) << session.status();
  EXPECT_THAT(std::string(session.status().message()), HasSubstr("not a string"));

  hooks.clear();
  hooks.push_back(SummarySaverHook(Output(), 1, shared));
  session = MonitoredTrainingSession::Create(toy.model(), {}, std::move(hooks));
  EXPECT_THAT(std::string(session.status().message()), HasSubstr("summary tensor is not set"));
}

}  // namespace
}  // namespace tw::train
