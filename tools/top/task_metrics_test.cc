#include "tools/top/task_metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw::top {
namespace {

using ::testing::HasSubstr;

constexpr char kText[] = R"(# HELP tw_steps_total Steps.
# TYPE tw_steps_total counter
tw_steps_total{tw_job="worker",tw_task="1",code="OK"} 120
tw_steps_total{tw_job="worker",tw_task="1",code="UNAVAILABLE"} 2
tw_rpc_server_handled_total{tw_job="worker",tw_task="1",method="WorkerService/RunGraph",code="OK"} 40
tw_rpc_server_handled_total{tw_job="worker",tw_task="1",method="MasterService/RunStep",code="CANCELLED"} 1
tw_rpc_server_received_bytes_total{tw_job="worker",tw_task="1",method="WorkerService/RunGraph"} 4096
tw_rpc_server_sent_bytes_total{tw_job="worker",tw_task="1",method="WorkerService/RunGraph"} 1024
tw_variable_bytes{tw_job="worker",tw_task="1",container="c",name="say \"w\""} 64
tw_variable_bytes{tw_job="worker",tw_task="1",container="c",name="b"} 16
tw_step_seconds_bucket{tw_job="worker",tw_task="1",le="+Inf"} 122
process_cpu_seconds_total{tw_job="worker",tw_task="1"} 1.5
process_resident_memory_bytes{tw_job="worker",tw_task="1"} 41947136
tw_sessions{tw_job="worker",tw_task="1"} 1
)";

TEST(TaskMetricsTest, ParsesSamplesWithEscapedLabels) {
  auto samples = ParseMetricsText(kText);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 12u);
  EXPECT_EQ((*samples)[6].labels.at("name"), "say \"w\"");
  EXPECT_EQ((*samples)[8].labels.at("le"), "+Inf");
  EXPECT_EQ((*samples)[9].value, 1.5);
}

TEST(TaskMetricsTest, TotalsAddUpTheTasksSeries) {
  TaskTotals t = Totals(*ParseMetricsText(kText));
  EXPECT_EQ(t.task, "worker:1");
  EXPECT_EQ(t.steps_ok, 120);
  EXPECT_EQ(t.steps_failed, 2);
  EXPECT_EQ(t.rpcs, 41);
  EXPECT_EQ(t.rpc_errors, 1);
  EXPECT_EQ(t.bytes_in, 4096);
  EXPECT_EQ(t.bytes_out, 1024);
  EXPECT_EQ(t.variable_bytes, 80);
  EXPECT_EQ(t.resident_bytes, 41947136);
  EXPECT_EQ(t.sessions, 1);
}

TEST(TaskMetricsTest, RatesArePerSecondAndARestartCountsFromZero) {
  TaskTotals before{.steps_ok = 100, .rpcs = 50, .bytes_in = 1000, .cpu_seconds = 1};
  TaskTotals after{.steps_ok = 300, .rpcs = 10, .bytes_in = 5000, .cpu_seconds = 2};
  TaskRates r = Rates(before, after, 2.0);
  EXPECT_EQ(r.steps, 100);
  EXPECT_EQ(r.rpcs, 5);  // went down: the task restarted, 10 since
  EXPECT_EQ(r.bytes_in, 2000);
  EXPECT_EQ(r.cpu, 0.5);
  EXPECT_EQ(Rates(before, after, 0).steps, 0);
}

TEST(TaskMetricsTest, ALineThatIsNotASampleIsNamed) {
  for (const char* bad :
       {"tw_steps_total{code=\"OK\" 1\n", "tw_x one\n", "{a=\"b\"} 1\n", "tw_x\n"}) {
    auto samples = ParseMetricsText(std::string("# ok\n") + bad);
    ASSERT_FALSE(samples.ok()) << bad;
    EXPECT_THAT(std::string(samples.status().message()), HasSubstr("line 2 is not a metric"));
  }
}

}  // namespace
}  // namespace tw::top
