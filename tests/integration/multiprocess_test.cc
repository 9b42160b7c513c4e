// A cluster across processes: a `tw server` process for the ps task, and this process as
// the worker task (server and client).
#include <signal.h>

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"
#include "testing/subprocess.h"

namespace tw {
namespace {

using testing::BuiltProgram;
using testing::ChildProcess;

class MultiProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ps_address_ = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
    worker_address_ = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
    const std::string tf_config = R"({"cluster":{"ps":[")" + ps_address_ + R"("],"worker":[")" +
                                  worker_address_ + R"("]},"task":{"type":"ps","index":0}})";
    auto ps = ChildProcess::Start(
        {BuiltProgram("tools/tw"), "server", "--bind-host", "127.0.0.1", "--threads", "2"},
        {{"TF_CONFIG", tf_config}}, ::testing::TempDir() + "/ps_server.log");
    ASSERT_TRUE(ps.ok()) << ps.status();
    ps_ = *std::move(ps);
    ASSERT_TRUE(cluster_.AddJob("ps", std::vector<std::string>{ps_address_}).ok());
    ASSERT_TRUE(cluster_.AddJob("worker", std::vector<std::string>{worker_address_}).ok());
    auto worker = Server::Create(
        cluster_, "worker", 0,
        {.bind_host = "127.0.0.1", .num_threads = 2, .wait_for_cluster = absl::Seconds(20)});
    ASSERT_TRUE(worker.ok()) << worker.status();
    ASSERT_TRUE((*worker)->Start().ok());
    worker_ = *std::move(worker);
  }

  std::string ps_address_, worker_address_;
  ClusterSpec cluster_;
  std::unique_ptr<ChildProcess> ps_;
  std::unique_ptr<Server> worker_;
};

TEST_F(MultiProcessTest, ExactCountsOnAPsProcessAndCleanExitOnSigterm) {
  Scope root = Scope::NewRootScope();
  auto total = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "total", DT_INT64, {});
  auto init = ops::Assign(root, total, int64_t{0});
  auto add = ops::AssignAdd(root, total, int64_t{1}, {.use_locking = true});
  auto read = ops::ReadVariable(root, total);
  ClientSession session(root, {.target = worker_->target()});
  auto first = session.Run({}, {}, {init.op()});  // waits for the ps process to come up
  ASSERT_TRUE(first.ok()) << first.status();
  constexpr int kThreads = 2, kSteps = 300;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kSteps; ++i) {
        if (!session.Run({}, {}, {add.op()}).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto out = session.Run({}, {read});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int64_t>(), kThreads * kSteps);

  ps_->Signal(SIGTERM);
  auto code = ps_->Wait(absl::Seconds(10));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
}

TEST_F(MultiProcessTest, KilledTaskGivesUnavailableNotAHang) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "v", DT_FLOAT, {});
  auto init = ops::Assign(root, v, 1.0f);
  auto read = ops::ReadVariable(root, v);
  ClientSession session(root, {.target = worker_->target()});
  ASSERT_TRUE(session.Run({}, {}, {init.op()}).ok());
  ps_->Signal(SIGKILL);
  ASSERT_TRUE(ps_->Wait(absl::Seconds(10)).ok());
  auto out = session.Run({}, {read}, {}, {.timeout = absl::Seconds(20)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsUnavailable(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()),
              ::testing::HasSubstr("/job:ps/replica:0/task:0"));
}

}  // namespace
}  // namespace tw
