#include "src/base/metrics.h"

#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsTest, CountersRenderWithTheirLabelsAndConstantLabels) {
  MetricsRegistry registry;
  auto& family = registry.CounterFamily("t_calls_total", "Calls.", {"method", "code"});
  family.With({"RunGraph", "OK"})->Add(3);
  family.With({"RunGraph", "UNAVAILABLE"})->Add(1);
  const std::string text = registry.Render({{"tw_job", "ps"}, {"tw_task", "0"}});
  EXPECT_THAT(text, HasSubstr("# HELP t_calls_total Calls.\n# TYPE t_calls_total counter\n"));
  EXPECT_THAT(text, HasSubstr("t_calls_total{tw_job=\"ps\",tw_task=\"0\",method=\"RunGraph\","
                              "code=\"OK\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("code=\"UNAVAILABLE\"} 1\n"));
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithSumAndCount) {
  MetricsRegistry registry;
  Histogram* h = registry.HistogramFamily("t_seconds", "Latency.", {}, {0.1, 1}).With({});
  for (double v : {0.05, 0.1, 0.5, 2.0}) h->Observe(v);
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE t_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("t_seconds_bucket{le=\"0.1\"} 2\n"));  // bounds are inclusive
  EXPECT_THAT(text, HasSubstr("t_seconds_bucket{le=\"1\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("t_seconds_bucket{le=\"+Inf\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("t_seconds_sum 2.65\n"));
  EXPECT_THAT(text, HasSubstr("t_seconds_count 4\n"));
}

TEST(MetricsTest, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  MetricsRegistry registry;
  registry.CounterFamily("t_total", "x", {"name"}).With({"say \"hi\""})->Add(1);
  EXPECT_THAT(registry.Render(), HasSubstr("t_total{name=\"say \\\"hi\\\"\"} 1\n"));
}

TEST(MetricsTest, CollectorsReportToTheirOwnerAndGoWithTheirHandle) {
  MetricsRegistry registry;
  int a = 0, b = 0;
  auto handle_a = registry.AddCollector(
      [](std::vector<GaugeSample>* out) {
        out->push_back({"t_graphs", "Graphs.", {}, 7});
      },
      &a);
  auto shared = registry.AddCollector([](std::vector<GaugeSample>* out) {
    out->push_back({"t_pool_bytes", "Pool.", {{"pool", "default"}}, 1024});
  });
  EXPECT_THAT(registry.Render({}, &a), HasSubstr("# TYPE t_graphs gauge\nt_graphs 7\n"));
  EXPECT_THAT(registry.Render({}, &b), Not(HasSubstr("t_graphs")));
  EXPECT_THAT(registry.Render({}, &b), HasSubstr("t_pool_bytes{pool=\"default\"} 1024\n"));
  { auto gone = std::move(handle_a); }
  EXPECT_THAT(registry.Render({}, &a), Not(HasSubstr("t_graphs")));
}

TEST(MetricsTest, TheProcessGaugesAreAlwaysThere) {
  const std::string text = Metrics().Render();
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE process_resident_memory_bytes gauge\n"));
  EXPECT_THAT(text, Not(HasSubstr("process_resident_memory_bytes 0\n")));
  EXPECT_THAT(text, HasSubstr("process_open_fds "));
}

TEST(MetricsTest, ConcurrentAddsAreAllCounted) {
  MetricsRegistry registry;
  Counter* c = registry.CounterFamily("t_total", "x").With({});
  Histogram* h = registry.HistogramFamily("t_h", "x", {}, {1}).With({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c->Add(1);
        h->Observe(0.5);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c->value(), 40000);
  EXPECT_EQ(h->counts()[0], 40000u);
}

}  // namespace
}  // namespace tw
