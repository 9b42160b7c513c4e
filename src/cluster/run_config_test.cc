// RunConfig resolution for the TF_CONFIG values and flags that real producers emit:
// Kubeflow TFJob (every era), AI Platform, Vertex AI, SageMaker, hand-written flags, and
// the seeds' make_configs script. Errors are in run_config_errors_test.cc.
#include "tensorweave/run_config.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

struct Expected {
  std::string source;
  std::string type;
  int index;
  bool is_chief;
  int num_workers;
  int num_ps;
  std::string target;
  std::string bind;
};

struct Case {
  std::string name;
  std::vector<std::string> args;
  std::optional<std::string> tf_config;
  Expected want;
};

const char kTfJobCluster[] =
    R"("cluster":{"chief":["mnist-chief-0.kubeflow.svc:2222"],"ps":["mnist-ps-0.kubeflow.svc:2222"],)"
    R"("worker":["mnist-worker-0.kubeflow.svc:2222","mnist-worker-1.kubeflow.svc:2222"]})";

std::string TfJob(const std::string& type, int index, const std::string& extra = "") {
  return std::string("{") + kTfJobCluster + R"(,"task":{"type":")" + type + R"(","index":)" +
         std::to_string(index) + R"(},"environment":"cloud")" + extra + "}";
}

const char kSeedsCluster[] =
    R"({"cluster": {"files": ["localhost:2222"], "map": ["localhost:2224", "localhost:2225"],)"
    R"( "reduce": ["localhost:2223"]}, "task": {"index": %d, "type": "%s"}})";

