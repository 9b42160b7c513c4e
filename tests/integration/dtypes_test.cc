// The small integer and complex types (int8, int16, uint16, complex64, complex128) through
// what moves tensors without computing on them: feeds and fetches, Identity, Const,
// variables and FIFO queues, in one process and between tasks over gRPC on loopback; and
// a kernel that does not take them refuses them by name.
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// One value of each type, two elements each (so a queue can give them fixed shapes).
std::vector<Tensor> Values(int seed) {
  const auto s = static_cast<int8_t>(seed);
  return {
      Tensor::FromVector<int8_t>({static_cast<int8_t>(-128 + s), static_cast<int8_t>(127 - s)}),
      Tensor::FromVector<int16_t>({static_cast<int16_t>(-32768 + s), 32767}),
      Tensor::FromVector<uint16_t>({static_cast<uint16_t>(65535 - s), 0}),
      Tensor::FromVector<std::complex<float>>({{1.5f + s, -2}, {0, 3}}),
      Tensor::FromVector<std::complex<double>>({{1e300, -0.25 * s}, {-1, 2}}),
  };
}
const std::vector<DataType> kTypes = {DT_INT8, DT_INT16, DT_UINT16, DT_COMPLEX64, DT_COMPLEX128};

// The graph of the test: `device` ("" for anywhere) holds the queue, the variables and
// the Identity and Const nodes.
struct Graph {
  explicit Graph(const std::string& device) {
    Scope at = device.empty() ? root : root.WithDevice(device);
    queue = ops::FIFOQueue(at, kTypes,
                           {.shapes = std::vector<std::vector<int64_t>>(kTypes.size(), {2}),
                            .shared_name = "dtypes_queue"});
    const std::vector<Tensor> constants = Values(3);
    for (size_t i = 0; i < kTypes.size(); ++i) {
      const std::string name(DataTypeName(kTypes[i]));
      feeds.push_back(ops::Placeholder(root.WithOpName("feed_" + name), kTypes[i]));
      batch_feeds.push_back(ops::Placeholder(root.WithOpName("batch_" + name), kTypes[i]));
      identities.push_back(ops::Identity(at.WithOpName("identity_" + name), feeds[i]));
      consts.push_back(ops::Const(at.WithOpName("const_" + name), constants[i]));
      auto var = ops::MakeVariable(at, "var_" + name, kTypes[i], {2});
      assigns.push_back(ops::Assign(at, var, feeds[i]).op());
      reads.push_back(ops::ReadVariable(at, var));
    }
    std::vector<Input> components(feeds.begin(), feeds.end());
    enqueue = ops::QueueEnqueue(root, queue, components);
    std::vector<Input> batches(batch_feeds.begin(), batch_feeds.end());
    enqueue_many = ops::QueueEnqueueMany(root, queue, batches);
    dequeue = ops::QueueDequeue(root, queue);
    dequeue_many = ops::QueueDequeueMany(root, queue, 2);
  }
  ClientSession::FeedList Feed(const std::vector<Tensor>& values) const {
    ClientSession::FeedList out;
    for (size_t i = 0; i < values.size(); ++i) out.push_back({feeds[i], values[i]});
    return out;
  }

  Scope root = Scope::NewRootScope();
  ops::Queue queue;
  std::vector<Output> feeds, batch_feeds, identities, consts, reads, dequeue, dequeue_many;
  std::vector<Operation> assigns;
  Operation enqueue, enqueue_many;
};

// Two rows of `a` and `b` stacked: what DequeueMany(2) gives after they were enqueued.
Tensor Stack(const Tensor& a, const Tensor& b) {
  Tensor out(a.dtype(), TensorShape({2, 2}));
  const size_t half = a.TotalBytes();
  std::memcpy(out.raw_data(), a.raw_data(), half);
  std::memcpy(static_cast<char*>(out.raw_data()) + half, b.raw_data(), half);
  return out;
}

