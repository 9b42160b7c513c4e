// Saver over in-process clusters on loopback: save on 2 ps tasks, restore onto 1 and 3 with
// different partitioning, written by the saving process (no allowed directories on any task)
// or by the variables' tasks, each restoring the other's files; the checkpoint directory's
// bookkeeping; errors.
#include "tensorweave/train/saver.h"

#include <stdlib.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_state.h"
#include "src/checkpoint/checkpoint_writer.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"

namespace tw {
using train::LatestCheckpoint;
using train::SaveableVariable;
using train::Saver;
using train::SaverOptions;
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Message(const Status& s) { return std::string(s.message()); }

// `num_ps` ps tasks and one worker, all started, on free loopback ports, each allowing
// graphs to read and write files in `allowed_dir` only ("": nowhere).
class Cluster {
 public:
  static std::unique_ptr<Cluster> Start(int num_ps, const std::string& allowed_dir) {
    auto c = std::make_unique<Cluster>();
    std::vector<std::string> ps;
    for (int i = 0; i < num_ps; ++i) ps.push_back(Address());
    EXPECT_TRUE(c->spec_.AddJob("ps", ps).ok());
    EXPECT_TRUE(c->spec_.AddJob("worker", {Address()}).ok());
    for (int i = 0; i <= num_ps; ++i) {
      const bool worker = i == num_ps;
      auto server = Server::Create(c->spec_, worker ? "worker" : "ps", worker ? 0 : i,
                                   {.bind_host = "127.0.0.1",
                                    .num_threads = 2,
                                    .wait_for_cluster = absl::Seconds(10),
                                    .allowed_directories = AllowedDirectories(allowed_dir)});
      EXPECT_TRUE(server.ok()) << server.status();
      if (!server.ok()) return nullptr;
      EXPECT_TRUE((*server)->Start().ok());
      c->servers_.push_back(*std::move(server));
    }
    return c;
  }
  // The worker's target: sessions run there and reach the ps tasks.
  std::string target() const { return servers_.back()->target(); }

