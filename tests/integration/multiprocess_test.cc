// A cluster across processes: a `tw server` process for the ps task, and this process as
// the worker task (server and client).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "src/rpc/shared_memory.h"
#include "src/rpc/tensor_chunks.h"
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
    ps_tf_config_ = R"({"cluster":{"ps":[")" + ps_address_ + R"("],"worker":[")" + worker_address_ +
                    R"("]},"task":{"type":"ps","index":0}})";
    std::vector<std::string> argv = {
        BuiltProgram("tools/tw"), "server", "--bind-host", "127.0.0.1", "--threads", "2"};
    for (const std::string& flag : PsFlags()) argv.push_back(flag);
    // Each test its own log: ctest runs the tests of this fixture as parallel processes.
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    ps_log_ = ::testing::TempDir() + "/ps_server_" + test->test_suite_name() + "_" + test->name() +
              "_" + std::to_string(getpid()) + ".log";
    auto ps = ChildProcess::Start(argv, PsEnvironment(), ps_log_);
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

  virtual testing::EnvOverrides PsEnvironment() const { return {{"TF_CONFIG", ps_tf_config_}}; }
  virtual std::vector<std::string> PsFlags() const { return {}; }

  std::string ps_address_, worker_address_, ps_tf_config_, ps_log_;
  ClusterSpec cluster_;
  std::unique_ptr<ChildProcess> ps_;
  std::unique_ptr<Server> worker_;
};

// tw server's exit codes (docs/kubernetes.md): SIGTERM is retryable for TFJob's ExitCode
// policy (128 + 15), a cluster stop is success (0).
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
  EXPECT_EQ(*code, 128 + SIGTERM);
  std::ifstream in(ps_log_);
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(log, ::testing::HasSubstr("signal 15, stopping")) << log;  // a clean stop
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

// The configuration alone says bind=0.0.0.0:<port>; the server listens where --bind-host
// says, and that is what it logs.
TEST_F(MultiProcessTest, TwServerLogsTheAddressItReallyBinds) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Identity(root.WithDevice("/job:ps/task:0"), 1.0f);
  ClientSession session(root, {.target = worker_->target()});
  ASSERT_TRUE(session.Run({}, {c}).ok());  // the ps process is up, its start logged
  ps_->Signal(SIGTERM);
  auto code = ps_->Wait(absl::Seconds(10));
  ASSERT_TRUE(code.ok()) << code.status();
  std::ifstream in(ps_log_);
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(log, ::testing::HasSubstr("serving at"));
  EXPECT_THAT(log, ::testing::HasSubstr("bind=" + ps_address_)) << log;
  EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("bind=0.0.0.0"))) << log;
}

// Starts a `tw server` for the ps task at `address`, its log at `log`.
StatusOr<std::unique_ptr<ChildProcess>> StartPs(const std::string& tf_config,
                                                const std::string& log) {
  return ChildProcess::Start(
      {BuiltProgram("tools/tw"), "server", "--bind-host", "127.0.0.1", "--threads", "2"},
      {{"TF_CONFIG", tf_config}}, log);
}

TEST_F(MultiProcessTest, StopClusterEndsTheOtherProcess) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Identity(root.WithDevice("/job:ps/task:0"), 1.0f);
  ClientSession session(root, {.target = worker_->target()});
  ASSERT_TRUE(session.Run({}, {c}).ok());  // the ps process is up
  Status stopped = worker_->StopCluster(absl::Seconds(10));
  EXPECT_TRUE(stopped.ok()) << stopped;
  auto code = ps_->Wait(absl::Seconds(10));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
}

TEST_F(MultiProcessTest, PortInUseIsARetryableExitCode) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Identity(root.WithDevice("/job:ps/task:0"), 1.0f);
  ClientSession session(root, {.target = worker_->target()});
  ASSERT_TRUE(session.Run({}, {c}).ok());  // the ps process holds its port
  auto second = StartPs(ps_tf_config_, ::testing::TempDir() + "/ps_server_port_taken.log");
  ASSERT_TRUE(second.ok()) << second.status();
  auto code = (*second)->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 200);
}