// Runs every path of `g` on `writer` and reads back on `reader` (the same session or one
// on another task).
void ExpectEveryTypeRoundTrips(const Graph& g, ClientSession& writer, ClientSession& reader) {
  const std::vector<Tensor> a = Values(1), b = Values(2);
  ASSERT_TRUE(g.root.ok()) << g.root.status();

  auto identity = writer.Run(g.Feed(a), g.identities);
  ASSERT_TRUE(identity.ok()) << identity.status();
  auto consts = reader.Run({}, g.consts);
  ASSERT_TRUE(consts.ok()) << consts.status();
  for (size_t i = 0; i < kTypes.size(); ++i) {
    EXPECT_EQ((*identity)[i], a[i]) << (*identity)[i].DebugString();
    EXPECT_EQ((*consts)[i], Values(3)[i]) << (*consts)[i].DebugString();
  }

  auto assigned = writer.Run(g.Feed(b), {}, g.assigns);
  ASSERT_TRUE(assigned.ok()) << assigned.status();
  auto reads = reader.Run({}, g.reads);
  ASSERT_TRUE(reads.ok()) << reads.status();
  for (size_t i = 0; i < kTypes.size(); ++i) EXPECT_EQ((*reads)[i], b[i]);

  // One by one, in order, then a batch of two each way.
  ASSERT_TRUE(writer.Run(g.Feed(a), {}, {g.enqueue}).ok());
  ASSERT_TRUE(writer.Run(g.Feed(b), {}, {g.enqueue}).ok());
  for (const std::vector<Tensor>* expected : {&a, &b}) {
    auto out = reader.Run({}, g.dequeue);
    ASSERT_TRUE(out.ok()) << out.status();
    for (size_t i = 0; i < kTypes.size(); ++i) EXPECT_EQ((*out)[i], (*expected)[i]);
  }
  ClientSession::FeedList batch;
  for (size_t i = 0; i < kTypes.size(); ++i) batch.push_back({g.batch_feeds[i], Stack(b[i], a[i])});
  ASSERT_TRUE(writer.Run(batch, {}, {g.enqueue_many}).ok());
  auto many = reader.Run({}, g.dequeue_many);
  ASSERT_TRUE(many.ok()) << many.status();
  for (size_t i = 0; i < kTypes.size(); ++i) {
    EXPECT_EQ((*many)[i], Stack(b[i], a[i])) << (*many)[i].DebugString();
  }
}

TEST(DtypesTest, EveryPathInOneProcess) {
  Graph g("");
  ClientSession session(g.root);
  ExpectEveryTypeRoundTrips(g, session, session);
}

TEST(DtypesTest, AKernelWithoutTheTypeRefusesItByName) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, Tensor::FromVector<std::complex<float>>({{1, 2}}));
  ops::Add(root.WithOpName("sum"), c, c);
  ASSERT_FALSE(root.ok());
  EXPECT_TRUE(IsInvalidArgument(root.status()));
  EXPECT_THAT(root.status().message(), HasSubstr("\"sum\" (op Add) is complex64, not one of"));

  Scope other = Scope::NewRootScope();
  auto i = ops::Const(other, Tensor::FromVector<int16_t>({1}));
  ops::Cast(other.WithOpName("cast"), i, DT_FLOAT);
  EXPECT_THAT(other.status().message(), HasSubstr("(op Cast) is int16, not one of"));
}

// ps:0 and worker:0 on loopback: the state lives on ps, sessions on both tasks use it.
class DtypesClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string ps = Address(), worker = Address();
    ASSERT_TRUE(cluster_.AddJob("ps", {ps}).ok());
    ASSERT_TRUE(cluster_.AddJob("worker", {worker}).ok());
    for (const std::string job : {"ps", "worker"}) {
      auto server = Server::Create(
          cluster_, job, 0,
          {.bind_host = "127.0.0.1", .num_threads = 2, .wait_for_cluster = absl::Seconds(10)});
      ASSERT_TRUE(server.ok()) << server.status();
      ASSERT_TRUE((*server)->Start().ok());
      servers_[job] = *std::move(server);
    }
  }
  static std::string Address() { return "127.0.0.1:" + std::to_string(testing::PickUnusedPort()); }

  ClusterSpec cluster_;
  std::map<std::string, std::unique_ptr<Server>> servers_;
};

TEST_F(DtypesClusterTest, EveryPathBetweenTasks) {
  Graph g("/job:ps/task:0");
  ClientSession writer(g.root, {.target = servers_["worker"]->target()});
  ClientSession reader(g.root, {.target = servers_["ps"]->target()});
  ExpectEveryTypeRoundTrips(g, writer, reader);
}

// Over 4 MiB: the transfer between tasks goes in chunks (or shared memory), not inline.
TEST_F(DtypesClusterTest, ALargeComplexTensorCrossesTasks) {
  Scope root = Scope::NewRootScope();
  auto feed = ops::Placeholder(root.WithOpName("big"), DT_COMPLEX128);
  auto on_ps = ops::Identity(root.WithDevice("/job:ps/task:0"), feed);
  ASSERT_TRUE(root.ok()) << root.status();
  std::vector<std::complex<double>> values(300000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = {0.5 * i, -1.0 * i};
  const Tensor big = Tensor::FromVector<std::complex<double>>(values);
  ASSERT_GT(big.TotalBytes(), size_t{4} << 20);
  ClientSession session(root, {.target = servers_["worker"]->target()});
  auto out = session.Run({{feed, big}}, {on_ps});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], big);
}

}  // namespace
}  // namespace tw
