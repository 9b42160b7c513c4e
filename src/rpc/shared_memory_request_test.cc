// A forged shared-memory reference sent to a real server over loopback: the server answers
// InvalidArgument and does not open the file the reference names, although it exists and
// the server's own process has it open (the probe of /proc/<pid>/fd this prevents).
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <string>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "src/core/tensor_coding.h"
#include "src/rpc/shared_memory.h"
#include "src/rpc/tensor_wire.h"
#include "tensorweave/server.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// One raw call of a tensor-carrying method, waited for.
grpc::Status Call(int port, const std::string& method,
                  const google::protobuf::MessageLite& header) {
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  grpc::ByteBuffer request = EncodeTensorMessage(header, {}), reply;
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &reply, [&](grpc::Status s) {
    status = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  return status;
}

TEST(SharedMemoryRequestTest, AForgedReferenceIsInvalidArgumentAndTheServerOpensNothing) {
  auto server = Server::CreateLocal({.num_threads = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string file = ::testing::TempDir() + "/tw_shm_request_watched";
  const int fd = open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 1 << 20), 0);
  const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(inotify_add_watch(watch, file.c_str(), IN_OPEN | IN_ACCESS), 0);

  const Tensor value(DT_FLOAT, TensorShape({100'000}));
  proto::NamedTensorProto forged;
  forged.set_name("feed");
  TensorMetaToProto(value, forged.mutable_tensor());
  proto::SharedMemoryRef* ref = forged.mutable_shared();
  ref->set_pid(getpid());  // the server's process
  ref->set_fd(fd);
  ref->set_block_id(1);
  ref->set_ticket(1);
  ref->set_length(value.TotalBytes());

  proto::RunGraphRequest run_graph;
  run_graph.set_graph_handle("any");
  run_graph.set_shared_memory_host(shm::HostIdentity());  // a claim anyone can copy
  *run_graph.add_send() = forged;
  grpc::Status s = Call((*server)->port(), "/tw.proto.WorkerService/RunGraph", run_graph);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("was not offered to this task"));

  proto::RecvTensorRequest recv_tensor;
  recv_tensor.set_shared_memory_host(shm::HostIdentity());
  *recv_tensor.add_push() = forged;
  s = Call((*server)->port(), "/tw.proto.WorkerService/RecvTensor", recv_tensor);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();

  alignas(struct inotify_event) char events[4096];
  EXPECT_LE(read(watch, events, sizeof events), 0) << "the server opened " << file;
  close(watch);
  close(fd);
  unlink(file.c_str());
}

}  // namespace
}  // namespace tw
