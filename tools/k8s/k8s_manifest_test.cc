#include "tools/k8s/k8s_manifest.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/k8s/yaml_test_util.h"
#include "yaml-cpp/yaml.h"

namespace tw::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TfJobSpec BasicSpec() {
  TfJobSpec spec;
  spec.name = "wordcount";
  spec.image = "registry.example.com/tensorweave:0.1";
  spec.replicas = {{"chief", 1}, {"worker", 2}, {"ps", 1}};
  spec.command = {"tw", "server", "--threads", "4"};
  return spec;
}

// The manifest read back the way kubectl would see it. A manifest that does not parse
// makes YAML::Load throw, which fails the test.
YAML::Node Parse(const TfJobSpec& spec) {
  StatusOr<std::string> text = TfJobManifest(spec);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return YAML::Node();
  return YAML::Load(*text);
}

// The one container of a replica spec.
YAML::Node Container(const YAML::Node& doc, const std::string& type) {
  const YAML::Node containers =
      doc["spec"]["tfReplicaSpecs"][type]["template"]["spec"]["containers"];
  EXPECT_TRUE(containers.IsSequence()) << type;
  EXPECT_EQ(containers.size(), 1u) << type;
  return containers[0];
}

TEST(TfJobManifestTest, HasTheTfJobStructureTheOperatorReads) {
  TfJobSpec spec = BasicSpec();
  spec.restart_policy = RestartPolicy::kExitCode;
  const YAML::Node doc = Parse(spec);
  ASSERT_TRUE(doc.IsMap());
  EXPECT_THAT(Keys(doc), ElementsAre("apiVersion", "kind", "metadata", "spec"));
  EXPECT_EQ(doc["apiVersion"].as<std::string>(), "kubeflow.org/v1");
  EXPECT_EQ(doc["kind"].as<std::string>(), "TFJob");
  EXPECT_THAT(Keys(doc["metadata"]), ElementsAre("name"));
  EXPECT_EQ(doc["metadata"]["name"].as<std::string>(), "wordcount");

  EXPECT_THAT(Keys(doc["spec"]), ElementsAre("runPolicy", "tfReplicaSpecs"));
  EXPECT_THAT(Keys(doc["spec"]["runPolicy"]), ElementsAre("cleanPodPolicy"));
  EXPECT_EQ(doc["spec"]["runPolicy"]["cleanPodPolicy"].as<std::string>(), "Running");

  const YAML::Node replicas = doc["spec"]["tfReplicaSpecs"];
  EXPECT_THAT(Keys(replicas), ElementsAre("Chief", "Worker", "PS"));
  const std::map<std::string, int> expected_counts = {{"Chief", 1}, {"Worker", 2}, {"PS", 1}};
  for (const auto& [type, count] : expected_counts) {
    SCOPED_TRACE(type);
    const YAML::Node r = replicas[type];
    EXPECT_THAT(Keys(r), ElementsAre("replicas", "restartPolicy", "template"));
    EXPECT_EQ(r["replicas"].as<int>(), count);
    EXPECT_EQ(r["restartPolicy"].as<std::string>(), "ExitCode");
    EXPECT_THAT(Keys(r["template"]), ElementsAre("spec"));
    const YAML::Node c = Container(doc, type);
    EXPECT_THAT(Keys(c), ElementsAre("name", "image", "args", "ports", "securityContext"));
    EXPECT_EQ(c["name"].as<std::string>(), "tensorflow");
    EXPECT_EQ(c["image"].as<std::string>(), "registry.example.com/tensorweave:0.1");
    // All in args: a `command` would replace the image's ENTRYPOINT (tini).
    EXPECT_FALSE(c["command"].IsDefined());
    EXPECT_THAT(Strings(c["args"]), ElementsAre("tw", "server", "--threads", "4"));
    ASSERT_EQ(c["ports"].size(), 1u);
    EXPECT_EQ(c["ports"][0]["name"].as<std::string>(), "tfjob-port");
    EXPECT_EQ(c["ports"][0]["containerPort"].as<int>(), 2222);
    EXPECT_EQ(c["ports"][0]["containerPort"].Tag(), "?");  // a plain scalar: an integer
  }
}

