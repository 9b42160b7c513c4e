#include "src/rpc/chunk_transfer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "src/rpc/tensor_chunks.h"

namespace tw {
namespace {

using ::testing::ElementsAre;

Tensor Pattern(int64_t n) {
  Tensor t(DT_INT32, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<int32_t>()[i] = static_cast<int32_t>(i * 31 + 7);
  return t;
}

// The fallback calls of a ChunkTransfer without chunk sockets, answered at once by a
// ChunkStore as the worker service's PutChunk and RecvChunk would: the chunks cross the
// wire format, not a network.
struct FakePeer {
  ChunkStore store;
  std::vector<std::string> methods;
  std::vector<grpc::GenericStub*> stubs;
  int fail_call = -1;  // this call (0-based) fails with Unavailable

  ChunkTransfer::CallFn Call() {
    return
        [this](const char* method, grpc::ByteBuffer request, ChunkTransfer::Decode decode,
               CancellationManager*, ChunkTransfer::StatusCallback done, grpc::GenericStub* stub) {
          const int index = static_cast<int>(methods.size());
          methods.push_back(method);
          stubs.push_back(stub);
          if (index == fail_call) return done(errors::Unavailable("peer gone"));
          auto reply = Answer(method, request);
          done(reply.ok() ? decode(*reply) : reply.status());
        };
  }

  StatusOr<grpc::ByteBuffer> Answer(const std::string& method, const grpc::ByteBuffer& request) {
    proto::TensorChunk chunk;
    if (method == "/tw.proto.WorkerService/PutChunk") {
      TensorMessageReader reader;
      TW_RETURN_IF_ERROR(reader.Open(request, &chunk));
      TW_RETURN_IF_ERROR(store.Put(chunk, reader.remaining(), [&reader](void* dst, size_t n) {
        return reader.ReadBytes(dst, n);
      }));
      return EncodeProto(proto::TensorChunkAck());
    }
    TW_RETURN_IF_ERROR(DecodeProto(request, &chunk));
    TW_ASSIGN_OR_RETURN(Tensor tensor, store.Serve(chunk));
    return EncodeBytesMessage(proto::TensorChunkAck(), tensor, chunk.offset(), chunk.length());
  }
};

TEST(ChunkTransferTest, PushWithoutAChunkSocketPutsEveryChunkInACall) {
  FakePeer peer;
  ChunkTransfer transfer("", {}, peer.Call());
  transfer.LearnPort(1234);  // no host (TLS): the port is never used
  const NamedTensor feed{"k", Pattern((2 * kChunkBytes + 400) / 4)};
  int calls = 0;
  Status result = errors::Unknown("not called");
  transfer.Push(9, {&feed}, nullptr, [&](const Status& s) {
    ++calls;
    result = s;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(peer.methods, std::vector<std::string>(3, "/tw.proto.WorkerService/PutChunk"));
  EXPECT_THAT(peer.stubs, ElementsAre(nullptr, nullptr, nullptr));  // the worker's channel
  auto got = peer.store.TakePut(9, "k");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, feed.tensor);
}

TEST(ChunkTransferTest, PullFetchesEveryChunkIntoTheResult) {
  FakePeer peer;
  ChunkTransfer transfer("", {}, peer.Call());
  const Tensor fetched = Pattern((kChunkBytes + 12) / 4);
  peer.store.Offer(9, "k", fetched);
  ChunkedTensor chunked{.index = 1, .meta = {}};
  TensorMetaToProto(fetched, &chunked.meta);
  RunGraphResult result;
  result.recv = {{"other", Tensor::Scalar<int32_t>(5)}, {"k", Tensor()}};
  int calls = 0;
  Status status = errors::Unknown("not called");
  transfer.Pull(9, {chunked}, &result, nullptr, [&](const Status& s) {
    ++calls;
    status = s;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(peer.methods, std::vector<std::string>(2, "/tw.proto.WorkerService/RecvChunk"));
  EXPECT_EQ(result.recv[1].tensor, fetched);
  EXPECT_EQ(result.recv[0].tensor, Tensor::Scalar<int32_t>(5));
  EXPECT_EQ(peer.store.size(), 0u);  // every byte served
}

TEST(ChunkTransferTest, AFailedChunkFailsTheTransferOnceWithItsError) {
  FakePeer peer;
  peer.fail_call = 1;
  ChunkTransfer transfer("", {}, peer.Call());
  const NamedTensor feed{"k", Pattern((3 * kChunkBytes) / 4)};
  int calls = 0;
  Status result;
  transfer.Push(9, {&feed}, nullptr, [&](const Status& s) {
    ++calls;
    result = s;
  });
  EXPECT_EQ(peer.methods.size(), 3u);  // the other chunks still go
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(IsUnavailable(result)) << result;
  EXPECT_EQ(result.message(), "peer gone");
}

TEST(ChunkTransferTest, FallbackCallsTakeTurnsOnTheChunkChannels) {
  FakePeer peer;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < 2; ++i) {
    // Never connected: the fake answers the calls.
    channels.push_back(grpc::CreateChannel("localhost:1", grpc::InsecureChannelCredentials()));
  }
  ChunkTransfer transfer("localhost", channels, peer.Call());  // no port learned: no socket
  const NamedTensor feed{"k", Pattern((4 * kChunkBytes) / 4)};
  Status result = errors::Unknown("not called");
  transfer.Push(9, {&feed}, nullptr, [&](const Status& s) { result = s; });
  EXPECT_TRUE(result.ok()) << result;
  ASSERT_EQ(peer.stubs.size(), 4u);
  EXPECT_NE(peer.stubs[0], nullptr);
  EXPECT_NE(peer.stubs[0], peer.stubs[1]);
  EXPECT_EQ(peer.stubs[0], peer.stubs[2]);
  EXPECT_EQ(peer.stubs[1], peer.stubs[3]);
}

TEST(ChunkTransferTest, AfterCloseChunksStillGoInCalls) {
  FakePeer peer;
  ChunkTransfer transfer("localhost", {}, peer.Call());
  transfer.Close();
  transfer.LearnPort(1234);  // closed: no socket is opened any more
  const NamedTensor feed{"k", Pattern(16)};
  Status result = errors::Unknown("not called");
  transfer.Push(9, {&feed}, nullptr, [&](const Status& s) { result = s; });
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(peer.methods, std::vector<std::string>{"/tw.proto.WorkerService/PutChunk"});
}

}  // namespace
}  // namespace tw