 private:
  static std::string Address() { return "127.0.0.1:" + std::to_string(testing::PickUnusedPort()); }
  static std::vector<std::string> AllowedDirectories(const std::string& dir) {
    return dir.empty() ? std::vector<std::string>{} : std::vector<std::string>{dir};
  }
  ClusterSpec spec_;
  std::vector<std::unique_ptr<Server>> servers_;
};

std::string Ps(int task) { return "/job:ps/task:" + std::to_string(task); }

// Floats whose bits matter: NaN with a payload, -0, a denormal, infinity.
Tensor Embedding() {
  std::vector<float> v(30);
  for (int i = 0; i < 30; ++i) v[i] = static_cast<float>(i) * 0.37f - 3.0f;
  v[4] = std::bit_cast<float>(0x7fc01234u);
  v[7] = -0.0f;
  v[11] = std::numeric_limits<float>::denorm_min();
  v[29] = -std::numeric_limits<float>::infinity();
  return Tensor::FromVector<float>(v, TensorShape({10, 3}));
}
Tensor Rows(const Tensor& t, int64_t begin, int64_t end) { return t.Slice(begin, end)->Copy(); }

class SaverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/tw_saver_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = *checkpoint::CanonicalDirectory(templ);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> Files() {
    std::vector<std::string> names = *checkpoint::ListDirectory(dir_);
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

// Who writes the files in the first save; the restores and the second save use the other
// way, so each reads the other's files. Saves in the saving process run on a cluster whose
// tasks allow no directory at all: nothing but this process touches a file.
class SaverRoundTripTest : public SaverTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool first_on_tasks() const { return GetParam(); }
  std::string AllowedFor(bool on_tasks) const { return on_tasks ? dir_ : std::string(); }
  SaverOptions Options(bool on_tasks) const {
    return {.checkpoint_dir = dir_, .write_on_variable_tasks = on_tasks};
  }
};
INSTANTIATE_TEST_SUITE_P(WhoWrites, SaverRoundTripTest, ::testing::Bool(),
                         [](const auto& param_info) {
                           return param_info.param ? std::string("VariableTasks")
                                                   : std::string("SavingProcess");
                         });

TEST_P(SaverRoundTripTest, RoundTripFromTwoPsToOneAndThreePs) {
  const Tensor emb = Embedding();
  const Tensor bias = Tensor::FromVector<double>({0.1, -1e300, 5e-324});
  const Tensor vocab = Tensor::FromVector<std::string>({"the", "", "a\nb", std::string(200, 'z')});
  const Tensor flags = Tensor::FromVector<bool>({true, false});
  const Tensor step = Tensor::Scalar<int64_t>(12345678901);
  std::string saved;
  {
    // Two ps tasks; "emb" is partitioned: rows [0, 6) on ps0, [6, 10) on ps1.
    auto cluster = Cluster::Start(2, AllowedFor(first_on_tasks()));
    ASSERT_NE(cluster, nullptr);
    Scope root = Scope::NewRootScope();
    auto e0 = ops::MakeVariable(root.WithDevice(Ps(0)), "emb/part_0", DT_FLOAT, {6, 3});
    auto e1 = ops::MakeVariable(root.WithDevice(Ps(1)), "emb/part_1", DT_FLOAT, {4, 3});
    auto b = ops::MakeVariable(root.WithDevice(Ps(1)), "bias", DT_DOUBLE, {3});
    auto v = ops::MakeVariable(root.WithDevice(Ps(0)), "vocab", DT_STRING, {4});
    auto f = ops::MakeVariable(root.WithDevice(Ps(1)), "flags", DT_BOOL, {2});
    auto s = ops::MakeVariable(root.WithDevice(Ps(0)), "global_step", DT_INT64, {});
    auto init =
        ops::Group(root, {ops::Assign(root, e0, Rows(emb, 0, 6)).op(),
                          ops::Assign(root, e1, Rows(emb, 6, 10)).op(),
                          ops::Assign(root, b, bias).op(), ops::Assign(root, v, vocab).op(),
                          ops::Assign(root, f, flags).op(), ops::Assign(root, s, step).op()});
    auto saver = Saver::Create(root,
                               {{"emb", e0, {10, 3}, 0},
                                {"emb", e1, {10, 3}, 6},
                                {"bias", b},
                                {"vocab", v},
                                {"flags", f},
                                {"global_step", s}},
                               Options(first_on_tasks()));
    ASSERT_TRUE(saver.ok()) << saver.status();
    ClientSession session(root, {.target = cluster->target()});
    ASSERT_TRUE(session.Run({}, {}, {init}).ok());
    auto prefix = (*saver)->Save(session, 100);
    ASSERT_TRUE(prefix.ok()) << prefix.status();
    EXPECT_EQ(*prefix, dir_ + "/model.ckpt-100");
    saved = *prefix;
  }
  EXPECT_THAT(Files(), ElementsAre("checkpoint", "model.ckpt-100.data-00000-of-00002",
                                   "model.ckpt-100.data-00001-of-00002", "model.ckpt-100.index"));
  auto latest = LatestCheckpoint(dir_);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, saved);