TEST(TfJobManifestTest, CommandWithoutArgumentsHasNoArgs) {
  TfJobSpec spec = BasicSpec();
  spec.command = {"/usr/local/bin/wordcount"};
  const YAML::Node c = Container(Parse(spec), "Worker");
  EXPECT_FALSE(c["command"].IsDefined());
  EXPECT_THAT(Strings(c["args"]), ElementsAre("/usr/local/bin/wordcount"));
}

TEST(TfJobManifestTest, JobNamesBecomeTfJobReplicaTypes) {
  TfJobSpec spec = BasicSpec();
  spec.replicas = {{"master", 1}, {"Worker", 3}, {"evaluator", 1}};
  const YAML::Node replicas = Parse(spec)["spec"]["tfReplicaSpecs"];
  EXPECT_THAT(Keys(replicas), ElementsAre("Master", "Worker", "Evaluator"));
  EXPECT_EQ(replicas["Worker"]["replicas"].as<int>(), 3);
  EXPECT_EQ(replicas["Worker"]["restartPolicy"].as<std::string>(), "Never");  // the default

  spec.replicas = {{"ps", 2}, {"worker", 1}};  // no chief: worker:0 completes the job
  EXPECT_THAT(Keys(Parse(spec)["spec"]["tfReplicaSpecs"]), ElementsAre("PS", "Worker"));
}

TEST(TfJobManifestTest, OptionalFieldsGoWhereKubernetesReadsThem) {
  TfJobSpec spec = BasicSpec();
  spec.namespace_ = "kubeflow";
  spec.backoff_limit = 3;
  spec.restart_policy = RestartPolicy::kOnFailure;
  spec.image_pull_policy = ImagePullPolicy::kIfNotPresent;
  spec.cpu = "500m";
  spec.memory = "4Gi";
  spec.env = {{"TW_LOG_LEVEL", "debug"}, {"DATA_DIR", "/data"}};
  spec.readiness_probe = true;
  spec.disable_istio_sidecar = true;
  const YAML::Node doc = Parse(spec);
  EXPECT_EQ(doc["metadata"]["namespace"].as<std::string>(), "kubeflow");
  EXPECT_EQ(doc["spec"]["runPolicy"]["backoffLimit"].as<int>(), 3);
  EXPECT_EQ(doc["spec"]["runPolicy"]["cleanPodPolicy"].as<std::string>(), "Running");
  for (const std::string type : {"Chief", "Worker", "PS"}) {
    SCOPED_TRACE(type);
    const YAML::Node r = doc["spec"]["tfReplicaSpecs"][type];
    EXPECT_EQ(r["restartPolicy"].as<std::string>(), "OnFailure");
    EXPECT_EQ(r["template"]["metadata"]["annotations"]["sidecar.istio.io/inject"].as<std::string>(),
              "false");
    const YAML::Node c = Container(doc, type);
    EXPECT_EQ(c["imagePullPolicy"].as<std::string>(), "IfNotPresent");
    EXPECT_EQ(c["resources"]["requests"]["cpu"].as<std::string>(), "500m");
    EXPECT_EQ(c["resources"]["requests"]["memory"].as<std::string>(), "4Gi");
    // The memory request is the limit too unless --memory-limit says otherwise; no CPU limit.
    EXPECT_EQ(c["resources"]["limits"]["memory"].as<std::string>(), "4Gi");
    EXPECT_FALSE(c["resources"]["limits"]["cpu"].IsDefined());
    ASSERT_EQ(c["env"].size(), 2u);
    EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "TW_LOG_LEVEL");
    EXPECT_EQ(c["env"][0]["value"].as<std::string>(), "debug");
    EXPECT_EQ(c["env"][1]["name"].as<std::string>(), "DATA_DIR");
    EXPECT_EQ(c["env"][1]["value"].as<std::string>(), "/data");
    // A TCP probe: the kubelet's gRPC probe is plaintext and never reached a TLS server.
    EXPECT_EQ(c["readinessProbe"]["tcpSocket"]["port"].as<int>(), 2222);
    EXPECT_FALSE(c["readinessProbe"]["grpc"].IsDefined());
    EXPECT_GT(c["readinessProbe"]["periodSeconds"].as<int>(), 0);
    EXPECT_GE(c["readinessProbe"]["timeoutSeconds"].as<int>(), 5);  // a busy ps answers late
  }
}