// A ps task whose chief went away stops with a code TFJob retries (the chief may come
// back), not 0, which would leave the restarted chief without its ps task.
class ChiefWatchMultiProcessTest : public MultiProcessTest {
 protected:
  std::vector<std::string> PsFlags() const override { return {"--stop-when-chief-unreachable=1s"}; }
};

TEST_F(ChiefWatchMultiProcessTest, ChiefGoneIsARetryableExitCode) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Identity(root.WithDevice("/job:ps/task:0"), 1.0f);
  ClientSession session(root, {.target = worker_->target()});
  ASSERT_TRUE(session.Run({}, {c}).ok());  // the ps process is up
  // The ps task logs the chief's (this process's worker:0) first answer to its watch.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string log;
  while (log.find("answered; this task stops") == std::string::npos && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));  // polling the log file, not waiting for time
    std::ifstream in(ps_log_);
    log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_THAT(log, ::testing::HasSubstr("answered; this task stops")) << log;
  worker_->Stop();
  auto code = ps_->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 201);
}

// A session whose target is the ps process's server: steps, feeds and fetches all cross
// the network in the tensor wire form, and a 256 MB tensor comes back bit-exact.
TEST_F(MultiProcessTest, RemoteSession256MbRoundTripIsBitExact) {
  constexpr int64_t kElements = int64_t{256} << 20 >> 2;
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "big", DT_FLOAT, {kElements});
  auto value = ops::Placeholder(root, DT_FLOAT);
  auto set = ops::Assign(root, v, value);
  auto get = ops::ReadVariable(root, v);
  ClientSession session(root, {.target = "grpc://" + ps_address_, .device_filters = {"/job:ps"}});
  Tensor t(DT_FLOAT, TensorShape({kElements}));
  auto* bits = static_cast<uint32_t*>(t.raw_data());
  uint32_t x = 12345;
  for (int64_t i = 0; i < kElements; ++i) {
    x = x * 1664525u + 1013904223u;  // every bit pattern matters, NaNs included
    bits[i] = x;
  }
  auto pushed = session.Run({{value, t}}, {}, {set.op()});
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  auto out = session.Run({}, {get});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].TotalBytes(), t.TotalBytes());
  EXPECT_EQ(std::memcmp((*out)[0].raw_data(), t.raw_data(), t.TotalBytes()), 0);
}

// The ps process has shared memory off, as a task on another host would: tensors cross in
// gRPC messages only.
class TcpOnlyMultiProcessTest : public MultiProcessTest {
 protected:
  testing::EnvOverrides PsEnvironment() const override {
    return {{"TF_CONFIG", ps_tf_config_}, {"TW_SHARED_MEMORY", "0"}};
  }
};

// Pushes `t` into a variable on the ps task (Assign, then AssignAdd) and pulls it back twice:
// the variable itself, and doubled by an Add on this (the worker) task, which receives the
// variable through RecvTensor. Expects every element of both to be exactly 2 * t and 4 * t.
void PushAndPullAreBitExact(const std::string& target, const Tensor& t) {
  const int64_t n = t.num_elements();
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "pushed_" + std::to_string(n),
                             DT_INT32, {n});
  auto value = ops::Placeholder(root, DT_INT32);
  auto set = ops::Assign(root, v, value);
  auto add = ops::AssignAdd(root, v, value);
  auto get = ops::ReadVariable(root, v);
  const Scope on_worker = root.WithDevice("/job:worker/task:0");
  auto doubled = ops::Add(on_worker, ops::Identity(on_worker, get), ops::Identity(on_worker, get));
  ClientSession session(root, {.target = target});
  auto assigned = session.Run({{value, t}}, {}, {set.op()});
  ASSERT_TRUE(assigned.ok()) << assigned.status();
  auto added = session.Run({{value, t}}, {}, {add.op()});
  ASSERT_TRUE(added.ok()) << added.status();
  auto out = session.Run({}, {get, doubled});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int k : {0, 1}) {
    const auto got = (*out)[k].flat<int32_t>();
    ASSERT_EQ(got.size(), static_cast<size_t>(n));
    const uint32_t times = k == 0 ? 2u : 4u;
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      wrong += got[i] != static_cast<int32_t>(static_cast<uint32_t>(t.flat<int32_t>()[i]) * times);
    }
    EXPECT_EQ(wrong, 0) << (k == 0 ? "pulled variable" : "received by the worker task");
  }
}