std::string Seeds(const std::string& type, int index) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), kSeedsCluster, index, type.c_str());
  return buf;
}

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      // --- Kubeflow TFJob v1 (release-1.9): chief, workers, ps; environment "cloud".
      {"tfjob_chief",
       {},
       TfJob("chief", 0),
       {"TF_CONFIG", "chief", 0, true, 3, 1, "grpc://mnist-chief-0.kubeflow.svc:2222",
        "0.0.0.0:2222"}},
      {"tfjob_worker0_not_chief_when_chief_exists",
       {},
       TfJob("worker", 0),
       {"TF_CONFIG", "worker", 0, false, 3, 1, "grpc://mnist-worker-0.kubeflow.svc:2222",
        "0.0.0.0:2222"}},
      {"tfjob_worker1",
       {},
       TfJob("worker", 1),
       {"TF_CONFIG", "worker", 1, false, 3, 1, "grpc://mnist-worker-1.kubeflow.svc:2222",
        "0.0.0.0:2222"}},
      {"tfjob_ps",
       {},
       TfJob("ps", 0),
       {"TF_CONFIG", "ps", 0, false, 3, 1, "grpc://mnist-ps-0.kubeflow.svc:2222", "0.0.0.0:2222"}},
      // TFJob >= v1.1 puts the evaluator inside "cluster"; it is never chief nor a worker.
      {"tfjob_evaluator_inside_cluster",
       {},
       R"({"cluster":{"chief":["j-chief-0.ns.svc:2222"],"evaluator":["j-evaluator-0.ns.svc:2222"],)"
       R"("worker":["j-worker-0.ns.svc:2222"]},"task":{"type":"evaluator","index":0},"environment":"cloud"})",
       {"TF_CONFIG", "evaluator", 0, false, 2, 0, "", "0.0.0.0:2222"}},
      {"tfjob_chief_with_evaluator_in_cluster",
       {},
       R"({"cluster":{"chief":["j-chief-0.ns.svc:2222"],"evaluator":["j-evaluator-0.ns.svc:2222"],)"
       R"("worker":["j-worker-0.ns.svc:2222"]},"task":{"type":"chief","index":0},"environment":"cloud"})",
       {"TF_CONFIG", "chief", 0, true, 2, 0, "grpc://j-chief-0.ns.svc:2222", "0.0.0.0:2222"}},
      // No chief: worker 0 is the chief (TFJob success rule, multi_worker_util).
      {"tfjob_no_chief_worker0",
       {},
       R"({"cluster":{"ps":["d-ps-0.default.svc:2222"],"worker":["d-worker-0.default.svc:2222","d-worker-1.default.svc:2222"]},)"
       R"("task":{"type":"worker","index":0},"environment":"cloud"})",
       {"TF_CONFIG", "worker", 0, true, 2, 1, "grpc://d-worker-0.default.svc:2222",
        "0.0.0.0:2222"}},
      // TFJob v0.3-v0.4 test string (bare service names).
      {"tfjob_v03_test_string",
       {},
       R"({"cluster":{"ps":["test-tfjob-ps-0:2222"],"worker":["test-tfjob-worker-0:2222"]},"task":{"type":"worker","index":0},"environment":"cloud"})",
       {"TF_CONFIG", "worker", 0, true, 1, 1, "grpc://test-tfjob-worker-0:2222", "0.0.0.0:2222"}},
      // TFJob v0.2: FQDNs with svc.cluster.local and no environment key.
      {"tfjob_v02_fqdn_no_environment",
       {},
       R"({"cluster":{"ps":["j-ps-0.kubeflow.svc.cluster.local:2222"],"worker":["j-worker-0.kubeflow.svc.cluster.local:2222"]},"task":{"type":"ps","index":0}})",
       {"TF_CONFIG", "ps", 0, false, 1, 1, "grpc://j-ps-0.kubeflow.svc.cluster.local:2222",
        "0.0.0.0:2222"}},
      // TFJob CUSTOM_CLUSTER_DOMAIN and a per-replica-type port.
      {"tfjob_custom_domain_and_port",
       {},
       R"({"cluster":{"ps":["j-ps-0.team.svc.corp.example:3333"],"worker":["j-worker-0.team.svc.corp.example:2222"]},"task":{"type":"ps","index":0},"environment":"cloud"})",
       {"TF_CONFIG", "ps", 0, false, 1, 1, "grpc://j-ps-0.team.svc.corp.example:3333",
        "0.0.0.0:3333"}},
      // TFJob enableDynamicWorker: sparse worker object with only the own entry.
      {"tfjob_sparse_worker3",
       {},
       R"({"cluster":{"worker":{"3":"j-worker-3.ns.svc:2222"},"ps":["j-ps-0.ns.svc:2222"]},"task":{"type":"worker","index":3}})",
       {"TF_CONFIG", "worker", 3, false, 1, 1, "grpc://j-worker-3.ns.svc:2222", "0.0.0.0:2222"}},
      {"tfjob_sparse_ps0_with_empty_worker_job",
       {},
       R"({"cluster":{"worker":{},"ps":["j-ps-0.ns.svc:2222"]},"task":{"type":"ps","index":0}})",
       {"TF_CONFIG", "ps", 0, false, 0, 1, "grpc://j-ps-0.ns.svc:2222", "0.0.0.0:2222"}},
      // --- Google AI Platform: legacy "master", extra task and top-level keys, string index.
      {"ai_platform_master",
       {},
       R"({"cluster":{"master":["cmle-training-master-e4-0:2222"],"ps":["cmle-training-ps-e4-0:2222"],)"
       R"("worker":["cmle-training-worker-e4-0:2222","cmle-training-worker-e4-1:2222"]},)"
       R"("task":{"type":"master","index":0,"cloud":"e4"},"job":{"scale_tier":"STANDARD_1"},"environment":"cloud"})",
       {"TF_CONFIG", "master", 0, true, 3, 1, "grpc://cmle-training-master-e4-0:2222",
        "0.0.0.0:2222"}},
      {"ai_platform_worker_string_index_and_trial",
       {},
       R"({"cluster":{"master":["m-0:2222"],"worker":["w-0:2222","w-1:2222"]},)"
       R"("task":{"type":"worker","index":"1","trial":"1"},"environment":"cloud"})",
       {"TF_CONFIG", "worker", 1, false, 3, 0, "grpc://w-1:2222", "0.0.0.0:2222"}},
      {"ai_platform_evaluator_outside_cluster",
       {},
       R"({"cluster":{"master":["m-0:2222"],"worker":["w-0:2222"]},"task":{"type":"evaluator","index":0},"environment":"cloud"})",
       {"TF_CONFIG", "evaluator", 0, false, 2, 0, "", "127.0.0.1:0"}},
      {"estimator_evaluator_any_index_outside_cluster",
       {},
       R"({"cluster":{"chief":["c:2222"]},"task":{"type":"evaluator","index":3}})",
       {"TF_CONFIG", "evaluator", 3, false, 1, 0, "", "127.0.0.1:0"}},
      // --- Vertex AI: chief/worker/ps pools.
      {"vertex_chief",
       {},
       R"({"cluster":{"chief":["cmle-training-workerpool0-ab-0:2222"],"worker":["cmle-training-workerpool1-ab-0:2222"],)"
       R"("ps":["cmle-training-workerpool2-ab-0:2222"]},"task":{"type":"chief","index":0},"environment":"cloud"})",
       {"TF_CONFIG", "chief", 0, true, 2, 1, "grpc://cmle-training-workerpool0-ab-0:2222",
        "0.0.0.0:2222"}},
      // --- SageMaker PS mode: master/worker on 2222, every host also a ps on 2223.
      {"sagemaker_ps_mode_ps1",
       {},
       R"({"cluster":{"master":["algo-1:2222"],"ps":["algo-1:2223","algo-2:2223"],"worker":["algo-2:2222"]},)"
       R"("task":{"type":"ps","index":1},"environment":"cloud"})",
       {"TF_CONFIG", "ps", 1, false, 2, 2, "grpc://algo-2:2223", "0.0.0.0:2223"}},
      {"sagemaker_resolver_workers_only",
       {},
       R"({"cluster":{"worker":["algo-1:2223","algo-2:2223"]},"task":{"type":"worker","index":1}})",
       {"TF_CONFIG", "worker", 1, false, 2, 0, "grpc://algo-2:2223", "0.0.0.0:2223"}},
      // --- The seeds' make_configs.py (word count): no chief, no worker job.
      {"seeds_map0",
       {},
       Seeds("map", 0),
       {"TF_CONFIG", "map", 0, false, 0, 0, "grpc://localhost:2224", "0.0.0.0:2224"}},
      {"seeds_files0",
       {},
       Seeds("files", 0),
       {"TF_CONFIG", "files", 0, false, 0, 0, "grpc://localhost:2222", "0.0.0.0:2222"}},
      {"seeds_reduce0",
       {},
       Seeds("reduce", 0),
       {"TF_CONFIG", "reduce", 0, false, 0, 0, "grpc://localhost:2223", "0.0.0.0:2223"}},
      // --- Targets: rpc_layer, session_master, single node.
      {"rpc_layer_prefixes_target",
       {},
       R"({"cluster":{"worker":["a:1","b:2"]},"task":{"type":"worker","index":1},"rpc_layer":"grpc+tls"})",
       {"TF_CONFIG", "worker", 1, false, 2, 0, "grpc+tls://b:2", "0.0.0.0:2"}},
      {"session_master_wins",
       {},
       R"({"cluster":{"worker":["a:1","b:2"]},"task":{"type":"worker","index":1},"session_master":"grpc://a:1"})",
       {"TF_CONFIG", "worker", 1, false, 2, 0, "grpc://a:1", "0.0.0.0:2"}},
      {"eval_session_master_for_evaluator",
       {},
       R"({"cluster":{"chief":["c:1"]},"task":{"type":"evaluator","index":0},"eval_session_master":"grpc://c:1"})",
       {"TF_CONFIG", "evaluator", 0, false, 1, 0, "grpc://c:1", "127.0.0.1:0"}},
      {"single_node_cluster_has_empty_target",
       {},
       R"({"cluster":{"worker":["only:2222"]},"task":{"type":"worker","index":0}})",
       {"TF_CONFIG", "worker", 0, true, 1, 0, "", "0.0.0.0:2222"}},
      // --- Local default: unset, empty, blank, {} and keys without a cluster.
      {"unset_is_local", {}, std::nullopt, {"default", "worker", 0, true, 1, 0, "", "127.0.0.1:0"}},
      {"empty_is_local", {}, "", {"default", "worker", 0, true, 1, 0, "", "127.0.0.1:0"}},
      {"blank_is_local", {}, " \n\t", {"default", "worker", 0, true, 1, 0, "", "127.0.0.1:0"}},
      {"empty_object_is_local", {}, "{}", {"default", "worker", 0, true, 1, 0, "", "127.0.0.1:0"}},
      {"empty_cluster_is_local",
       {},
       R"({"cluster":{},"environment":"cloud"})",
       {"default", "worker", 0, true, 1, 0, "", "127.0.0.1:0"}},
      {"local_with_explicit_worker0",
       {},
       R"({"task":{"type":"worker","index":0}})",
       {"TF_CONFIG", "worker", 0, true, 1, 0, "", "127.0.0.1:0"}},
      // --- Shapes: IPv6, upper case, sparse gaps, port 0.
      {"bracketed_ipv6",
       {},
       R"({"cluster":{"worker":["[::1]:2222","[fe80::1]:2223"]},"task":{"type":"worker","index":1}})",
       {"TF_CONFIG", "worker", 1, false, 2, 0, "grpc://[fe80::1]:2223", "[::]:2223"}},
      {"upper_case_names_are_lowered",
       {},
       R"({"cluster":{"PS":["p:1"],"Worker":["w:2"]},"task":{"type":"Worker","index":0}})",
       {"TF_CONFIG", "worker", 0, true, 1, 1, "grpc://w:2", "0.0.0.0:2"}},
      {"index_string_with_spaces",
       {},
       R"({"cluster":{"worker":["a:1","b:2","c:3"]},"task":{"type":"worker","index":" 2 "}})",
       {"TF_CONFIG", "worker", 2, false, 3, 0, "grpc://c:3", "0.0.0.0:3"}},
      {"port_zero",
       {},
       R"({"cluster":{"worker":["a:0","b:0"]},"task":{"type":"worker","index":0}})",
       {"TF_CONFIG", "worker", 0, true, 2, 0, "grpc://a:0", "0.0.0.0:0"}},
      // --- Flags (mnist_replica, tf_cnn_benchmarks, early Kubeflow launchers).
      {"flags_ps_worker_equals_form",
       {"--ps_hosts=localhost:2222", "--worker_hosts=localhost:2223,localhost:2224",
        "--job_name=worker", "--task_index=1"},
       std::nullopt,
       {"flags", "worker", 1, false, 2, 1, "grpc://localhost:2224", "0.0.0.0:2224"}},
      {"flags_space_separated_values",
       {"--ps_hosts", "h0:2222", "--worker_hosts", "h1:2222", "--job_name", "ps", "--task_index",
        "0"},
       std::nullopt,
       {"flags", "ps", 0, false, 1, 1, "grpc://h0:2222", "0.0.0.0:2222"}},
      {"flags_kubeflow_launcher_fqdn",
       {"--ps_hosts=tfjob-ps-0.kubeflow.svc.cluster.local:2222",
        "--worker_hosts=tfjob-worker-0.kubeflow.svc.cluster.local:2222", "--job_name=worker",
        "--task_index=0"},
       std::nullopt,
       {"flags", "worker", 0, true, 1, 1, "grpc://tfjob-worker-0.kubeflow.svc.cluster.local:2222",
        "0.0.0.0:2222"}},
      {"flags_override_tf_config_task",
       {"--task_index=1"},
       TfJob("worker", 0),
       {"flags", "worker", 1, false, 3, 1, "grpc://mnist-worker-1.kubeflow.svc:2222",
        "0.0.0.0:2222"}},
      {"flags_cluster_override_tf_config_cluster",
       {"--worker_hosts=x:1,y:2", "--job_name=worker", "--task_index=1"},
       TfJob("ps", 0),
       {"flags", "worker", 1, false, 2, 0, "grpc://y:2", "0.0.0.0:2"}},
      {"flags_cluster_json",
       {R"(--cluster={"ps":["a:1"],"worker":{"0":"b:2","1":"c:3"}})", "--job_name=worker",
        "--task_index=0"},
       std::nullopt,
       {"flags", "worker", 0, true, 2, 1, "grpc://b:2", "0.0.0.0:2"}},
      {"flags_std_server_cluster_spec",
       {"--cluster_spec=ps|a:1;a:2,worker|b:1", "--job_name=ps", "--task_id=1"},
       std::nullopt,
       {"flags", "ps", 1, false, 1, 2, "grpc://a:2", "0.0.0.0:2"}},
      {"flags_empty_ps_hosts_means_no_ps_job",
       {"--ps_hosts=", "--worker_hosts=a:1,b:2", "--job_name=worker", "--task_index=0"},
       std::nullopt,
       {"flags", "worker", 0, true, 2, 0, "grpc://a:1", "0.0.0.0:1"}},
      {"flags_infer_single_job_and_task",
       {"--worker_hosts=solo:5000"},
       std::nullopt,
       {"flags", "worker", 0, true, 1, 0, "", "0.0.0.0:5000"}},
      {"flags_any_job_name",
       {"--files_hosts=f:1", "--map_hosts=m:2,m:3", "--reduce_hosts=r:4", "--job_name=map",
        "--task_index=1"},
       std::nullopt,
       {"flags", "map", 1, false, 0, 0, "grpc://m:3", "0.0.0.0:3"}},
  };
  return *cases;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RunConfigCaseTest : public ::testing::TestWithParam<Case> {};