TEST(TfJobManifestTest, ImagePullPolicyIsLeftOutByDefault) {
  const YAML::Node c = Container(Parse(BasicSpec()), "Chief");
  EXPECT_FALSE(c["imagePullPolicy"].IsDefined());
  EXPECT_FALSE(c["env"].IsDefined());
  EXPECT_FALSE(c["resources"].IsDefined());
  EXPECT_FALSE(c["readinessProbe"].IsDefined());
}

// Kubernetes rejects a number or a boolean where it wants a string (args, env values), and
// a word that is YAML syntax can make the manifest unreadable: the program's words are all
// double-quoted ("!" is yaml-cpp's tag for a quoted scalar, "?" for a plain one) and come
// back unchanged; other strings are quoted when YAML would retype them.
TEST(TfJobManifestTest, StringsThatLookLikeOtherTypesStayStrings) {
  TfJobSpec spec = BasicSpec();
  const std::vector<std::string> quoted = {"2222", "true", "Yes",  "off", "~",    "null", "",  "-1",
                                           "+3",   ".5",   ".inf", "1e3", "0x1f", "1:20", "<<"};
  const std::vector<std::string> plain = {"--port", "server", "--job_name=ps", "a.b"};
  // Words that are YAML syntax somewhere: flow collections, mapping keys, comments, block
  // indicators, quotes, escapes, line breaks.
  const std::vector<std::string> syntax = {":8080",
                                           "[64,32]",
                                           "[]",
                                           "{x: 1}",
                                           "a,b",
                                           "a: b # not a comment",
                                           "-",
                                           "- x",
                                           "? q",
                                           "'single'",
                                           "\"double\"",
                                           "back\\slash",
                                           "tab\there",
                                           "line\nbreak",
                                           "&anchor",
                                           "*alias",
                                           "!tag",
                                           "%directive",
                                           "@at",
                                           "`tick",
                                           "|",
                                           ">",
                                           "\xc3\xbcnicode",
                                           " padded "};
  spec.command = {"tw"};
  for (const auto* words : {&quoted, &plain, &syntax}) {
    spec.command.insert(spec.command.end(), words->begin(), words->end());
  }
  spec.env = {{"RETRIES", "3"}, {"VERBOSE", "on"}};
  spec.cpu = "2";
  spec.namespace_ = "123";
  const YAML::Node doc = Parse(spec);
  const YAML::Node args = Container(doc, "Worker")["args"];
  ASSERT_EQ(args.size(), spec.command.size());
  // Every word comes back as given, double-quoted whatever it is.
  for (size_t i = 0; i < spec.command.size(); ++i) {
    EXPECT_EQ(args[i].as<std::string>(), spec.command[i]);
    EXPECT_EQ(args[i].Tag(), "!") << "\"" << spec.command[i] << "\" must be quoted";
  }

  const YAML::Node c = Container(doc, "PS");
  EXPECT_EQ(c["env"][0]["value"].Tag(), "!");
  EXPECT_EQ(c["env"][0]["value"].as<std::string>(), "3");
  EXPECT_EQ(c["env"][1]["value"].Tag(), "!");
  EXPECT_EQ(c["resources"]["requests"]["cpu"].Tag(), "!");
  EXPECT_EQ(doc["metadata"]["namespace"].Tag(), "!");
  EXPECT_EQ(doc["metadata"]["namespace"].as<std::string>(), "123");
}