Tensor Sequence(int64_t n) {
  Tensor t(DT_INT32, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<int32_t>()[i] = static_cast<int32_t>(i * 7919);
  return t;
}

// Tensors above 4 MiB between the worker (this process) and the ps process travel as
// chunks in both directions when shared memory is not possible: a feed pushed to the ps
// task and a variable pulled back, of a size whose last chunk is partial.
TEST_F(TcpOnlyMultiProcessTest, ChunkedPushAndPullAreBitExact) {
  const shm::Stats before = shm::GetStats();
  PushAndPullAreBitExact(worker_->target(), Sequence(5'000'003));  // 4 full chunks + 1 partial
  const shm::Stats after = shm::GetStats();
  EXPECT_EQ(after.exported, before.exported) << "the ps task cannot read shared memory";
  EXPECT_EQ(after.imported, before.imported) << "the ps task has no shared memory";
}

// A 16 MB variable on the ps task, pushed and pulled from the worker task at `target`, after
// a small step that tells when the ps task is up (and opens no chunk connection).
class SixteenMegabytes {
 public:
  explicit SixteenMegabytes(const std::string& target)
      : root_(Scope::NewRootScope()),
        v_(ops::MakeVariable(root_.WithDevice("/job:ps/task:0"), "v", DT_FLOAT, {4 << 20})),
        value_(ops::Placeholder(root_, DT_FLOAT)),
        set_(ops::Assign(root_, v_, value_)),
        get_(ops::ReadVariable(root_, v_)),
        small_(ops::MakeVariable(root_.WithDevice("/job:ps/task:0"), "small", DT_FLOAT, {})),
        init_small_(ops::Assign(root_, small_, 1.0f)),
        session_(root_, {.target = target}) {}

  Status SmallStep() { return session_.Run({}, {}, {init_small_.op()}).status(); }
  // Pushes 2.0 everywhere and pulls it back: OK when every element came back.
  Status PushAndPull() {
    Tensor t(DT_FLOAT, TensorShape({4 << 20}));
    std::fill(t.flat<float>().begin(), t.flat<float>().end(), 2.0f);
    TW_RETURN_IF_ERROR(session_.Run({{value_, t}}, {}, {set_.op()}).status());
    TW_ASSIGN_OR_RETURN(auto out, session_.Run({}, {get_}));
    if (!(out[0] == t)) return errors::DataLoss("the pulled variable differs from the pushed");
    return OkStatus();
  }

 private:
  Scope root_;
  ops::Variable v_;
  Output value_, set_, get_;
  ops::Variable small_;
  Output init_small_;
  ClientSession session_;
};

// Large tensors' chunks travel on the ps task's chunk socket (src/rpc/chunk_socket.h), on
// the task's one port beside gRPC (src/rpc/task_port.h): a 16 MB push and pull open up to
// kChunkConnections more connections to that port (each opened by the first chunk its
// thread carries) and no PutChunk or RecvChunk call reaches the ps task's gRPC server.
class ChunkSocketMultiProcessTest : public TcpOnlyMultiProcessTest {
 protected:
  std::vector<std::string> PsFlags() const override {
    return {"--metrics-port", std::to_string(metrics_port_)};
  }
  // The ps task's metrics, "" when they cannot be had.
  std::string ScrapePs() const {
    httplib::Client client("127.0.0.1", metrics_port_);
    client.set_read_timeout(10, 0);
    auto res = client.Get("/metrics");
    return res && res->status == 200 ? res->body : "";
  }
  const int metrics_port_ = testing::PickUnusedPort();
};

TEST_F(ChunkSocketMultiProcessTest, ChunksTravelOnTheTaskPortOutsideGrpc) {
  const int ps_port = std::stoi(ps_address_.substr(ps_address_.rfind(':') + 1));
  SixteenMegabytes transfer(worker_->target());
  ASSERT_TRUE(transfer.SmallStep().ok());  // the ps task is up
  std::vector<int> expected = {ps_port, metrics_port_};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(testing::ListeningPorts(ps_->pid()), expected)
      << "one port for gRPC and the chunk socket, one for metrics";
  const int before = testing::ConnectionsTo(ps_port);
  Status moved = transfer.PushAndPull();
  ASSERT_TRUE(moved.ok()) << moved;
  EXPECT_GE(testing::ConnectionsTo(ps_port), before + 1);
  EXPECT_LE(testing::ConnectionsTo(ps_port), before + kChunkConnections);
  const std::string metrics = ScrapePs();
  EXPECT_THAT(metrics, ::testing::HasSubstr("RunGraph"))
      << "the scrape counts the ps task's gRPC calls";
  EXPECT_THAT(metrics, ::testing::Not(::testing::HasSubstr("PutChunk")));
  EXPECT_THAT(metrics, ::testing::Not(::testing::HasSubstr("RecvChunk")));
}

// With TW_CHUNK_SOCKETS=0 the ps task opens no chunk socket, and chunks travel in PutChunk
// and RecvChunk calls instead.
class GrpcChunksMultiProcessTest : public MultiProcessTest {
 protected:
  testing::EnvOverrides PsEnvironment() const override {
    return {{"TF_CONFIG", ps_tf_config_}, {"TW_SHARED_MEMORY", "0"}, {"TW_CHUNK_SOCKETS", "0"}};
  }
};

TEST_F(GrpcChunksMultiProcessTest, ChunkedPushAndPullAreBitExact) {
  const int ps_port = std::stoi(ps_address_.substr(ps_address_.rfind(':') + 1));
  PushAndPullAreBitExact(worker_->target(), Sequence(5'000'003));
  EXPECT_EQ(testing::ListeningPorts(ps_->pid()), std::vector<int>{ps_port});
}

// Chunks travel on connections of their own (kChunkConnections), opened by the first
// chunked transfer: a small step uses none of them, a 16 MB push and pull open all.
TEST_F(GrpcChunksMultiProcessTest, ChunksTravelOnConnectionsOfTheirOwn) {
  const int ps_port = std::stoi(ps_address_.substr(ps_address_.rfind(':') + 1));
  SixteenMegabytes transfer(worker_->target());
  ASSERT_TRUE(transfer.SmallStep().ok());
  const int before = testing::ConnectionsTo(ps_port);
  EXPECT_GE(before, 1);
  Status moved = transfer.PushAndPull();
  ASSERT_TRUE(moved.ok()) << moved;
  const int after = testing::ConnectionsTo(ps_port);
  EXPECT_GT(after, before);
  EXPECT_EQ(after, before + kChunkConnections);
}

// Between processes of one host, large tensors cross in shared-memory blocks: pushes from
// the second step on (the first RunGraph reply tells this process that the ps task shares
// its host), pulls and RecvTensor replies from the first. Sizes: a partial 4 MiB chunk's
// worth, and just above the shared-memory threshold.
TEST_F(MultiProcessTest, SharedMemoryPushAndPullAreBitExact) {
  for (int64_t n : {int64_t{5'000'003}, int64_t{40'000}}) {
    SCOPED_TRACE(n);
    const shm::Stats before = shm::GetStats();
    PushAndPullAreBitExact(worker_->target(), Sequence(n));
    const shm::Stats after = shm::GetStats();
    EXPECT_GE(after.exported - before.exported, 1u) << "the AssignAdd feed";
    EXPECT_GE(after.imported - before.imported, 2u) << "the pulled variable and the RecvTensor";
  }
}

// `tw server --allowed-dir` is the ps task's owner choosing where graphs may touch files:
// a save there works, one elsewhere is PermissionDenied naming the path and the directory,
// whatever directory the graph claims.
class AllowedDirMultiProcessTest : public MultiProcessTest {
 protected:
  // Directories of this process's own: ctest runs the tests of this fixture in parallel
  // processes, and a shared path would be removed under a test that is still running.
  AllowedDirMultiProcessTest()
      : allowed_(::testing::TempDir() + "/tw_allowed_ps." + std::to_string(getpid())),
        outside_(::testing::TempDir() + "/tw_not_allowed_ps." + std::to_string(getpid())) {
    for (const std::string& dir : {allowed_, outside_}) {
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
    }
    allowed_ = std::filesystem::canonical(allowed_).string();
    outside_ = std::filesystem::canonical(outside_).string();
  }
  ~AllowedDirMultiProcessTest() override {
    std::filesystem::remove_all(allowed_);
    std::filesystem::remove_all(outside_);
  }
  std::vector<std::string> PsFlags() const override { return {"--allowed-dir=" + allowed_}; }

  // A save in the allowed directory works; one elsewhere is PermissionDenied.
  void ExpectOnlyTheAllowedDirectoryIsWritable();

  std::string allowed_, outside_;
};

// The same directory given by TW_ALLOWED_DIRECTORIES (with an empty entry, skipped) instead
// of the flag, as a Python program's tasks get it.
class AllowedDirFromEnvironmentTest : public AllowedDirMultiProcessTest {
 protected:
  std::vector<std::string> PsFlags() const override { return {}; }
  testing::EnvOverrides PsEnvironment() const override {
    testing::EnvOverrides env = AllowedDirMultiProcessTest::PsEnvironment();
    env["TW_ALLOWED_DIRECTORIES"] = ":" + allowed_;
    return env;
  }
};

TEST_F(AllowedDirMultiProcessTest, TwServerLetsGraphsWriteOnlyInItsAllowedDirectory) {
  ExpectOnlyTheAllowedDirectoryIsWritable();
}

TEST_F(AllowedDirFromEnvironmentTest, TwServerTakesTheDirectoryFromTheEnvironment) {
  ExpectOnlyTheAllowedDirectoryIsWritable();
}

void AllowedDirMultiProcessTest::ExpectOnlyTheAllowedDirectoryIsWritable() {
  Scope root = Scope::NewRootScope().WithDevice("/job:ps/task:0");
  auto v = ops::MakeVariable(root, "v", DT_FLOAT, {2});
  auto init = ops::Assign(root, v, {1.0f, 2.0f});
  auto prefix = ops::Placeholder(root.WithOpName("prefix"), DT_STRING);
  const std::vector<ops::CheckpointSlice> slices{{.name = "v"}};
  auto save = ops::SaveVariables(root, prefix, {v}, slices, 0, 1, "/");
  auto merge = ops::MergeCheckpoint(root.WithControlDependencies({save}), prefix, 1, "/");
  ClientSession session(root, {.target = worker_->target()});
  auto first = session.Run({}, {}, {init.op()});  // waits for the ps process to come up
  ASSERT_TRUE(first.ok()) << first.status();
  auto save_to = [&](const std::string& path) {
    return session.Run({{prefix, Tensor::Scalar<std::string>(path)}}, {}, {merge}).status();
  };
  Status inside = save_to(allowed_ + "/model.ckpt-1");
  EXPECT_TRUE(inside.ok()) << inside;
  EXPECT_TRUE(std::filesystem::exists(allowed_ + "/model.ckpt-1.index"));
  Status outside = save_to(outside_ + "/model.ckpt-1");
  EXPECT_EQ(outside.code(), absl::StatusCode::kPermissionDenied) << outside;
  EXPECT_THAT(std::string(outside.message()), ::testing::HasSubstr(outside_ + "/model.ckpt-1"));
  EXPECT_THAT(std::string(outside.message()), ::testing::HasSubstr("allowed: " + allowed_));
  EXPECT_TRUE(std::filesystem::is_empty(outside_));
}

TEST_F(MultiProcessTest, RestartedTaskGivesAbortedThenANewSessionWorks) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "v", DT_FLOAT, {});
  auto init = ops::Assign(root, v, 1.0f);
  auto read = ops::ReadVariable(root, v);
  ClientSession session(root, {.target = worker_->target()});
  ASSERT_TRUE(session.Run({}, {}, {init.op()}).ok());
  ASSERT_TRUE(session.Run({}, {read}).ok());
  ps_->Signal(SIGKILL);
  ASSERT_TRUE(ps_->Wait(absl::Seconds(10)).ok());
  auto again = StartPs(ps_tf_config_, ::testing::TempDir() + "/ps_server_again.log");
  ASSERT_TRUE(again.ok()) << again.status();
  ps_ = *std::move(again);

  // A new session waits for the new process and works (the variable is gone with the old
  // process, so it initializes again).
  ClientSession fresh(root, {.target = worker_->target()});
  auto first = fresh.Run({}, {}, {init.op()});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*fresh.Run({}, {read}))[0].scalar<float>(), 1.0f);

  // The old session planned for the dead process: Aborted, saying the task restarted.
  auto stale = session.Run({}, {read}, {}, {.timeout = absl::Seconds(20)});
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(IsAborted(stale.status())) << stale.status().ToString();
  EXPECT_THAT(std::string(stale.status().message()), ::testing::HasSubstr("restarted"));
}

