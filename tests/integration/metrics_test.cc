// A task's metrics endpoint as Prometheus scrapes it: a real server with
// ServerOptions::metrics_port, fetched over HTTP on loopback with cpp-httplib's client.
#include <algorithm>
#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "src/rpc/metrics_endpoint.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// The value of the series `series` (its name and labels, exactly as rendered), or -1.
double Value(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

std::string Scrape(const Server& server) {
  const std::string address = server.metrics_address();
  httplib::Client client("127.0.0.1", std::stoi(address.substr(address.rfind(':') + 1)));
  client.set_read_timeout(10, 0);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) return "";
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("text/plain; version=0.0.4"));
  return res->body;
}

TEST(MetricsEndpointTest, ServesStepsRpcsResourcesAndTheProcess) {
  auto server = Server::CreateLocal({.num_threads = 1, .metrics_port = 0});
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_THAT((*server)->metrics_address(), ::testing::StartsWith("127.0.0.1:"));
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "weights", DT_FLOAT, {4, 4});
  auto init = ops::Assign(root, v, ops::Fill(root, {4, 4}, 1.0f));
  auto q = ops::FIFOQueue(root, {DT_INT32}, {.shared_name = "work"});
  auto enqueue = ops::QueueEnqueueMany(
      root, q, {ops::Const(root, Tensor::FromVector(std::vector<int32_t>{1, 2, 3}))});
  ClientSession session(root, {.target = (*server)->target()});
  ASSERT_TRUE(session.Run({}, {}, {init.op(), enqueue}).ok());
  auto fails =
      session.Run({}, {ops::ReadVariable(root, ops::MakeVariable(root, "never", DT_FLOAT, {}))});
  ASSERT_FALSE(fails.ok());

  const std::string text = Scrape(**server);
  const std::string task = "tw_job=\"localhost\",tw_task=\"0\"";
  EXPECT_EQ(Value(text, "tw_steps_total{" + task + ",code=\"OK\"}"), 1) << text;
  EXPECT_EQ(Value(text, "tw_steps_total{" + task + ",code=\"FAILED_PRECONDITION\"}"), 1);
  EXPECT_EQ(Value(text, "tw_step_seconds_count{" + task + "}"), 2);
  EXPECT_EQ(Value(text, "tw_sessions{" + task + "}"), 1);
  EXPECT_GE(Value(text, "tw_registered_graphs{" + task + "}"), 1);
  EXPECT_EQ(Value(text, "tw_variable_bytes{" + task + ",container=\"localhost\",name=\"weights\"}"),
            64);
  EXPECT_EQ(Value(text, "tw_queue_size{" + task + ",container=\"localhost\",name=\"work\"}"), 3);
  // The session's calls to the master went over gRPC (its steps go to the master directly).
  EXPECT_GE(Value(text, "tw_rpc_server_handled_total{" + task +
                            ",method=\"MasterService/CreateSession\",code=\"OK\"}"),
            1);
  EXPECT_GT(Value(text, "tw_rpc_server_received_bytes_total{" + task +
                            ",method=\"MasterService/ExtendSession\"}"),
            0);
  EXPECT_GT(Value(text, "process_resident_memory_bytes{" + task + "}"), 1 << 20);
  EXPECT_GE(Value(text, "process_cpu_seconds_total{" + task + "}"), 0);
  // Every line is a comment or "name{labels} value".
  const std::regex line(R"((# (HELP|TYPE) .*)|([a-z_]+(\{.*\})? [-+0-9.e]+|.*\+Inf"\} [0-9]+))");
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string l = text.substr(start, end - start);
    EXPECT_TRUE(std::regex_match(l, line)) << l;
  }
}

// Tensors a task sends count by path: here over TCP, shared memory being off.
TEST(MetricsEndpointTest, TensorBytesSentCountByPath) {
  ClusterSpec cluster;
  ASSERT_TRUE(cluster
                  .AddJob("ps", std::vector<std::string>{"127.0.0.1:" +
                                                         std::to_string(testing::PickUnusedPort())})
                  .ok());
  ASSERT_TRUE(
      cluster
          .AddJob("worker", std::vector<std::string>{"127.0.0.1:" +
                                                     std::to_string(testing::PickUnusedPort())})
          .ok());
  const ServerOptions options{
      .bind_host = "127.0.0.1", .num_threads = 1, .shared_memory = false, .metrics_port = 0};
  auto ps = Server::Create(cluster, "ps", 0, options);
  auto worker = Server::Create(cluster, "worker", 0, options);
  ASSERT_TRUE(ps.ok() && worker.ok());
  ASSERT_TRUE((*ps)->Start().ok() && (*worker)->Start().ok());
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "v", DT_FLOAT, {1 << 18});
  auto value = ops::Placeholder(root, DT_FLOAT);
  auto assign = ops::Assign(root, v, value);
  ClientSession session(root, {.target = (*worker)->target()});
  Tensor t(DT_FLOAT, TensorShape({1 << 18}));  // 1 MiB
  std::fill(t.flat<float>().begin(), t.flat<float>().end(), 1.0f);
  ASSERT_TRUE(session.Run({{value, t}}, {}, {assign.op()}).ok());
  const std::string text = Scrape(**worker);
  EXPECT_GE(Value(text, "tw_tensor_bytes_sent_total{tw_job=\"worker\",tw_task=\"0\",path=\"tcp\"}"),
            1 << 20)
      << text;
  EXPECT_EQ(Value(text,
                  "tw_tensor_bytes_sent_total{tw_job=\"worker\",tw_task=\"0\",path=\"shared_"
                  "memory\"}"),
            -1);  // never used, so never made
}

// An endpoint stopped right after it started stops: httplib ignores a stop that comes
// before its accept loop runs, and the destructor once waited for that loop for ever.
TEST(MetricsEndpointTest, StoppedRightAfterStartingItStops) {
  for (int i = 0; i < 300; ++i) {
    auto endpoint = MetricsEndpoint::Start("127.0.0.1", 0, [] { return std::string(); });
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  }
}

TEST(MetricsEndpointTest, OffByDefaultAndGoneAfterStop) {
  auto off = Server::CreateLocal({.num_threads = 1});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ((*off)->metrics_address(), "");
  auto on = Server::CreateLocal({.num_threads = 1, .metrics_port = 0});
  ASSERT_TRUE(on.ok()) << on.status();
  const std::string address = (*on)->metrics_address();
  EXPECT_THAT(Scrape(**on), HasSubstr("# TYPE process_cpu_seconds_total counter"));
  (*on)->Stop();
  EXPECT_EQ((*on)->metrics_address(), "");
  httplib::Client client("127.0.0.1", std::stoi(address.substr(address.rfind(':') + 1)));
  client.set_connection_timeout(2, 0);
  EXPECT_FALSE(client.Get("/metrics")) << "the endpoint still answers after Stop";
}

TEST(MetricsEndpointTest, ABadOrTakenPortIsAClearError) {
  auto bad = Server::CreateLocal({.num_threads = 1, .metrics_port = 70000});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("ServerOptions.metrics_port is 70000"));
  auto first = Server::CreateLocal({.num_threads = 1, .metrics_port = 0});
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string taken = (*first)->metrics_address();
  const int port = std::stoi(taken.substr(taken.rfind(':') + 1));
  auto second = Server::CreateLocal({.num_threads = 1, .metrics_port = port});
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(IsUnavailable(second.status())) << second.status();
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("cannot serve metrics"));
}

}  // namespace
}  // namespace tw