void ExpectInvalid(const TfJobSpec& spec, const std::string& message) {
  StatusOr<std::string> text = TfJobManifest(spec);
  ASSERT_FALSE(text.ok()) << *text;
  EXPECT_TRUE(IsInvalidArgument(text.status())) << text.status();
  EXPECT_THAT(std::string(text.status().message()), HasSubstr(message));
}

TEST(TfJobManifestTest, JobsThatAreNotTfJobReplicaTypesAreNamed) {
  TfJobSpec spec = BasicSpec();
  spec.replicas = {{"files", 1}, {"reduce", 1}, {"map", 2}};
  ExpectInvalid(spec, "--cluster: job \"files\" is not a TFJob replica type");
  spec.replicas = {{"chief", 1}, {"map", 2}};
  ExpectInvalid(spec, "job \"map\" is not a TFJob replica type");
  spec.replicas = {};
  ExpectInvalid(spec, "--cluster is empty");
}

TEST(TfJobManifestTest, ClusterShapesTfJobRejectsAreErrors) {
  TfJobSpec spec = BasicSpec();
  spec.replicas = {{"chief", 2}, {"worker", 1}};
  ExpectInvalid(spec, "job \"chief\" has 2 tasks; a TFJob has at most one chief task");
  spec.replicas = {{"master", 3}};
  ExpectInvalid(spec, "at most one master task");
  spec.replicas = {{"chief", 1}, {"master", 1}};
  ExpectInvalid(spec, "both chief and master");
  spec.replicas = {{"ps", 2}, {"evaluator", 1}};
  ExpectInvalid(spec, "no chief, master or worker");
  spec.replicas = {{"ps", 1}, {"worker", 1}, {"PS", 1}};
  ExpectInvalid(spec, "names job \"ps\" twice");
}

TEST(TfJobManifestTest, NamesMustBeKubernetesLabels) {
  TfJobSpec spec = BasicSpec();
  for (const std::string bad : {"", "Wordcount", "word_count", "1job", "job-", "a.b"}) {
    spec.name = bad;
    ExpectInvalid(spec, "--name \"" + bad + "\" must be a DNS-1035 label");
  }
  // The longest task name must fit in 63 characters: NAME-worker-10 is 10 more than NAME.
  spec.name = std::string(54, 'a');
  spec.replicas = {{"worker", 10}};
  EXPECT_TRUE(TfJobManifest(spec).ok());  // aaa...-worker-9: 63 characters
  spec.replicas = {{"worker", 11}};
  ExpectInvalid(spec, "is too long: task worker:10 would be named \"" + spec.name + "-worker-10\"");
  spec = BasicSpec();
  spec.namespace_ = "Team_A";
  ExpectInvalid(spec, "--namespace \"Team_A\" must be a DNS-1123 label");
}

TEST(TfJobManifestTest, OtherBadFieldsNameTheirFlag) {
  TfJobSpec spec = BasicSpec();
  spec.image = "";
  ExpectInvalid(spec, "--image \"\" must be a container image reference");
  spec.image = "my image";
  ExpectInvalid(spec, "--image \"my image\"");

  spec = BasicSpec();
  spec.command = {};
  ExpectInvalid(spec, "no program to run: put it after --");

  spec = BasicSpec();
  spec.backoff_limit = -1;
  ExpectInvalid(spec, "--backoff-limit -1 must be >= 0");
  spec = BasicSpec();
  spec.restart_policy = RestartPolicy::kAlways;
  ExpectInvalid(spec, "--restart always would restart a task that finished");
  spec = BasicSpec();
  spec.restart_policy = RestartPolicy::kExitCode;
  spec.backoff_limit = 2;
  ExpectInvalid(spec, "--backoff-limit counts restarts of --restart on-failure only");
  spec.restart_policy = RestartPolicy::kNever;
  ExpectInvalid(spec, "the pods --restart never restarts");
  spec = BasicSpec();
  spec.replicas = {{"worker", 1}};
  spec.readiness_probe = true;
  ExpectInvalid(spec, "--readiness-probe on a one-task job");

  spec = BasicSpec();
  spec.cpu = "lots";
  ExpectInvalid(spec, "--cpu \"lots\" is not a Kubernetes quantity");
  spec.cpu = "1.5";
  spec.memory = "4GB";
  ExpectInvalid(spec, "--memory \"4GB\" is not a Kubernetes quantity");
  spec.memory = "1e9";
  EXPECT_TRUE(TfJobManifest(spec).ok());

  spec = BasicSpec();
  spec.env = {{"1X", "y"}};
  ExpectInvalid(spec, "--env \"1X\": the name must match");
  spec.env = {{"TF_CONFIG", "{}"}};
  ExpectInvalid(spec, "--env TF_CONFIG: the TFJob operator sets TF_CONFIG");
  spec.env = {{"A", "1"}, {"A", "2"}};
  ExpectInvalid(spec, "--env A is given twice");
}

