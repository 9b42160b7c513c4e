// Every malformed TF_CONFIG or flag set gives InvalidArgument whose message names the
// field, job, task or text at fault.
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/run_config.h"

namespace tw {
namespace {

struct ErrorCase {
  std::string name;
  std::vector<std::string> args;
  std::optional<std::string> tf_config;
  std::string message;  // a substring the error must contain
};

const std::vector<ErrorCase>& ErrorCases() {
  static const auto* cases = new std::vector<ErrorCase>{
      {"chief_and_master",
       {},
       R"({"cluster":{"chief":["c:1"],"master":["m:1"]},"task":{"type":"chief","index":0}})",
       "both a \"chief\" and a \"master\" job"},
      {"two_chiefs",
       {},
       R"({"cluster":{"chief":["c:1","c:2"]},"task":{"type":"chief","index":0}})",
       "job \"chief\" has 2 tasks; a cluster has exactly one chief"},
      {"two_masters",
       {},
       R"({"cluster":{"master":["m:1","m:2"]},"task":{"type":"master","index":1}})",
       "job \"master\" has 2 tasks"},
      {"task_not_in_job",
       {},
       R"({"cluster":{"worker":["a:1","b:2"]},"task":{"type":"worker","index":2}})",
       "Task 2 was not defined in job \"worker\""},
      {"task_missing_from_sparse_job",
       {},
       R"({"cluster":{"worker":{"3":"w:1"}},"task":{"type":"worker","index":0}})",
       "Task 0 was not defined in job \"worker\""},
      {"job_not_in_cluster",
       {},
       R"({"cluster":{"worker":["a:1"]},"task":{"type":"ps","index":0}})",
       "Job \"ps\" was not defined in cluster (jobs: worker)"},
      {"sparse_chief_not_in_cluster",
       {},
       R"({"cluster":{"worker":{},"ps":[]},"task":{"type":"chief","index":0}})",
       "Job \"chief\" was not defined in cluster"},
      {"index_not_a_number",
       {},
       R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":"abc"}})",
       "task.index must be an integer >= 0, got \"abc\""},
      {"index_float",
       {},
       R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":1.5}})",
       "task.index must be an integer >= 0, got number 1.5"},
      {"index_negative",
       {},
       R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":-1}})",
       "task.index must be an integer >= 0, got -1"},
      {"index_bool",
       {},
       R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":true}})",
       "got boolean true"},
      {"index_too_large",
       {},
       R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":99999999999}})",
       "too large"},
      {"malformed_json_position",
       {},
       R"({"cluster": {"worker": ["a:1",]}})",
       "TF_CONFIG is not valid JSON: parse error at line 1, column 31"},
      {"truncated_json", {}, R"({"cluster": )", "TF_CONFIG is not valid JSON"},
      {"not_an_object", {}, R"(["worker"])", "TF_CONFIG must be a JSON object, got array"},
      {"cluster_not_an_object",
       {},
       R"({"cluster":"ps:1"})",
       "TF_CONFIG cluster must be an object of job name to task addresses, got string"},
      {"job_tasks_wrong_type",
       {},
       R"({"cluster":{"ps":3},"task":{"type":"ps","index":0}})",
       "the tasks for job \"ps\" must be a list or an object"},
      {"sparse_key_not_integer",
       {},
       R"({"cluster":{"worker":{"one":"a:1"}}})",
       "job \"worker\" has task key \"one\"; sparse task keys must be integers >= 0"},
      {"address_not_string",
       {},
       R"({"cluster":{"worker":[2222]}})",
       "job \"worker\" task 0: the address must be a \"host:port\" string, got number"},
      {"address_without_port",
       {},
       R"({"cluster":{"worker":["a:1","hostonly"]},"task":{"type":"worker","index":0}})",
       "job \"worker\" task 1: Could not interpret \"hostonly\" as a host-port pair"},
      {"port_out_of_range",
       {},
       R"({"cluster":{"ps":["a:70000"]}})",
       "Could not interpret \"a:70000\" as a host-port pair: the port must be a number in 0-65535"},
      {"port_not_numeric", {}, R"({"cluster":{"ps":["a:http"]}})", "\"a:http\""},
      {"host_with_slash", {}, R"({"cluster":{"ps":["/bns/x:1"]}})", "the host contains '/'"},
      {"empty_host", {}, R"({"cluster":{"ps":[":2222"]}})", "empty host"},
      {"invalid_job_name_digit",
       {},
       R"({"cluster":{"1ps":["a:1"]}})",
       "job name \"1ps\" is invalid: it must match [A-Za-z][A-Za-z0-9_]*"},
      {"invalid_job_name_dash",
       {},
       R"({"cluster":{"p-s":["a:1"]}})",
       "job name \"p-s\" is invalid"},
      {"type_not_string",
       {},
       R"({"cluster":{"worker":["a:1"]},"task":{"type":7,"index":0}})",
       "task.type must be a string, got number 7"},
      {"task_not_object",
       {},
       R"({"cluster":{"worker":["a:1"]},"task":"worker"})",
       "TF_CONFIG \"task\" must be an object"},
      {"environment_not_string",
       {},
       R"({"environment":1})",
       "TF_CONFIG \"environment\" must be a string"},
      {"no_task_many_jobs",
       {},
       R"({"cluster":{"ps":["a:1"],"worker":["b:1"]}})",
       "Must specify an explicit job_name (--job_name or TF_CONFIG task.type): the cluster has "
       "jobs ps, worker"},
      {"no_index_many_tasks",
       {},
       R"({"cluster":{"worker":["a:1","b:1"]},"task":{"type":"worker"}})",
       "Must specify an explicit task_index"},
      {"duplicate_key",
       {},
       R"({"cluster":{"ps":["a:1"]},"cluster":{"ps":["b:1"]}})",
       "duplicate key \"cluster\" at the top level"},
      {"jobs_differ_only_in_case",
       {},
       R"({"cluster":{"ps":["a:1"],"PS":["b:1"]},"task":{"type":"ps","index":0}})",
       "differ only in case"},
      {"local_ps_needs_cluster",
       {"--job_name=ps"},
       std::nullopt,
       "task type \"ps\" needs a cluster"},
      {"local_index_needs_cluster",
       {},
       R"({"task":{"type":"worker","index":2}})",
       "task index 2 needs a cluster"},
      {"flags_two_cluster_forms",
       {"--cluster={\"ps\":[\"a:1\"]}", "--worker_hosts=b:1"},
       std::nullopt,
       "--cluster and --<job>_hosts both define the cluster"},
      {"flags_bad_index",
       {"--worker_hosts=a:1", "--task_index=first"},
       std::nullopt,
       "--task_index must be an integer >= 0, got \"first\""},
      {"flags_given_twice",
       {"--job_name=ps", "--job_name=worker"},
       std::nullopt,
       "--job_name is given more than once"},
      {"flags_missing_value",
       {"--worker_hosts=a:1", "--job_name"},
       std::nullopt,
       "--job_name needs a value"},
      {"flags_bad_address",
       {"--ps_hosts=a:1,b", "--job_name=ps", "--task_index=0"},
       std::nullopt,
       "--ps_hosts: job \"ps\" task 1: Could not interpret \"b\""},
      {"flags_cluster_spec_no_bar", {"--cluster_spec=ps:a:1"}, std::nullopt, "has no '|'"},
      {"flags_cluster_json_malformed",
       {"--cluster={ps}"},
       std::nullopt,
       "--cluster is not valid JSON"},
      {"flags_empty_job_name",
       {"--worker_hosts=a:1", "--job_name="},
       std::nullopt,
       "--job_name is empty"},
  };
  return *cases;
}

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class RunConfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(RunConfigErrorTest, NamesTheProblem) {
  const ErrorCase& c = GetParam();
  auto config = RunConfig::Resolve(c.args, c.tf_config);
  ASSERT_FALSE(config.ok()) << config->ToJson();
  EXPECT_TRUE(IsInvalidArgument(config.status())) << config.status();
  EXPECT_THAT(std::string(config.status().message()), ::testing::HasSubstr(c.message));
}

INSTANTIATE_TEST_SUITE_P(Malformed, RunConfigErrorTest, ::testing::ValuesIn(ErrorCases()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace tw