  {
    // One ps task; "emb" is one whole variable.
    auto cluster = Cluster::Start(1, AllowedFor(!first_on_tasks()));
    ASSERT_NE(cluster, nullptr);
    Scope root = Scope::NewRootScope().WithDevice(Ps(0));
    auto e = ops::MakeVariable(root, "embedding", DT_FLOAT, {10, 3});
    auto b = ops::MakeVariable(root, "bias", DT_DOUBLE, {3});
    auto v = ops::MakeVariable(root, "vocab", DT_STRING, {4});
    auto f = ops::MakeVariable(root, "flags", DT_BOOL, {2});
    auto s = ops::MakeVariable(root, "global_step", DT_INT64, {});
    auto saver = Saver::Create(
        root, {{"emb", e}, {"bias", b}, {"vocab", v}, {"flags", f}, {"global_step", s}},
        Options(!first_on_tasks()));
    ASSERT_TRUE(saver.ok()) << saver.status();
    std::vector<Output> reads;
    for (const auto& var : {e, b, v, f, s}) reads.push_back(ops::ReadVariable(root, var));
    ClientSession session(root, {.target = cluster->target()});
    Status restored = (*saver)->Restore(session, *latest);
    ASSERT_TRUE(restored.ok()) << restored;
    auto out = session.Run({}, reads);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0], emb);  // bitwise, NaN payload included
    EXPECT_EQ((*out)[1], bias);
    EXPECT_EQ((*out)[2], vocab);
    EXPECT_EQ((*out)[3], flags);
    EXPECT_EQ((*out)[4], step);
  }
  {
    // Three ps tasks; "emb" in three parts [0, 4), [4, 7), [7, 10); restored relative to
    // the directory.
    auto cluster = Cluster::Start(3, AllowedFor(!first_on_tasks()));
    ASSERT_NE(cluster, nullptr);
    Scope root = Scope::NewRootScope();
    auto e0 = ops::MakeVariable(root.WithDevice(Ps(0)), "emb/part_0", DT_FLOAT, {4, 3});
    auto e1 = ops::MakeVariable(root.WithDevice(Ps(1)), "emb/part_1", DT_FLOAT, {3, 3});
    auto e2 = ops::MakeVariable(root.WithDevice(Ps(2)), "emb/part_2", DT_FLOAT, {3, 3});
    auto b = ops::MakeVariable(root.WithDevice(Ps(2)), "bias", DT_DOUBLE, {3});
    auto s = ops::MakeVariable(root.WithDevice(Ps(1)), "global_step", DT_INT64, {});
    auto saver = Saver::Create(root,
                               {{"emb", e2, {10, 3}, 7},
                                {"emb", e0, {10, 3}, 0},
                                {"emb", e1, {10, 3}, 4},
                                {"bias", b},
                                {"global_step", s}},
                               Options(!first_on_tasks()));
    ASSERT_TRUE(saver.ok()) << saver.status();
    std::vector<Output> reads;
    for (const auto& var : {e0, e1, e2, b, s}) reads.push_back(ops::ReadVariable(root, var));
    ClientSession session(root, {.target = cluster->target()});
    Status restored = (*saver)->Restore(session, "model.ckpt-100");
    ASSERT_TRUE(restored.ok()) << restored;
    auto out = session.Run({}, reads);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0], Rows(emb, 0, 4));
    EXPECT_EQ((*out)[1], Rows(emb, 4, 7));
    EXPECT_EQ((*out)[2], Rows(emb, 7, 10));
    EXPECT_EQ((*out)[3], bias);
    EXPECT_EQ((*out)[4], step);

    // Saving from three ps tasks writes three shards that restore again.
    auto again = (*saver)->Save(session, 200);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(checkpoint::FileExists(dir_ + "/model.ckpt-200.data-00002-of-00003"));
    EXPECT_TRUE((*saver)->Restore(session, *again).ok());
  }
}

TEST_F(SaverTest, CorruptedCheckpointOnAClusterIsDataLoss) {
  auto cluster = Cluster::Start(2, dir_);
  ASSERT_NE(cluster, nullptr);
  Scope root = Scope::NewRootScope();
  auto a = ops::MakeVariable(root.WithDevice(Ps(0)), "a", DT_FLOAT, {4});
  auto b = ops::MakeVariable(root.WithDevice(Ps(1)), "b", DT_FLOAT, {4});
  auto init = ops::Group(root, {ops::Assign(root, a, {1.0f, 2.0f, 3.0f, 4.0f}).op(),
                                ops::Assign(root, b, {5.0f, 6.0f, 7.0f, 8.0f}).op()});
  auto saver = Saver::Create(root, {{"a", a}, {"b", b}}, {.checkpoint_dir = dir_});
  ASSERT_TRUE(saver.ok()) << saver.status();
  ClientSession session(root, {.target = cluster->target()});
  ASSERT_TRUE(session.Run({}, {}, {init}).ok());
  auto prefix = (*saver)->Save(session, 1);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  const std::string data = *prefix + ".data-00001-of-00002";  // b's shard
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2);
    f.put('\x55');
  }
  Status s = (*saver)->Restore(session, *prefix);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(Message(s), HasSubstr("tensor \"b\""));
  EXPECT_THAT(Message(s), HasSubstr(data));
  // A corrupted index is DataLoss too.
  {
    std::fstream f(*prefix + ".index", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x01');
  }
  s = (*saver)->Restore(session, *prefix);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(Message(s), HasSubstr(*prefix + ".index"));
}