TEST(TfJobManifestTest, PolicyFlagSpellings) {
  EXPECT_EQ(*ParseRestartPolicy("never"), RestartPolicy::kNever);
  EXPECT_EQ(*ParseRestartPolicy("on-failure"), RestartPolicy::kOnFailure);
  EXPECT_EQ(*ParseRestartPolicy("always"), RestartPolicy::kAlways);
  EXPECT_EQ(*ParseRestartPolicy("exit-code"), RestartPolicy::kExitCode);
  EXPECT_EQ(*ParseRestartPolicy("ExitCode"), RestartPolicy::kExitCode);
  StatusOr<RestartPolicy> bad = ParseRestartPolicy("sometimes");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--restart \"sometimes\" must be one of never, on-failure, always, exit-code");

  EXPECT_EQ(*ParseImagePullPolicy("if-not-present"), ImagePullPolicy::kIfNotPresent);
  EXPECT_EQ(*ParseImagePullPolicy("IfNotPresent"), ImagePullPolicy::kIfNotPresent);
  EXPECT_EQ(*ParseImagePullPolicy("never"), ImagePullPolicy::kNever);
  EXPECT_EQ(*ParseImagePullPolicy("always"), ImagePullPolicy::kAlways);
  EXPECT_FALSE(ParseImagePullPolicy("latest").ok());
}