TEST_P(RunConfigCaseTest, Resolves) {
  const Case& c = GetParam();
  auto config = RunConfig::Resolve(c.args, c.tf_config);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(ConfigSourceName(config->source()), c.want.source);
  EXPECT_EQ(config->task_type(), c.want.type);
  EXPECT_EQ(config->task_index(), c.want.index);
  EXPECT_EQ(config->is_chief(), c.want.is_chief);
  EXPECT_EQ(config->num_workers(), c.want.num_workers);
  EXPECT_EQ(config->num_ps(), c.want.num_ps);
  EXPECT_EQ(config->target(), c.want.target);
  EXPECT_EQ(config->bind_address(), c.want.bind);
}

INSTANTIATE_TEST_SUITE_P(Producers, RunConfigCaseTest, ::testing::ValuesIn(Cases()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(RunConfigTest, AtLeastFortyProducerCases) { EXPECT_GE(Cases().size(), 40u); }

TEST(RunConfigTest, LocalDefaultClusterIsOneLoopbackTask) {
  auto config = RunConfig::Resolve({}, std::nullopt);
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->is_local());
  EXPECT_EQ(config->cluster().ToJson(), R"({"worker":["localhost:0"]})");
  EXPECT_TRUE(config->device_filters().empty());
}

TEST(RunConfigTest, ChiefJobReportsWhichNameWasUsed) {
  EXPECT_EQ(RunConfig::Resolve({}, TfJob("ps", 0))->chief_job(), "chief");
  auto legacy = RunConfig::Resolve(
      {}, R"({"cluster":{"master":["m:1"],"worker":["w:2"]},"task":{"type":"worker","index":0}})");
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(legacy->chief_job(), "master");
  EXPECT_FALSE(legacy->is_chief());  // master:0 is the chief, not worker:0
  EXPECT_EQ(RunConfig::Resolve({}, Seeds("map", 1))->chief_job(), "");
}

TEST(RunConfigTest, DeviceFiltersFollowEstimatorDefaults) {
  EXPECT_THAT(RunConfig::Resolve({}, TfJob("worker", 1))->device_filters(),
              ElementsAre("/job:ps", "/job:chief", "/job:worker/task:1"));
  EXPECT_THAT(RunConfig::Resolve({}, TfJob("chief", 0))->device_filters(),
              ElementsAre("/job:ps", "/job:chief"));
  EXPECT_THAT(RunConfig::Resolve({}, TfJob("ps", 0))->device_filters(),
              ElementsAre("/job:ps", "/job:worker", "/job:chief"));
  // An evaluator in the cluster is never in anyone's filters, so nobody waits for it.
  auto with_evaluator = RunConfig::Resolve(
      {},
      R"({"cluster":{"chief":["c:1"],"evaluator":["e:2"],"ps":["p:3"]},"task":{"type":"ps","index":0}})");
  ASSERT_TRUE(with_evaluator.ok());
  EXPECT_THAT(with_evaluator->device_filters(), ElementsAre("/job:ps", "/job:chief"));
  EXPECT_TRUE(RunConfig::Resolve({}, Seeds("map", 0))->device_filters().empty());
}

// TF's order: the chief's tasks, then the other jobs by name, ps last; no id for an
// evaluator.
TEST(RunConfigTest, GlobalIdInClusterCountsTasksInTensorFlowsOrder) {
  EXPECT_EQ(RunConfig::Resolve({}, TfJob("chief", 0))->global_id_in_cluster(), 0);
  EXPECT_EQ(RunConfig::Resolve({}, TfJob("worker", 0))->global_id_in_cluster(), 1);
  EXPECT_EQ(RunConfig::Resolve({}, TfJob("worker", 1))->global_id_in_cluster(), 2);
  EXPECT_EQ(RunConfig::Resolve({}, TfJob("ps", 0))->global_id_in_cluster(), 3);
  EXPECT_EQ(RunConfig::Resolve({}, TfJob("evaluator", 0))->global_id_in_cluster(), -1);
  EXPECT_EQ(RunConfig::Resolve({}, std::nullopt)->global_id_in_cluster(), 0);
  EXPECT_EQ(RunConfig::Resolve({}, Seeds("reduce", 0))->global_id_in_cluster(), 3);
}

TEST(RunConfigTest, UnknownKeysAreWarningsNotErrors) {
  auto config = RunConfig::Resolve(
      {}, R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":0,"color":"red"},)"
          R"("model_dir":"gs://b/m","service":{},"extra":1})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->warnings(), ElementsAre(HasSubstr("unknown key \"extra\""),
                                              HasSubstr("task has unknown key \"color\"")));
}

