#include "tensorweave/cluster_spec.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cluster/host_port.h"
#include "tensorweave/protobuf/cluster.pb.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ClusterSpec Example() {
  ClusterSpec spec;
  EXPECT_TRUE(spec.AddJob("ps", std::vector<std::string>{"ps0:2222", "ps1:2222"}).ok());
  EXPECT_TRUE(spec.AddJob("worker", ClusterSpec::TaskMap{{0, "w0:2222"}, {3, "w3:2222"}}).ok());
  return spec;
}

TEST(ClusterSpecTest, QueriesDenseAndSparseJobs) {
  ClusterSpec spec = Example();
  EXPECT_THAT(spec.jobs(), ElementsAre("ps", "worker"));
  EXPECT_EQ(*spec.num_tasks("ps"), 2);
  EXPECT_EQ(*spec.num_tasks("worker"), 2);
  EXPECT_THAT(*spec.task_indices("worker"), ElementsAre(0, 3));
  EXPECT_EQ(*spec.task_address("worker", 3), "w3:2222");
  EXPECT_THAT(*spec.job_tasks("worker"), ElementsAre("w0:2222", "", "", "w3:2222"));
  EXPECT_TRUE(spec.IsDense("ps"));
  EXPECT_FALSE(spec.IsDense("worker"));
  EXPECT_FALSE(spec.IsDense("chief"));
}

// As TensorFlow's ClusterSpec: a job the cluster does not have is an error in every lookup,
// so that a misspelt job name is never read as an empty job.
TEST(ClusterSpecTest, LookupsOfAnUnknownJobAreNotFound) {
  ClusterSpec spec = Example();
  const std::string message = "No such job in cluster: 'chief'";
  EXPECT_TRUE(IsNotFound(spec.num_tasks("chief").status()));
  EXPECT_EQ(spec.num_tasks("chief").status().message(), message);
  EXPECT_EQ(spec.task_indices("chief").status().message(), message);
  EXPECT_EQ(spec.job_tasks("chief").status().message(), message);
  EXPECT_EQ(spec.task_address("chief", 0).status().message(), message);
  // Only the lookup named for optional jobs answers 0.
  EXPECT_EQ(spec.CountTasks("chief"), 0);
  EXPECT_EQ(spec.CountTasks("worker"), 2);
}

TEST(ClusterSpecTest, TaskAddressErrorsNameJobAndTask) {
  ClusterSpec spec = Example();
  EXPECT_EQ(spec.task_address("worker", 1).status().message(),
            "No task with index 1 in job 'worker'");
  EXPECT_EQ(spec.task_address("chief", 0).status().message(), "No such job in cluster: 'chief'");
  EXPECT_TRUE(IsNotFound(spec.task_address("chief", 0).status()));
}

TEST(ClusterSpecTest, JsonRoundTripKeepsDenseListsAndSparseObjects) {
  ClusterSpec spec = Example();
  const std::string json = spec.ToJson();
  EXPECT_EQ(json, R"({"ps":["ps0:2222","ps1:2222"],"worker":{"0":"w0:2222","3":"w3:2222"}})");
  auto back = ClusterSpec::FromJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, spec);
  EXPECT_EQ(spec.ToJson(/*always_objects=*/true),
            R"({"ps":{"0":"ps0:2222","1":"ps1:2222"},"worker":{"0":"w0:2222","3":"w3:2222"}})");
}

TEST(ClusterSpecTest, ProtoRoundTrip) {
  ClusterSpec spec = Example();
  proto::ClusterDef def;
  spec.ToProto(&def);
  ASSERT_EQ(def.job_size(), 2);
  EXPECT_EQ(def.job(1).name(), "worker");
  EXPECT_EQ(def.job(1).tasks().at(3), "w3:2222");
  auto back = ClusterSpec::FromProto(def);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, spec);
  // A proto from the network is validated like any other input.
  def.mutable_job(0)->mutable_tasks()->insert({5, "bad address"});
  EXPECT_THAT(ClusterSpec::FromProto(def).status().message(),
              HasSubstr("job \"ps\" task 5: Could not interpret \"bad address\""));
}

TEST(ClusterSpecTest, EmptyJobsAreAllowed) {
  auto spec = ClusterSpec::FromJson(R"({"worker": [], "ps": {}})");
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(spec->jobs(), ElementsAre("ps", "worker"));
  EXPECT_EQ(*spec->num_tasks("worker"), 0);
  EXPECT_TRUE(spec->job_tasks("ps")->empty());
  EXPECT_TRUE(spec->task_indices("worker")->empty());
}

