// `tw k8s tfjob` as a user runs it: the real binary, its manifest read back with yaml-cpp,
// and its one-line errors.
#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/cli_expectations.h"
#include "testing/subprocess.h"
#include "tools/k8s/yaml_test_util.h"
#include "yaml-cpp/yaml.h"

namespace tw {
namespace {

using testing::BuiltProgram;
using ::testing::ElementsAre;
using testing::ExpectCleanFailure;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ProcessResult;
using testing::RunProcess;
using tools::Keys;
using tools::Strings;

ProcessResult Tw(std::vector<std::string> args) {
  args.insert(args.begin(), BuiltProgram("tools/tw"));
  auto result = RunProcess(args, {{"TF_CONFIG", std::nullopt}});
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result.ok() && result->timed_out);
  return result.ok() ? *result : ProcessResult{};
}

TEST(TwK8sTfJobTest, PrintsATfJobWithEveryReplicaRunningTheCommand) {
  ProcessResult r = Tw({"k8s",       "tfjob",
                        "--name",    "wordcount",
                        "--image",   "registry.example.com/tensorweave:0.1",
                        "--cluster", "chief=1,worker=2,ps=1",
                        "--restart", "exit-code",
                        "--env",     "TW_LOG=debug",
                        "--env",     "RETRIES=3",
                        "--",        "tw",
                        "server",    "--threads",
                        "4",         "--bind-host=0.0.0.0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const YAML::Node doc = YAML::Load(r.out);  // throws, failing the test, if not YAML
  ASSERT_TRUE(doc.IsMap()) << r.out;
  EXPECT_EQ(doc["apiVersion"].as<std::string>(), "kubeflow.org/v1");
  EXPECT_EQ(doc["kind"].as<std::string>(), "TFJob");
  EXPECT_EQ(doc["metadata"]["name"].as<std::string>(), "wordcount");
  EXPECT_EQ(doc["spec"]["runPolicy"]["cleanPodPolicy"].as<std::string>(), "Running");
  // --backoff-limit goes with --restart on-failure only (the refusals: k8s_manifest_test).
  EXPECT_FALSE(doc["spec"]["runPolicy"]["backoffLimit"].IsDefined());

  const YAML::Node replicas = doc["spec"]["tfReplicaSpecs"];
  EXPECT_THAT(Keys(replicas), ElementsAre("Chief", "Worker", "PS"));
  EXPECT_EQ(replicas["Chief"]["replicas"].as<int>(), 1);
  EXPECT_EQ(replicas["Worker"]["replicas"].as<int>(), 2);
  EXPECT_EQ(replicas["PS"]["replicas"].as<int>(), 1);
  for (const std::string type : {"Chief", "Worker", "PS"}) {
    SCOPED_TRACE(type);
    EXPECT_EQ(replicas[type]["restartPolicy"].as<std::string>(), "ExitCode");
    const YAML::Node containers = replicas[type]["template"]["spec"]["containers"];
    ASSERT_EQ(containers.size(), 1u);
    const YAML::Node c = containers[0];
    EXPECT_EQ(c["name"].as<std::string>(), "tensorflow");
    EXPECT_EQ(c["image"].as<std::string>(), "registry.example.com/tensorweave:0.1");
    // Everything after `--` is the program's, flags included.
    EXPECT_FALSE(c["command"].IsDefined());  // the image's ENTRYPOINT (tini) stays
    EXPECT_THAT(Strings(c["args"]),
                ElementsAre("tw", "server", "--threads", "4", "--bind-host=0.0.0.0"));
    ASSERT_EQ(c["ports"].size(), 1u);
    EXPECT_EQ(c["ports"][0]["name"].as<std::string>(), "tfjob-port");
    EXPECT_EQ(c["ports"][0]["containerPort"].as<int>(), 2222);
    ASSERT_EQ(c["env"].size(), 2u);
    EXPECT_EQ(c["env"][1]["name"].as<std::string>(), "RETRIES");
    EXPECT_EQ(c["env"][1]["value"].as<std::string>(), "3");
    EXPECT_EQ(c["env"][1]["value"].Tag(), "!");  // quoted: Kubernetes wants a string
  }
}

TEST(TwK8sTfJobTest, OptionalFlagsReachTheManifest) {
  ProcessResult r = Tw({"k8s",
                        "tfjob",
                        "--name",
                        "train",
                        "--image",
                        "tw:dev",
                        "--cluster",
                        "worker=3,ps=2",
                        "--namespace",
                        "team-a",
                        "--image-pull-policy",
                        "if-not-present",
                        "--cpu",
                        "2",
                        "--memory",
                        "4Gi",
                        "--readiness-probe",
                        "--no-istio-sidecar",
                        "--",
                        "/usr/local/bin/train"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  EXPECT_EQ(doc["metadata"]["namespace"].as<std::string>(), "team-a");
  EXPECT_FALSE(doc["spec"]["runPolicy"]["backoffLimit"].IsDefined());
  const YAML::Node worker = doc["spec"]["tfReplicaSpecs"]["Worker"];
  EXPECT_EQ(worker["replicas"].as<int>(), 3);
  EXPECT_EQ(worker["restartPolicy"].as<std::string>(), "Never");
  EXPECT_EQ(
      worker["template"]["metadata"]["annotations"]["sidecar.istio.io/inject"].as<std::string>(),
      "false");
  const YAML::Node c = worker["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["imagePullPolicy"].as<std::string>(), "IfNotPresent");
  EXPECT_EQ(c["resources"]["requests"]["cpu"].as<std::string>(), "2");
  EXPECT_EQ(c["resources"]["requests"]["memory"].as<std::string>(), "4Gi");
  EXPECT_EQ(c["readinessProbe"]["tcpSocket"]["port"].as<int>(), 2222);
  EXPECT_THAT(Strings(c["args"]), ElementsAre("/usr/local/bin/train"));
  EXPECT_EQ(doc["spec"]["tfReplicaSpecs"]["PS"]["replicas"].as<int>(), 2);
}

// One NAME=VALUE per --env, so the words after it (with or without `--`) stay the command.
TEST(TwK8sTfJobTest, EnvTakesOneValuePerFlag) {
  ProcessResult r =
      Tw({"k8s", "tfjob", "--name", "wc", "--image", "tw:dev", "--cluster", "worker=2", "--env",
          "A=1", "--env", "B=x=y", "--", "tw", "server", "--threads=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  YAML::Node c =
      YAML::Load(r.out)["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0];
  ASSERT_EQ(c["env"].size(), 2u);
  EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "A");
  EXPECT_EQ(c["env"][1]["name"].as<std::string>(), "B");
  EXPECT_EQ(c["env"][1]["value"].as<std::string>(), "x=y");
  EXPECT_THAT(Strings(c["args"]), ElementsAre("tw", "server", "--threads=2"));

  r = Tw({"k8s", "tfjob", "--name", "wc", "--image", "tw:dev", "--cluster", "worker=2", "--env",
          "A=1", "tw", "server"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  c = YAML::Load(r.out)["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["env"].size(), 1u);
  EXPECT_THAT(Strings(c["args"]), ElementsAre("tw", "server"));
}

TEST(TwK8sTfJobTest, OneTaskJobGetsANoteAboutTfConfig) {
  ProcessResult r = Tw({"k8s", "tfjob", "--name", "solo", "--image", "tw:dev", "--cluster",
                        "worker=1", "--", "tw", "server"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no TF_CONFIG for a one-task job"));
  EXPECT_EQ(YAML::Load(r.out)["spec"]["tfReplicaSpecs"]["Worker"]["replicas"].as<int>(), 1);
}

TEST(TwK8sTfJobTest, BadInputIsOneLineAndExitOne) {
  const std::vector<std::string> base = {"k8s", "tfjob", "--name", "wc", "--image", "tw:dev"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return Tw(args);
  };
  ExpectCleanFailure(with({"--cluster", "files=1,reduce=1,map=2", "--", "wordcount"}),
                     "tw k8s tfjob: --cluster: job \"files\" is not a TFJob replica type");
  ExpectCleanFailure(with({"--cluster", "ps=two", "--", "tw", "server"}), "--cluster: ");
  ExpectCleanFailure(with({"--cluster", "chief=2", "--", "tw", "server"}),
                     "at most one chief task");
  ExpectCleanFailure(with({"--cluster", "ps=1", "--restart", "sometimes", "--", "tw"}),
                     "--restart \"sometimes\" must be one of never, on-failure, always, exit-code");
  ExpectCleanFailure(with({"--cluster", "worker=1", "--image-pull-policy", "latest", "--", "tw"}),
                     "--image-pull-policy \"latest\"");
  ExpectCleanFailure(with({"--cluster", "worker=1", "--env", "NOVALUE", "--", "tw"}),
                     "--env \"NOVALUE\" is not NAME=VALUE");
  ExpectCleanFailure(with({"--cluster", "worker=1", "--memory", "4GB", "--", "tw"}),
                     "--memory \"4GB\" is not a Kubernetes quantity");
  ExpectCleanFailure(with({"--cluster", "worker=1", "--backoff-limit=-1", "--", "tw"}),
                     "--backoff-limit -1 must be >= 0");
  ExpectCleanFailure(with({"--cluster", "worker=2"}), "no program to run: put it after --");
  ExpectCleanFailure(with({"--", "tw", "server"}), "--cluster is required");
  ExpectCleanFailure(Tw({"k8s", "tfjob", "--name", "Bad_Name", "--image", "tw:dev", "--cluster",
                         "worker=1", "--", "tw"}),
                     "--name \"Bad_Name\" must be a DNS-1035 label");
  ExpectCleanFailure(Tw({"k8s"}), "A subcommand is required");
}

TEST(TwK8sTfJobTest, HelpShowsTheCommandWithAnExample) {
  ProcessResult top = Tw({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_THAT(top.out, HasSubstr("tw k8s"));
  ProcessResult help = Tw({"k8s", "tfjob", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--restart"));
  EXPECT_THAT(help.out, HasSubstr("Examples:"));
  EXPECT_THAT(help.out, HasSubstr("kubectl apply"));
}

}  // namespace
}  // namespace tw
