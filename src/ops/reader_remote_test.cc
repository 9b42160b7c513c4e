// Readers in a graph sent over the network read only inside the task's allowed directories
// (ServerOptions.allowed_directories), as the checkpoint ops write only there: an
// integration test, over gRPC on loopback.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/io/record_writer.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/reader_ops.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

TEST(ReaderRemoteTest, RemoteReadersStayInTheServersAllowedDirectories) {
  std::string templ = std::filesystem::temp_directory_path().string() + "/tw_reader_XXXXXX";
  ASSERT_NE(mkdtemp(templ.data()), nullptr);
  const std::string dir = templ;
  const std::string inside = dir + "/in.tfrecord";
  {
    auto writer = io::RecordWriter::Create(inside);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Write("ok").ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  const std::string outside_dir = dir + "_outside";
  ASSERT_TRUE(std::filesystem::create_directory(outside_dir));
  const std::string outside = outside_dir + "/secret";
  std::ofstream(outside) << "secret";
  ClusterSpec spec;
  const std::string ps = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string worker = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  ASSERT_TRUE(spec.AddJob("ps", {ps}).ok());
  ASSERT_TRUE(spec.AddJob("worker", {worker}).ok());
  std::vector<std::unique_ptr<Server>> servers;
  for (const std::string job : {"ps", "worker"}) {
    auto server = Server::Create(spec, job, 0,
                                 {.bind_host = "127.0.0.1",
                                  .num_threads = 2,
                                  .wait_for_cluster = absl::Seconds(10),
                                  .allowed_directories = {dir}});
    ASSERT_TRUE(server.ok()) << server.status();
    ASSERT_TRUE((*server)->Start().ok());
    servers.push_back(*std::move(server));
  }
  Scope root = Scope::NewRootScope().WithDevice("/job:ps/task:0");
  auto queue = ops::FIFOQueue(root, {DT_STRING});
  auto reader = ops::WholeFileReader(root);
  auto read = ops::ReaderRead(root, reader, queue);
  auto name = ops::Placeholder(root, DT_STRING);
  auto enqueue = ops::QueueEnqueue(root, queue, {name});
  ClientSession session(root, {.target = servers.back()->target()});
  ASSERT_TRUE(session.Run({{name, Tensor::Scalar(inside)}}, {}, {enqueue}).ok());
  auto ok = session.Run({}, {read.value});
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_TRUE(session.Run({{name, Tensor::Scalar(outside)}}, {}, {enqueue}).ok());
  auto refused = session.Run({}, {read.value});
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr(outside));
  for (auto& s : servers) s->Stop();
  std::filesystem::remove_all(outside_dir);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tw