// A graph comes from whoever can reach a task, so its checkpoint ops' `directory` ("/" here)
// cannot widen where the task's files go: outside the directories the task's owner allowed
// (ServerOptions.allowed_directories), a save or restore sent over the network is
// PermissionDenied naming the path and the allowed directory, and creates or reads nothing.
TEST_F(SaverTest, RemoteCheckpointOpsStayInTheServersAllowedDirectories) {
  auto cluster = Cluster::Start(1, dir_);
  ASSERT_NE(cluster, nullptr);
  const std::string outside = dir_ + "_outside";
  ASSERT_TRUE(std::filesystem::create_directory(outside));
  std::filesystem::create_directory_symlink(outside, dir_ + "/link");
  Scope root = Scope::NewRootScope().WithDevice(Ps(0));
  auto v = ops::MakeVariable(root, "v", DT_FLOAT, {2});
  auto init = ops::Assign(root, v, {1.0f, 2.0f});
  auto prefix = ops::Placeholder(root.WithOpName("prefix"), DT_STRING);
  const std::vector<ops::CheckpointSlice> slices{{.name = "v"}};
  auto save = ops::SaveVariables(root, prefix, {v}, slices, 0, 1, "/");
  auto merge = ops::MergeCheckpoint(root.WithControlDependencies({save}), prefix, 1, "/");
  auto restore = ops::RestoreVariables(root, prefix, {v}, slices, "/");
  ASSERT_TRUE(root.status().ok()) << root.status();
  ClientSession session(root, {.target = cluster->target()});
  ASSERT_TRUE(session.Run({}, {}, {init.op()}).ok());
  auto run = [&](const Operation& op, const std::string& path) {
    return session.Run({{prefix, Tensor::Scalar<std::string>(path)}}, {}, {op}).status();
  };
  // Inside the allowed directory the same graph works: the server's list decides.
  Status inside = run(merge, dir_ + "/ok");
  ASSERT_TRUE(inside.ok()) << inside;
  for (const char* file : {"/ok.index", "/ok.data-00000-of-00001"}) {
    std::filesystem::copy(dir_ + file, outside + file);
  }
  const std::string outside_name = std::filesystem::path(outside).filename().string();
  for (const std::string& bad : {outside + "/evil", dir_ + "/../" + outside_name + "/evil",
                                 dir_ + "/link/evil", dir_ + "/missing/../../" + outside_name}) {
    Status s = run(merge, bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << bad << ": " << s;
    EXPECT_THAT(Message(s), HasSubstr("\"" + bad + "\""));
    EXPECT_THAT(Message(s), HasSubstr("allowed: " + dir_));
  }
  EXPECT_THAT(*checkpoint::ListDirectory(outside),
              ::testing::UnorderedElementsAre("ok.index", "ok.data-00000-of-00001"));
  // Reading another directory's checkpoint is refused the same way.
  Status read = run(restore, outside + "/ok");
  EXPECT_EQ(read.code(), absl::StatusCode::kPermissionDenied) << read;
  EXPECT_THAT(Message(read), HasSubstr(outside + "/ok"));
  Status read_inside = run(restore, dir_ + "/ok");
  EXPECT_TRUE(read_inside.ok()) << read_inside;
  std::filesystem::remove_all(outside);
}

// Servers nobody gave directories let graphs that reach them over the network touch no
// file: a Saver that writes on the variables' tasks is refused on the ps task, creating
// nothing. A graph from a session in the task's own process is the program itself: the
// same Saver over a variable of the worker's own task, run by a session in its process,
// writes. And the default Saver, which writes in this process, saves and restores both.
TEST_F(SaverTest, GraphsFromTheNetworkTouchNoFileWithoutAllowedDirectoriesButTheProgramMay) {
  auto cluster = Cluster::Start(1, "");
  ASSERT_NE(cluster, nullptr);
  Scope root = Scope::NewRootScope();
  auto on_ps = ops::MakeVariable(root.WithDevice(Ps(0)), "on_ps", DT_FLOAT, {2});
  auto local = ops::MakeVariable(root.WithDevice("/job:worker/task:0"), "local", DT_FLOAT, {2});
  auto init = ops::Group(root, {ops::Assign(root, on_ps, {1.0f, 2.0f}).op(),
                                ops::Assign(root, local, {3.0f, 4.0f}).op()});
  auto set = ops::Assign(root, on_ps, {7.0f, 8.0f});
  auto read = ops::ReadVariable(root, on_ps);
  auto remote_files = Saver::Create(root, {{"on_ps", on_ps}},
                                    {.checkpoint_dir = dir_, .write_on_variable_tasks = true});
  ASSERT_TRUE(remote_files.ok()) << remote_files.status();
  auto own_files = Saver::Create(
      root, {{"local", local}}, {.checkpoint_dir = dir_ + "/own", .write_on_variable_tasks = true});
  ASSERT_TRUE(own_files.ok()) << own_files.status();
  auto here = Saver::Create(root, {{"on_ps", on_ps}, {"local", local}}, {.checkpoint_dir = dir_});
  ASSERT_TRUE(here.ok()) << here.status();
  ClientSession session(root, {.target = cluster->target()});  // in the worker's process
  ASSERT_TRUE(session.Run({}, {}, {init}).ok());

  auto refused = (*remote_files)->Save(session, 1);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied) << refused.status();
  EXPECT_THAT(Message(refused.status()), HasSubstr("allowed: none"));
  EXPECT_THAT(Files(), ElementsAre("own"));

  auto own = (*own_files)->Save(session, 1);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_TRUE(checkpoint::FileExists(*own + ".index"));

  auto saved = (*here)->Save(session, 2);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_THAT(Files(),
              ElementsAre("checkpoint", "model.ckpt-2.data-00000-of-00002",
                          "model.ckpt-2.data-00001-of-00002", "model.ckpt-2.index", "own"));
  ASSERT_TRUE(session.Run({}, {}, {set.op()}).ok());
  Status restored = (*here)->Restore(session, *saved);
  ASSERT_TRUE(restored.ok()) << restored;
  EXPECT_EQ((*session.Run({}, {read}))[0], Tensor::FromVector<float>({1.0f, 2.0f}));
}