// What a platform engineer's cluster asks of a job: the "restricted" Pod Security Standard,
// a shared checkpoint claim the tasks may write, the TLS secret, limits, the job's
// deadlines and success policy.
TEST(TfJobManifestTest, PlatformSettingsGoWhereKubernetesReadsThem) {
  TfJobSpec spec = BasicSpec();
  spec.checkpoint_pvc = "ckpt";
  spec.checkpoint_size = "10Gi";
  spec.tls_secret = "tw-tls";
  spec.cpu_limit = "4";
  spec.memory_limit = "8Gi";
  spec.active_deadline_seconds = 3600;
  spec.ttl_seconds_after_finished = 0;
  spec.all_workers_success = true;
  StatusOr<std::string> text = TfJobManifest(spec);
  ASSERT_TRUE(text.ok()) << text.status();
  const std::vector<YAML::Node> docs = YAML::LoadAll(*text);
  ASSERT_EQ(docs.size(), 2u);
  const YAML::Node& doc = docs[0];
  EXPECT_EQ(doc["spec"]["runPolicy"]["activeDeadlineSeconds"].as<int>(), 3600);
  EXPECT_EQ(doc["spec"]["runPolicy"]["ttlSecondsAfterFinished"].as<int>(), 0);
  EXPECT_EQ(doc["spec"]["successPolicy"].as<std::string>(), "AllWorkers");
  for (const std::string type : {"Chief", "Worker", "PS"}) {
    SCOPED_TRACE(type);
    const YAML::Node pod = doc["spec"]["tfReplicaSpecs"][type]["template"]["spec"];
    EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
    EXPECT_EQ(pod["securityContext"]["runAsUser"].as<int>(), kImageUid);
    EXPECT_EQ(pod["securityContext"]["fsGroup"].as<int>(), kImageUid);
    EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
    EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>(), "ckpt");
    EXPECT_EQ(pod["volumes"][1]["secret"]["secretName"].as<std::string>(), "tw-tls");
    EXPECT_EQ(pod["volumes"][1]["secret"]["defaultMode"].as<int>(), 0440);
    const YAML::Node c = Container(doc, type);
    EXPECT_FALSE(c["securityContext"]["allowPrivilegeEscalation"].as<bool>());
    EXPECT_THAT(Strings(c["securityContext"]["capabilities"]["drop"]), ElementsAre("ALL"));
    EXPECT_EQ(c["volumeMounts"][0]["mountPath"].as<std::string>(), "/ckpt");
    EXPECT_EQ(c["volumeMounts"][1]["mountPath"].as<std::string>(), kTlsMountPath);
    EXPECT_TRUE(c["volumeMounts"][1]["readOnly"].as<bool>());
    EXPECT_EQ(c["resources"]["limits"]["cpu"].as<std::string>(), "4");
    EXPECT_EQ(c["resources"]["limits"]["memory"].as<std::string>(), "8Gi");
    // The servers may write checkpoints in the mounted directory.
    ASSERT_EQ(c["env"].size(), 1u);
    EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "TW_ALLOWED_DIRECTORIES");
    EXPECT_EQ(c["env"][0]["value"].as<std::string>(), "/ckpt");
  }
  const YAML::Node& claim = docs[1];
  EXPECT_EQ(claim["kind"].as<std::string>(), "PersistentVolumeClaim");
  EXPECT_EQ(claim["metadata"]["name"].as<std::string>(), "ckpt");
  EXPECT_THAT(Strings(claim["spec"]["accessModes"]), ElementsAre("ReadWriteMany"));
  EXPECT_EQ(claim["spec"]["resources"]["requests"]["storage"].as<std::string>(), "10Gi");
}

TEST(TfJobManifestTest, BadPlatformSettingsNameTheFlag) {
  auto expect_invalid = [](TfJobSpec spec, const std::string& what) {
    StatusOr<std::string> text = TfJobManifest(spec);
    ASSERT_FALSE(text.ok()) << what;
    EXPECT_THAT(std::string(text.status().message()), HasSubstr(what));
  };
  TfJobSpec spec = BasicSpec();
  spec.checkpoint_pvc = "Bad_Claim";
  expect_invalid(spec, "--checkpoint-pvc \"Bad_Claim\" must be a Kubernetes object name");
  spec = BasicSpec();
  spec.checkpoint_pvc = "ckpt";
  spec.checkpoint_dir = "relative";
  expect_invalid(spec, "--checkpoint-dir \"relative\" must be an absolute path");
  spec = BasicSpec();
  spec.checkpoint_size = "10Gi";
  expect_invalid(spec, "--checkpoint-size needs --checkpoint-pvc");
  spec = BasicSpec();
  spec.memory_limit = "8GB";
  expect_invalid(spec, "--memory-limit \"8GB\" is not a Kubernetes quantity");
  spec = BasicSpec();
  spec.active_deadline_seconds = 0;
  expect_invalid(spec, "--active-deadline 0 must be a positive number of seconds");
  spec = BasicSpec();
  spec.ttl_seconds_after_finished = -5;
  expect_invalid(spec, "--ttl-after-finished -5 must be >= 0 seconds");
  spec = BasicSpec();
  spec.command.push_back("caf\xe9");  // Latin-1, not UTF-8
  expect_invalid(spec, "word 5 of the program is not valid UTF-8");
  spec = BasicSpec();
  spec.env = {{"NAME", "\xff"}};
  expect_invalid(spec, "--env NAME's value is not valid UTF-8");
}

}  // namespace
}  // namespace tw::tools