// The seeds' shared counter: two worker processes, 10,000 AssignAdd steps each, on a
// variable held by a third (the ps process); the total is exact.
TEST(SharedCounterTest, TwoProcessesTimesTenThousandAssignAddIsExact) {
  const std::string ps = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  std::vector<std::string> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back("127.0.0.1:" + std::to_string(testing::PickUnusedPort()));
  }
  auto cluster_json = [&](const std::string& type, int index) {
    return R"({"cluster":{"ps":[")" + ps + R"("],"worker":[")" + workers[0] + R"(",")" +
           workers[1] + R"(",")" + workers[2] + R"("]},"task":{"type":")" + type + R"(","index":)" +
           std::to_string(index) + "}}";
  };
  auto ps_process = StartPs(cluster_json("ps", 0), ::testing::TempDir() + "/counter_ps.log");
  ASSERT_TRUE(ps_process.ok()) << ps_process.status();
  ClusterSpec cluster;
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{ps}).ok());
  ASSERT_TRUE(cluster.AddJob("worker", workers).ok());
  auto chief = Server::Create(cluster, "worker", 0, {.bind_host = "127.0.0.1", .num_threads = 1});
  ASSERT_TRUE(chief.ok() && (*chief)->Start().ok());
  Scope root = Scope::NewRootScope();
  auto total = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "total", DT_INT64, {});
  auto init = ops::Assign(root, total, int64_t{0});
  auto read = ops::ReadVariable(root, total);
  ClientSession session(
      root, {.target = (*chief)->target(), .device_filters = {"/job:ps", "/job:worker/task:0"}});
  ASSERT_TRUE(session.Run({}, {}, {init.op()}).ok());

  constexpr int kSteps = 10000;
  std::vector<std::unique_ptr<ChildProcess>> clients;
  for (int i = 1; i <= 2; ++i) {
    auto client = ChildProcess::Start(
        {BuiltProgram("tests/integration/assign_add_client"), std::to_string(kSteps)},
        {{"TF_CONFIG", cluster_json("worker", i)}},
        ::testing::TempDir() + "/counter_worker" + std::to_string(i) + ".log");
    ASSERT_TRUE(client.ok()) << client.status();
    clients.push_back(*std::move(client));
  }
  for (auto& client : clients) {
    auto code = client->Wait(absl::Seconds(90));
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_EQ(*code, 0);
  }
  auto out = session.Run({}, {read});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 2 * kSteps);
  // The client tasks have exited, so only the ps task can still acknowledge.
  Status stopped = (*chief)->StopCluster(absl::Seconds(10));
  EXPECT_THAT(std::string(stopped.message()), ::testing::Not(::testing::HasSubstr("/job:ps")));
  auto code = (*ps_process)->Wait(absl::Seconds(10));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
}

}  // namespace
}  // namespace tw