// A save of an uninitialized variable fails in its step, before any file is written, and
// names the variable.
TEST_F(SaverTest, UninitializedVariableFailsTheSaveAndWritesNothing) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "lonely", DT_FLOAT, {2});
  auto saver = Saver::Create(root, {{"lonely", v}}, {.checkpoint_dir = dir_});
  ASSERT_TRUE(saver.ok()) << saver.status();
  ClientSession session(root);
  auto saved = (*saver)->Save(session, 1);
  EXPECT_EQ(saved.status().code(), absl::StatusCode::kFailedPrecondition) << saved.status();
  EXPECT_THAT(Message(saved.status()), HasSubstr("lonely"));
  EXPECT_THAT(Files(), ElementsAre());
}

// The remaining tests need no network: an in-process session.
TEST_F(SaverTest, MaxToKeepDeletesOldestAndStateFileListsKept) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "v", DT_INT32, {});
  auto step = ops::Placeholder(root, DT_INT32);
  auto set = ops::Assign(root, v, step);
  auto read = ops::ReadVariable(root, v);
  auto saver = Saver::Create(root, {{"v", v}}, {.checkpoint_dir = dir_, .max_to_keep = 2});
  ASSERT_TRUE(saver.ok()) << saver.status();
  ClientSession session(root);
  for (int i = 1; i <= 4; ++i) {
    ASSERT_TRUE(session.Run({{step, Tensor::Scalar<int32_t>(i)}}, {}, {set.op()}).ok());
    ASSERT_TRUE((*saver)->Save(session, i * 10).ok());
  }
  EXPECT_THAT(Files(),
              ElementsAre("checkpoint", "model.ckpt-30.data-00000-of-00001", "model.ckpt-30.index",
                          "model.ckpt-40.data-00000-of-00001", "model.ckpt-40.index"));
  auto state = checkpoint::ReadCheckpointState(dir_);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->model_checkpoint_path, "model.ckpt-40");
  EXPECT_THAT(state->all_model_checkpoint_paths, ElementsAre("model.ckpt-30", "model.ckpt-40"));
  EXPECT_EQ(*LatestCheckpoint(dir_), dir_ + "/model.ckpt-40");
  // An older kept checkpoint restores its own value.
  ASSERT_TRUE((*saver)->Restore(session, "model.ckpt-30").ok());
  EXPECT_EQ((*session.Run({}, {read}))[0].scalar<int32_t>(), 3);
  // Saving a step again replaces it and keeps one entry for it.
  ASSERT_TRUE((*saver)->Save(session, 30).ok());
  state = checkpoint::ReadCheckpointState(dir_);
  EXPECT_THAT(state->all_model_checkpoint_paths, ElementsAre("model.ckpt-40", "model.ckpt-30"));
}

