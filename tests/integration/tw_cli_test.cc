// The `tw` tool as a user runs it: a real process, its stdout, stderr and exit code.
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tensorweave/ops.h"
#include "testing/cli_expectations.h"
#include "testing/subprocess.h"

namespace tw {
namespace {

using testing::BuiltProgram;
using testing::EnvOverrides;
using testing::ExpectCleanFailure;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ProcessResult;
using testing::RunProcess;

ProcessResult Tw(std::vector<std::string> args, EnvOverrides env = {{"TF_CONFIG", std::nullopt}}) {
  args.insert(args.begin(), BuiltProgram("tools/tw"));
  auto result = RunProcess(args, env);
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->timed_out);
  return result.ok() ? *result : ProcessResult{};
}

TEST(TwClusterTest, ResolvesATfJobTfConfig) {
  ProcessResult r = Tw(
      {"cluster"},
      {{"TF_CONFIG",
        R"({"cluster":{"chief":["j-chief-0.ns.svc:2222"],"ps":["j-ps-0.ns.svc:2222"],)"
        R"("worker":["j-worker-0.ns.svc:2222"]},"task":{"type":"chief","index":0},"environment":"cloud"})"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["source"], "TF_CONFIG");
  EXPECT_EQ(json["cluster"]["worker"]["0"], "j-worker-0.ns.svc:2222");
  EXPECT_EQ(json["task"]["type"], "chief");
  EXPECT_EQ(json["task"]["index"], 0);
  EXPECT_EQ(json["is_chief"], true);
  EXPECT_EQ(json["num_workers"], 2);
  EXPECT_EQ(json["num_ps"], 1);
  EXPECT_EQ(json["target"], "grpc://j-chief-0.ns.svc:2222");
  EXPECT_EQ(json["bind_address"], "0.0.0.0:2222");
}

TEST(TwClusterTest, FlagsWinOverTfConfig) {
  ProcessResult r =
      Tw({"cluster", "--ps_hosts=localhost:2222", "--worker_hosts", "localhost:2223", "--job_name",
          "worker", "--task_index=0"},
         {{"TF_CONFIG", R"({"cluster":{"x":["a:1"]},"task":{"type":"x","index":0}})"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(json["source"], "flags");
  EXPECT_EQ(json["cluster"]["ps"]["0"], "localhost:2222");
  EXPECT_EQ(json["is_chief"], true);
  EXPECT_EQ(json["target"], "grpc://localhost:2223");
}

TEST(TwClusterTest, LocalDefaultWithoutTfConfig) {
  ProcessResult r = Tw({"cluster"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(json["source"], "default");
  EXPECT_EQ(json["target"], "");
  EXPECT_EQ(json["is_chief"], true);
}

TEST(TwClusterTest, UnknownTfConfigKeysAreWarnedOnStderr) {
  ProcessResult r = Tw(
      {"cluster"},
      {{"TF_CONFIG",
        R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":0},"sparseCluster":{}})"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("sparseCluster"));
  EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded());
}

TEST(TwClusterTest, BadInputIsOneLineAndExitOne) {
  ExpectCleanFailure(Tw({"cluster"}, {{"TF_CONFIG", R"({"cluster": {"ps": ["a:1"],})"}}),
                     "TF_CONFIG is not valid JSON: parse error at line 1, column 28");
  ExpectCleanFailure(
      Tw({"cluster"},
         {{"TF_CONFIG", R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":4}})"}}),
      "Task 4 was not defined in job \"worker\"");
  ExpectCleanFailure(Tw({"cluster", "--worker_hosts=a:1", "--task_index=-3"}),
                     "--task_index must be an integer >= 0");
  ExpectCleanFailure(Tw({"cluster", "--bogus"}), "unknown argument \"--bogus\"");
  ExpectCleanFailure(Tw({"cluster"}, {{"TF_CONFIG", std::string("{\"cluster\":\xff}")}}),
                     "TF_CONFIG is not valid JSON");
}

TEST(TwConfigTest, WritesSourceableScriptsLikeTheSeeds) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "tw_config_out";
  std::filesystem::remove_all(dir);
  ProcessResult r = Tw({"config", "--cluster", "files=1,reduce=1,map=2", "--out", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name :
       {"config_files_0.sh", "config_reduce_0.sh", "config_map_0.sh", "config_map_1.sh"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / name)) << name;
  }
  // Sourcing a script gives `tw cluster` that task.
  const std::string script = "source '" + (dir / "config_map_1.sh").string() + "' && exec '" +
                             BuiltProgram("tools/tw") + "' cluster";
  auto sourced = RunProcess({"/bin/bash", "-c", script}, {{"TF_CONFIG", std::nullopt}});
  ASSERT_TRUE(sourced.ok());
  ASSERT_EQ(sourced->exit_code, 0) << sourced->err;
  auto json = nlohmann::json::parse(sourced->out, nullptr, false);
  EXPECT_EQ(json["task"]["type"], "map");
  EXPECT_EQ(json["task"]["index"], 1);
  EXPECT_EQ(json["target"], "grpc://localhost:2225");
  EXPECT_EQ(json["cluster"]["reduce"]["0"], "localhost:2223");
}

TEST(TwConfigTest, RefusesToOverwriteWithoutForce) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "tw_config_force";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(Tw({"config", "--cluster", "ps=1,worker=1", "--out", dir.string()}).exit_code, 0);
  std::ofstream(dir / "config_ps_0.sh") << "# edited by hand\n";
  ExpectCleanFailure(Tw({"config", "--cluster", "ps=1,worker=1", "--out", dir.string()}),
                     "config_ps_0.sh exists; pass --force to overwrite");
  std::ifstream kept(dir / "config_ps_0.sh");
  std::string first_line;
  std::getline(kept, first_line);
  EXPECT_EQ(first_line, "# edited by hand");
  EXPECT_EQ(
      Tw({"config", "--cluster", "ps=1,worker=1", "--out", dir.string(), "--force"}).exit_code, 0);
}

TEST(TwConfigTest, BadShapeOrHostIsOneLineAndExitOne) {
  const std::string dir = ::testing::TempDir() + "/tw_config_bad";
  ExpectCleanFailure(Tw({"config", "--cluster", "ps=two", "--out", dir}), "--cluster: ");
  ExpectCleanFailure(Tw({"config", "--cluster", "ps=1", "--host", "a'b", "--out", dir}), "--host");
  ExpectCleanFailure(Tw({"config", "--cluster", "ps=1"}), "--out is required");
}

TEST(TwGraphTest, DrawsAGraphDefAsDot) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "weights", DT_FLOAT, {});
  ops::AssignAdd(root.WithOpName("update"), v, 1.0f);
  const std::string path = ::testing::TempDir() + "/model.pb";
  std::ofstream(path, std::ios::binary) << root.ToGraphDef()->SerializeAsString();
  ProcessResult r = Tw({"graph", "--dot", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("digraph tensorweave {"));
  EXPECT_THAT(r.out, HasSubstr("\"weights\" -> \"update\";"));
  EXPECT_THAT(r.out, HasSubstr("/job:ps/task:0"));
}

TEST(TwGraphTest, UnreadableOrBadFileIsOneLineAndExitOne) {
  ExpectCleanFailure(Tw({"graph", "--dot", "/nonexistent/model.pb"}),
                     "cannot read /nonexistent/model.pb");
  const std::string path = ::testing::TempDir() + "/not_a_graph.pb";
  std::ofstream(path, std::ios::binary) << "\xff\xff\xff garbage";
  ExpectCleanFailure(Tw({"graph", "--dot", path}), "is not a binary GraphDef");
  // A directory read as zero bytes, an empty GraphDef: an empty graph and exit 0.
  const std::string dir = ::testing::TempDir() + "/a_directory.pb";
  std::filesystem::create_directories(dir);
  ExpectCleanFailure(Tw({"graph", "--dot", dir}), dir + " is a directory, not a GraphDef file");
}

// -5 used to mean "one per core" and 100000 started 100000 threads. Refused before any
// server starts, naming the flag.
TEST(TwServerTest, ThreadsOutsideTheirRangeAreRefused) {
  for (const std::string threads : {"-5", "100000", "1025"}) {
    ExpectCleanFailure(Tw({"server", "--threads=" + threads}),
                       "--threads must be from 0 (one per core) to 1024, got " + threads);
  }
}

TEST(TwHelpTest, ExplainsCommandsWithExamples) {
  ProcessResult top = Tw({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_THAT(top.out, HasSubstr("tw cluster"));
  EXPECT_THAT(top.out, HasSubstr("tw config"));
  ProcessResult cluster = Tw({"cluster", "--help"});
  EXPECT_EQ(cluster.exit_code, 0);
  EXPECT_THAT(cluster.out, HasSubstr("--<job>_hosts"));
  EXPECT_THAT(cluster.out, HasSubstr("Examples:"));
  ProcessResult config = Tw({"config", "--help"});
  EXPECT_THAT(config.out, HasSubstr("--base-port"));
  EXPECT_THAT(config.out, HasSubstr("Example:"));
  ExpectCleanFailure(Tw({}), "A subcommand is required");
}

}  // namespace
}  // namespace tw