TEST(ClusterSpecTest, ValidationNamesJobTaskAndText) {
  ClusterSpec spec;
  EXPECT_THAT(spec.AddJob("9lives", std::vector<std::string>{"a:1"}).message(),
              HasSubstr("job name \"9lives\" is invalid"));
  EXPECT_THAT(spec.AddJob("ps", std::vector<std::string>{"a:1", "b:99999"}).message(),
              HasSubstr("job \"ps\" task 1: Could not interpret \"b:99999\""));
  EXPECT_THAT(spec.AddJob("ps", ClusterSpec::TaskMap{{-1, "a:1"}}).message(),
              HasSubstr("task index -1"));
  ASSERT_TRUE(spec.AddJob("ps", std::vector<std::string>{"a:1"}).ok());
  EXPECT_THAT(spec.AddJob("ps", std::vector<std::string>{"a:1"}).message(),
              HasSubstr("job \"ps\" is defined twice"));
  EXPECT_THAT(ClusterSpec::FromJson(R"({"ps": {"1": "a:1", "01": "b:1"}})").status().message(),
              HasSubstr("defines task 1 twice"));
}

TEST(ClusterSpecTest, Equality) {
  EXPECT_EQ(Example(), Example());
  ClusterSpec other = Example();
  ASSERT_TRUE(other.AddJob("chief", std::vector<std::string>{"c:1"}).ok());
  EXPECT_NE(Example(), other);
}

TEST(HostPortTest, SplitsAtTheLastColon) {
  auto v4 = ParseHostPort("10.0.0.1:2222");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "10.0.0.1");
  EXPECT_EQ(v4->port, 2222);
  auto bracketed = ParseHostPort("[::1]:2222");
  ASSERT_TRUE(bracketed.ok());
  EXPECT_EQ(bracketed->host, "::1");
  EXPECT_TRUE(bracketed->bracketed);
  auto raw_v6 = ParseHostPort("fe80::1:8080");
  ASSERT_TRUE(raw_v6.ok());
  EXPECT_EQ(raw_v6->host, "fe80::1");
  EXPECT_EQ(raw_v6->port, 8080);
  EXPECT_EQ(ParseHostPort("h:0")->port, 0);
  EXPECT_EQ(ParseHostPort("h:65535")->port, 65535);
}

// gRPC binds "[::1]:2222" but not "::1:2222".
TEST(HostPortTest, JoinBracketsIpv6Hosts) {
  EXPECT_EQ(JoinHostPort("::1", 2222), "[::1]:2222");
  EXPECT_EQ(JoinHostPort("[::1]", 2222), "[::1]:2222");
  EXPECT_EQ(JoinHostPort("::", 0), "[::]:0");
  EXPECT_EQ(JoinHostPort("127.0.0.1", 2222), "127.0.0.1:2222");
  EXPECT_EQ(JoinHostPort("ps-0.svc", 1), "ps-0.svc:1");
  auto back = ParseHostPort(JoinHostPort("fe80::1", 7));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->host, "fe80::1");
  EXPECT_EQ(back->port, 7);
}

TEST(HostPortTest, UnbracketedAndWildcardHosts) {
  EXPECT_EQ(UnbracketedHost("[::1]"), "::1");
  EXPECT_EQ(UnbracketedHost("::1"), "::1");
  EXPECT_EQ(UnbracketedHost("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(UnbracketedHost("[]"), "");
  EXPECT_EQ(UnbracketedHost("["), "[");
  for (const char* any : {"", "0.0.0.0", "::", "[::]"}) EXPECT_TRUE(IsWildcardHost(any)) << any;
  for (const char* one : {"127.0.0.1", "::1", "localhost", "10.0.0.2"}) {
    EXPECT_FALSE(IsWildcardHost(one)) << one;
  }
}

TEST(HostPortTest, RejectsMalformedAddresses) {
  for (const char* bad : {"", "host", "host:", ":1", "host:65536", "host:-1", "host:1x", "a b:1",
                          "[::1:2222", "host:123456", "a/b:1"}) {
    auto hp = ParseHostPort(bad);
    EXPECT_FALSE(hp.ok()) << bad;
    EXPECT_THAT(hp.status().message(), HasSubstr("as a host-port pair")) << bad;
  }
}

}  // namespace
}  // namespace tw