// A graph with "a" (float [2]) saved at step 1, and a second graph to restore into.
class SaverErrorsTest : public SaverTest {
 protected:
  void SetUp() override {
    SaverTest::SetUp();
    Scope root = Scope::NewRootScope();
    auto a = ops::MakeVariable(root, "a", DT_FLOAT, {2});
    auto init = ops::Assign(root, a, {1.0f, 2.0f});
    auto saver = Saver::Create(root, {{"a", a}}, {.checkpoint_dir = dir_});
    ASSERT_TRUE(saver.ok()) << saver.status();
    ClientSession session(root);
    ASSERT_TRUE(session.Run({}, {init}).ok());
    auto prefix = (*saver)->Save(session, 1);
    ASSERT_TRUE(prefix.ok()) << prefix.status();
    prefix_ = *prefix;
  }

  // Restores a variable called `name` of the given dtype and shape from the checkpoint.
  Status RestoreInto(const std::string& name, DataType dtype, std::vector<int64_t> shape,
                     const std::string& prefix) {
    Scope root = Scope::NewRootScope();
    auto var = ops::MakeVariable(root, "x", dtype, std::move(shape));
    auto saver = Saver::Create(root, {{name, var}}, {.checkpoint_dir = dir_});
    if (!saver.ok()) return saver.status();
    ClientSession session(root);
    return (*saver)->Restore(session, prefix);
  }

  std::string prefix_;
};

TEST_F(SaverErrorsTest, MissingVariableIsNotFoundNamingIt) {
  Status s = RestoreInto("b", DT_FLOAT, {2}, prefix_);
  EXPECT_TRUE(IsNotFound(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("variable \"b\" is not in checkpoint"));
}

TEST_F(SaverErrorsTest, DtypeAndShapeMismatchNameTheVariable) {
  Status s = RestoreInto("a", DT_INT64, {2}, prefix_);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("variable \"a\" has dtype int64 but checkpoint"));
  EXPECT_THAT(Message(s), HasSubstr("has dtype float"));
  s = RestoreInto("a", DT_FLOAT, {3}, prefix_);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("variable \"a\" has shape [3] but checkpoint"));
  EXPECT_THAT(Message(s), HasSubstr("has shape [2]"));
}