TEST(RunConfigTest, SparseClusterKeyIsReportedAndIgnored) {
  auto config = RunConfig::Resolve(
      {}, R"({"sparseCluster":{"worker":{"1":"w-1:2222"}},"task":{"type":"worker","index":0}})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->is_local());
  EXPECT_THAT(config->warnings(), ElementsAre(HasSubstr("sparseCluster")));
}

TEST(RunConfigTest, MoreThanOneEvaluatorIsAWarning) {
  auto config = RunConfig::Resolve(
      {},
      R"({"cluster":{"chief":["c:1"],"evaluator":["e:1","e:2"]},"task":{"type":"chief","index":0}})");
  ASSERT_TRUE(config.ok());
  EXPECT_THAT(config->warnings(), ElementsAre(HasSubstr("2 evaluator tasks")));
}

TEST(RunConfigTest, NonClusterArgumentsAreLeftForTheProgram) {
  auto config = RunConfig::Resolve(
      {"input.txt", "--train_steps=10", "--worker_hosts=a:1", "-v", "--", "--job_name=ps"},
      std::nullopt);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task_type(), "worker");
  EXPECT_THAT(config->unused_args(),
              ElementsAre("input.txt", "--train_steps=10", "-v", "--", "--job_name=ps"));
}

TEST(RunConfigTest, SessionMasterIsKeptAsGivenForEveryTaskType) {
  auto worker = RunConfig::Resolve(
      {}, R"({"cluster":{"worker":["a:1","b:2"],"ps":["p:3"]},"task":{"type":"ps","index":0},)"
          R"("session_master":"grpc://a:1"})");
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_EQ(worker->session_master(), "grpc://a:1");
  EXPECT_THAT(worker->ToJson(), HasSubstr(R"("session_master":"grpc://a:1")"));
  auto none = RunConfig::Resolve({}, TfJob("worker", 1));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->session_master(), "");
}

TEST(RunConfigTest, ResolveFromEnvironmentReadsTfConfig) {
  ASSERT_EQ(setenv("TF_CONFIG",
                   R"({"cluster":{"worker":["a:1","b:2"]},"task":{"type":"worker","index":1}})", 1),
            0);
  auto config = RunConfig::ResolveFromEnvironment({});
  unsetenv("TF_CONFIG");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task_index(), 1);
  EXPECT_EQ(config->target(), "grpc://b:2");
  auto local = RunConfig::ResolveFromEnvironment({});
  ASSERT_TRUE(local.ok());
  EXPECT_TRUE(local->is_local());
}

TEST(RunConfigTest, ToJsonHasEveryFieldAndObjectJobs) {
  auto config = RunConfig::Resolve({}, TfJob("worker", 1));
  ASSERT_TRUE(config.ok());
  const std::string json = config->ToJson();
  EXPECT_THAT(json, HasSubstr(R"("source":"TF_CONFIG")"));
  EXPECT_THAT(
      json,
      HasSubstr(
          R"("worker":{"0":"mnist-worker-0.kubeflow.svc:2222","1":"mnist-worker-1.kubeflow.svc:2222"})"));
  EXPECT_THAT(json, HasSubstr(R"("task":{"index":1,"type":"worker"})"));
  EXPECT_THAT(json, HasSubstr(R"("is_chief":false)"));
  EXPECT_THAT(json, HasSubstr(R"("num_workers":3)"));
  EXPECT_THAT(json, HasSubstr(R"("num_ps":1)"));
  EXPECT_THAT(json, HasSubstr(R"("target":"grpc://mnist-worker-1.kubeflow.svc:2222")"));
  EXPECT_THAT(json, HasSubstr(R"("bind_address":"0.0.0.0:2222")"));
  EXPECT_THAT(json, HasSubstr(R"("environment":"cloud")"));
  EXPECT_THAT(json, HasSubstr(R"("session_master":"")"));
  EXPECT_THAT(config->Summary(), HasSubstr("worker:1 of cluster"));
  EXPECT_THAT(config->Summary(), HasSubstr(", bind=0.0.0.0:2222"));
  // A server that listens elsewhere (tw server --bind-host) logs what it really bound.
  EXPECT_THAT(config->Summary("127.0.0.1:2222"), HasSubstr(", bind=127.0.0.1:2222"));
  EXPECT_THAT(config->Summary("127.0.0.1:2222"), Not(HasSubstr("0.0.0.0")));
}

// A fake environment for RuntimeSettings::FromEnvironment.
std::function<const char*(const char*)> Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(RuntimeSettingsTest, UnsetVariablesGiveTheOptionsDefaults) {
  std::vector<std::string> warnings;
  EXPECT_EQ(RuntimeSettings::FromEnvironment(Env({}), &warnings), RuntimeSettings());
  EXPECT_EQ(RuntimeSettings().num_threads, 0);
  EXPECT_TRUE(RuntimeSettings().shared_memory);
  EXPECT_EQ(RuntimeSettings().buffer_pool_mb, -1);
  EXPECT_TRUE(warnings.empty());
  // Resolve does not touch the process's environment: defaults there too.
  EXPECT_EQ(RunConfig::Resolve({}, std::nullopt)->runtime_settings(), RuntimeSettings());
}

TEST(RuntimeSettingsTest, ReadsTheThreeVariables) {
  std::vector<std::string> warnings;
  RuntimeSettings s = RuntimeSettings::FromEnvironment(
      Env({{"TW_NUM_THREADS", "3"}, {"TW_SHARED_MEMORY", "0"}, {"TW_BUFFER_POOL_MB", "0"}}),
      &warnings);
  EXPECT_EQ(s.num_threads, 3);
  EXPECT_FALSE(s.shared_memory);
  EXPECT_EQ(s.buffer_pool_mb, 0);
  EXPECT_TRUE(warnings.empty());
  // Only "0" turns shared memory off.
  EXPECT_TRUE(RuntimeSettings::FromEnvironment(Env({{"TW_SHARED_MEMORY", "1"}})).shared_memory);
  EXPECT_TRUE(RuntimeSettings::FromEnvironment(Env({{"TW_SHARED_MEMORY", ""}})).shared_memory);
  // Chunk sockets likewise.
  EXPECT_TRUE(RuntimeSettings().chunk_sockets);
  EXPECT_FALSE(RuntimeSettings::FromEnvironment(Env({{"TW_CHUNK_SOCKETS", "0"}})).chunk_sockets);
  EXPECT_TRUE(RuntimeSettings::FromEnvironment(Env({{"TW_CHUNK_SOCKETS", "1"}})).chunk_sockets);
  EXPECT_EQ(RuntimeSettings::FromEnvironment(Env({{"TW_BUFFER_POOL_MB", "256"}})).buffer_pool_mb,
            256);
}

TEST(RuntimeSettingsTest, MetricsPortIsAPortOrNothingWithAWarning) {
  EXPECT_EQ(RuntimeSettings().metrics_port, -1);
  EXPECT_EQ(RuntimeSettings::FromEnvironment(Env({{"TW_METRICS_PORT", "9100"}})).metrics_port,
            9100);
  EXPECT_EQ(RuntimeSettings::FromEnvironment(Env({{"TW_METRICS_PORT", "0"}})).metrics_port, 0);
  for (const char* bad : {"-1", "65536", "http", ""}) {
    std::vector<std::string> warnings;
    EXPECT_EQ(
        RuntimeSettings::FromEnvironment(Env({{"TW_METRICS_PORT", bad}}), &warnings).metrics_port,
        -1)
        << bad;
    EXPECT_THAT(warnings, ElementsAre(HasSubstr("is not a port from 0 to 65535"))) << bad;
  }
}

TEST(RuntimeSettingsTest, RestartCountIsANumberOrZeroWithAWarning) {
  EXPECT_EQ(RuntimeSettings().restart_count, 0);
  EXPECT_EQ(RuntimeSettings::FromEnvironment(Env({{"TW_RESTART_COUNT", "2"}})).restart_count, 2);
  EXPECT_EQ(RuntimeSettings::FromEnvironment(Env({{"TW_RESTART_COUNT", "0"}})).restart_count, 0);
  for (const char* bad : {"-1", "twice", ""}) {
    std::vector<std::string> warnings;
    EXPECT_EQ(
        RuntimeSettings::FromEnvironment(Env({{"TW_RESTART_COUNT", bad}}), &warnings).restart_count,
        0)
        << bad;
    EXPECT_THAT(warnings, ElementsAre(HasSubstr("is not a number of restarts"))) << bad;
  }
}

TEST(RuntimeSettingsTest, AllowedDirectoriesAreColonSeparated) {
  EXPECT_THAT(RuntimeSettings::FromEnvironment(Env({{"TW_ALLOWED_DIRECTORIES", "/ckpt:/data"}}))
                  .allowed_directories,
              ElementsAre("/ckpt", "/data"));
  EXPECT_THAT(RuntimeSettings::FromEnvironment(Env({{"TW_ALLOWED_DIRECTORIES", ":/a::b:"}}))
                  .allowed_directories,
              ElementsAre("/a", "b"));
  EXPECT_TRUE(RuntimeSettings::FromEnvironment(Env({{"TW_ALLOWED_DIRECTORIES", ""}}))
                  .allowed_directories.empty());
  EXPECT_TRUE(RuntimeSettings().allowed_directories.empty());
}

TEST(RuntimeSettingsTest, BadValuesAreIgnoredWithAWarningNamingThem) {
  std::vector<std::string> warnings;
  RuntimeSettings s = RuntimeSettings::FromEnvironment(
      Env({{"TW_NUM_THREADS", "three"}, {"TW_BUFFER_POOL_MB", "lots"}}), &warnings);
  EXPECT_EQ(s.num_threads, 0);
  EXPECT_EQ(s.buffer_pool_mb, -1);
  EXPECT_THAT(warnings,
              ElementsAre(HasSubstr("TW_NUM_THREADS=\"three\" is not a number from 1 to 1024"),
                          HasSubstr("TW_BUFFER_POOL_MB=\"lots\" is not a number")));
  warnings.clear();
  EXPECT_EQ(RuntimeSettings::FromEnvironment(Env({{"TW_NUM_THREADS", "0"}}), &warnings).num_threads,
            0);
  EXPECT_EQ(
      RuntimeSettings::FromEnvironment(Env({{"TW_NUM_THREADS", "-2"}}), &warnings).num_threads, 0);
  EXPECT_EQ(
      RuntimeSettings::FromEnvironment(Env({{"TW_NUM_THREADS", "100000"}}), &warnings).num_threads,
      0);  // beyond what a device accepts
  EXPECT_EQ(RuntimeSettings::FromEnvironment(Env({{"TW_BUFFER_POOL_MB", "-5"}}), &warnings)
                .buffer_pool_mb,
            -1);
  EXPECT_EQ(warnings.size(), 4u);
}

}  // namespace
}  // namespace tw