TEST_F(SaverErrorsTest, PathsOutsideTheDirectoryAreRefused) {
  const std::string outside = dir_ + "_outside";
  ASSERT_TRUE(std::filesystem::create_directory(outside));
  std::filesystem::copy(prefix_ + ".index", outside + "/model.ckpt-1.index");
  std::filesystem::create_directory_symlink(outside, dir_ + "/link");
  for (const std::string& bad : {std::string("../model.ckpt-1"), outside + "/model.ckpt-1",
                                 std::string("link/model.ckpt-1"), dir_ + "/sub/../model.ckpt-1"}) {
    Status s = RestoreInto("a", DT_FLOAT, {2}, bad);
    EXPECT_TRUE(IsInvalidArgument(s)) << bad << ": " << s;
  }
  std::filesystem::remove_all(outside);
  Scope root = Scope::NewRootScope();
  auto a = ops::MakeVariable(root, "a", DT_FLOAT, {2});
  auto bad = Saver::Create(root, {{"a", a}}, {.checkpoint_dir = dir_, .basename = "../evil"});
  EXPECT_TRUE(IsInvalidArgument(bad.status())) << bad.status();
}

// The parts of Save for callers with their own session (the Python front-end): a Saver
// built without a directory, a CheckpointDirectory naming prefixes (without a step or with
// another basename), the values fetched and fed by the caller; a prefix from elsewhere
// refused when recorded.
TEST_F(SaverErrorsTest, SaveInPartsNamesPrefixesInsideTheDirectoryOnly) {
  Scope root = Scope::NewRootScope();
  auto a = ops::MakeVariable(root, "a", DT_FLOAT, {2});
  auto init = ops::Assign(root, a, {5.0f, 6.0f});
  auto read = ops::ReadVariable(root, a);
  auto saver = Saver::Create(root, {{"a", a}}, {});
  ASSERT_TRUE(saver.ok()) << saver.status();
  EXPECT_EQ((*saver)->directory(), nullptr);
  ClientSession session(root);
  EXPECT_EQ((*saver)->Save(session, 1).status().code(), absl::StatusCode::kFailedPrecondition);
  auto dir = train::CheckpointDirectory::Create(dir_);
  ASSERT_TRUE(dir.ok()) << dir.status();
  auto prefix = (*dir)->BeginSave(std::nullopt, "final");
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_EQ(*prefix, dir_ + "/final");
  EXPECT_EQ(*(*dir)->BeginSave(7), dir_ + "/model.ckpt-7");
  ASSERT_TRUE(session.Run({}, {init}).ok());
  auto values = session.Run({}, (*saver)->value_outputs());
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_TRUE((*saver)->WriteValues(*prefix, *values).ok());
  ASSERT_TRUE((*dir)->FinishSave(*prefix).ok());
  EXPECT_EQ(*LatestCheckpoint(dir_), dir_ + "/final");
  EXPECT_EQ(*(*dir)->BeginRestore("final"), dir_ + "/final");
  EXPECT_TRUE(IsNotFound((*dir)->BeginRestore("model.ckpt-7").status()));
  auto read_back = (*saver)->ReadValues(dir_ + "/final");
  ASSERT_TRUE(read_back.ok()) << read_back.status();
  EXPECT_EQ(*read_back, std::vector<Tensor>{Tensor::FromVector<float>({5.0f, 6.0f})});
  ASSERT_TRUE(session
                  .Run({{(*saver)->restore_inputs()[0], Tensor::FromVector<float>({1, 1})}}, {},
                       {(*saver)->restore_op()})
                  .ok());
  EXPECT_EQ((*session.Run({}, {read}))[0], Tensor::FromVector<float>({1.0f, 1.0f}));
  // A value of another dtype is refused, naming the variable.
  Status wrong = (*saver)->WriteValues(dir_ + "/wrong", {Tensor::FromVector<int32_t>({1, 2})});
  EXPECT_TRUE(IsInvalidArgument(wrong)) << wrong;
  EXPECT_THAT(Message(wrong), HasSubstr("variable \"a\" is int32, not float"));

  EXPECT_TRUE(IsInvalidArgument((*dir)->FinishSave("/elsewhere/final")));
  EXPECT_TRUE(IsInvalidArgument((*dir)->BeginSave(-1).status()));
  auto bad = (*dir)->BeginSave(1, "sub/dir");
  EXPECT_TRUE(IsInvalidArgument(bad.status())) << bad.status();
  EXPECT_THAT(Message(bad.status()), HasSubstr("\"sub/dir\" must be one path component"));
}

TEST_F(SaverErrorsTest, BadVariableListsAreRefusedNamingTheVariable) {
  Scope root = Scope::NewRootScope();
  auto p0 = ops::MakeVariable(root, "p0", DT_FLOAT, {2, 2});
  auto p1 = ops::MakeVariable(root, "p1", DT_FLOAT, {2, 2});
  auto gap =
      Saver::Create(root, {{"p", p0, {5, 2}, 0}, {"p", p1, {5, 2}, 3}}, {.checkpoint_dir = dir_});
  EXPECT_TRUE(IsInvalidArgument(gap.status()));
  EXPECT_THAT(Message(gap.status()), HasSubstr("variable \"p\" leave a gap at row 2"));
  auto twice = Saver::Create(root, {{"q", p0}, {"q", p1}}, {.checkpoint_dir = dir_});
  EXPECT_THAT(Message(twice.status()), HasSubstr("variable \"q\" is given twice"));
  auto bad_part = Saver::Create(root, {{"r", p0, {2, 3}, 0}}, {.checkpoint_dir = dir_});
  EXPECT_THAT(Message(bad_part.status()), HasSubstr("variable \"r\" has a part of shape [2,2]"));
}

TEST_F(SaverErrorsTest, InterruptedSaveNeverBecomesTheLatest) {
  // A save of step 2 that died after writing its data and shard index, before the merge,
  // with leftover temporary files; even a state file naming it does not make it the latest.
  const std::string broken = dir_ + "/model.ckpt-2";
  {
    auto w = checkpoint::ShardWriter::Create(broken, 0, 1);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add("a", TensorShape({2}), 0, Tensor::FromVector<float>({9, 9})).ok());
    ASSERT_TRUE((*w)->Finish().ok());
  }
  std::ofstream(broken + ".index.tmp-1-2-3") << "partial";
  std::ofstream(broken + ".data-00000-of-00001.tmp-4-5-6") << "partial";
  auto latest = LatestCheckpoint(dir_);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, prefix_);
  ASSERT_TRUE(
      checkpoint::WriteCheckpointState(dir_, {"model.ckpt-2", {"model.ckpt-1", "model.ckpt-2"}})
          .ok());
  latest = LatestCheckpoint(dir_);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, prefix_);
  EXPECT_TRUE(IsNotFound(RestoreInto("a", DT_FLOAT, {2}, broken)));

  // Saving step 2 for real replaces the debris.
  Scope root = Scope::NewRootScope();
  auto a = ops::MakeVariable(root, "a", DT_FLOAT, {2});
  auto init = ops::Assign(root, a, {3.0f, 4.0f});
  auto saver = Saver::Create(root, {{"a", a}}, {.checkpoint_dir = dir_});
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {init}).ok());
  ASSERT_TRUE((*saver)->Save(session, 2).ok());
  EXPECT_EQ(*LatestCheckpoint(dir_), broken);
  EXPECT_THAT(Files(),
              ElementsAre("checkpoint", "model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index",
                          "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index"));
}

TEST_F(SaverErrorsTest, NoStateFileIsNotFound) {
  std::filesystem::remove(dir_ + "/checkpoint");
  EXPECT_TRUE(IsNotFound(LatestCheckpoint(dir_).status()));
  std::ofstream(dir_ + "/checkpoint") << "model_checkpoint_path: unquoted\n";
  EXPECT_EQ(LatestCheckpoint(dir_).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace tw
