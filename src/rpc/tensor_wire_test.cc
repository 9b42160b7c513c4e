// The wire form of tensor-carrying calls: round trips of every dtype, and malformed bytes
// from the network rejected with InvalidArgument, never a crash.
#include "src/rpc/tensor_wire.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <complex>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/core/tensor_coding.h"
#include "src/rpc/shared_memory.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

// The buffer's bytes, flattened.
std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

grpc::ByteBuffer FromBytes(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

RunGraphArgs ArgsWithEveryKind() {
  RunGraphArgs args;
  args.proto.set_graph_handle("g1");
  args.proto.set_step_id(42);
  args.proto.add_recv_key("fetch");
  Tensor floats(DT_FLOAT, TensorShape({2, 3}));
  for (int i = 0; i < 6; ++i) floats.flat<float>()[i] = 0.5f * i;
  args.send.push_back({"f", floats});
  args.send.push_back({"s", Tensor::FromVector<std::string>({"a", std::string("b\0c", 3), ""})});
  args.send.push_back({"i", Tensor::Scalar<int64_t>(-7)});
  args.send.push_back({"empty", Tensor(DT_INT32, TensorShape({0, 4}))});
  args.send.push_back({"b", Tensor::FromVector<bool>({true, false})});
  args.send.push_back({"i8", Tensor::FromVector<int8_t>({-128, 127})});
  args.send.push_back({"i16", Tensor::FromVector<int16_t>({-32768, 5, 32767})});
  args.send.push_back({"u16", Tensor::FromVector<uint16_t>({65535}, TensorShape({1, 1}))});
  args.send.push_back({"c64", Tensor::FromVector<std::complex<float>>({{1.5f, -2}, {0, 3}})});
  args.send.push_back({"c128", Tensor::Scalar<std::complex<double>>({1e300, -0.25})});
  return args;
}

TEST(TensorWireTest, RunGraphArgsRoundTripEveryKindOfTensor) {
  RunGraphArgs in = ArgsWithEveryKind();
  RunGraphArgs out;
  ASSERT_TRUE(DecodeRunGraphArgs(EncodeRunGraphArgs(in), &out).ok());
  EXPECT_EQ(out.proto.graph_handle(), "g1");
  EXPECT_EQ(out.proto.step_id(), 42);
  EXPECT_EQ(out.proto.recv_key(0), "fetch");
  EXPECT_EQ(out.proto.send_size(), 0);  // tensors live in `send`
  ASSERT_EQ(out.send.size(), in.send.size());
  for (size_t i = 0; i < in.send.size(); ++i) {
    EXPECT_EQ(out.send[i].name, in.send[i].name);
    EXPECT_EQ(out.send[i].tensor, in.send[i].tensor) << in.send[i].name;
    EXPECT_FALSE(out.send[i].tensor.SharesBufferWith(in.send[i].tensor));
  }
}

TEST(TensorWireTest, PayloadsAreNotCopiedIntoTheHeader) {
  Tensor big(DT_FLOAT, TensorShape({1 << 16}));
  std::memset(big.raw_data(), 0, big.TotalBytes());
  RunStepResult result;
  result.tensor.push_back({"x:0", big});
  const grpc::ByteBuffer buffer = EncodeRunStepResult(result);
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(buffer.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);  // header, then the tensor's own memory
  EXPECT_EQ(slices[1].begin(), static_cast<const uint8_t*>(big.raw_data()));
  EXPECT_EQ(slices[1].size(), big.TotalBytes());
  EXPECT_LT(slices[0].size(), 64u);
}

TEST(TensorWireTest, EveryCallRoundTrips) {
  RunStepArgs step;
  step.proto.set_session_handle("s");
  step.proto.add_fetch("y:0");
  step.feed.push_back({"x:0", Tensor::Scalar<double>(2.5)});
  RunStepArgs step_out;
  ASSERT_TRUE(DecodeRunStepArgs(EncodeRunStepArgs(step), &step_out).ok());
  EXPECT_EQ(step_out.proto.session_handle(), "s");
  EXPECT_EQ(step_out.feed[0].tensor.scalar<double>(), 2.5);

  RunGraphResult graph;
  graph.recv.push_back({"k", Tensor::Scalar<int32_t>(3)});
  RunGraphResult graph_out;
  ASSERT_TRUE(DecodeRunGraphResult(EncodeRunGraphResult(graph), &graph_out).ok());
  EXPECT_EQ(graph_out.recv[0].tensor.scalar<int32_t>(), 3);

  RecvTensorResult recv;
  recv.tensor.push_back({"a", Tensor::FromVector<float>({1, 2, 3})});
  recv.tensor.push_back({"b", Tensor::Scalar<std::string>("two")});
  RecvTensorResult recv_out;
  ASSERT_TRUE(DecodeRecvTensorResult(EncodeRecvTensorResult(recv), &recv_out).ok());
  ASSERT_EQ(recv_out.tensor.size(), 2u);
  EXPECT_EQ(recv_out.tensor[0].name, "a");
  EXPECT_EQ(recv_out.tensor[0].tensor, recv.tensor[0].tensor);
  EXPECT_EQ(recv_out.tensor[1].name, "b");
  EXPECT_EQ(recv_out.tensor[1].tensor, recv.tensor[1].tensor);

  RecvTensorArgs request;
  request.proto.set_step_id(7);
  request.proto.add_rendezvous_key("key");
  request.proto.add_rendezvous_key("other");
  request.push.push_back({"pushed", Tensor::FromVector<float>({1, 2, 3})});
  request.push.push_back({"also", Tensor::Scalar<int64_t>(-4)});
  RecvTensorArgs request_out;
  ASSERT_TRUE(DecodeRecvTensorArgs(EncodeRecvTensorArgs(request), &request_out).ok());
  EXPECT_EQ(request_out.proto.step_id(), 7);
  EXPECT_THAT(request_out.proto.rendezvous_key(), ::testing::ElementsAre("key", "other"));
  EXPECT_EQ(request_out.proto.push_size(), 0);  // the tensors are in `push`
  ASSERT_EQ(request_out.push.size(), 2u);
  EXPECT_EQ(request_out.push[0].name, "pushed");
  EXPECT_EQ(request_out.push[0].tensor, request.push[0].tensor);
  EXPECT_EQ(request_out.push[1].name, "also");
  EXPECT_EQ(request_out.push[1].tensor, request.push[1].tensor);
}

TEST(TensorWireTest, TruncatedMessagesAreInvalidArgument) {
  const std::string bytes = Flatten(EncodeRunGraphArgs(ArgsWithEveryKind()));
  // Every proper prefix fails cleanly.
  for (size_t n = 0; n < bytes.size(); ++n) {
    RunGraphArgs out;
    Status s = DecodeRunGraphArgs(FromBytes(bytes.substr(0, n)), &out);
    EXPECT_TRUE(IsInvalidArgument(s)) << n << ": " << s;
  }
}

TEST(TensorWireTest, TrailingBytesAndBadHeadersAreInvalidArgument) {
  const std::string bytes = Flatten(EncodeRunGraphArgs(ArgsWithEveryKind()));
  RunGraphArgs out;
  Status extra = DecodeRunGraphArgs(FromBytes(bytes + "xyz"), &out);
  EXPECT_TRUE(IsInvalidArgument(extra));
  EXPECT_THAT(std::string(extra.message()), HasSubstr("3 bytes after its last tensor"));

  std::string huge_header = bytes;
  huge_header[3] = '\x7f';  // header size far beyond the message
  Status header = DecodeRunGraphArgs(FromBytes(huge_header), &out);
  EXPECT_TRUE(IsInvalidArgument(header));
  EXPECT_THAT(std::string(header.message()), HasSubstr("message header of"));

  std::string garbage = std::string("\x04\x00\x00\x00", 4) + "\xff\xff\xff\xff";
  EXPECT_TRUE(IsInvalidArgument(DecodeRunGraphArgs(FromBytes(garbage), &out)));
}

TEST(TensorWireTest, AHostileShapeCannotAllocateBeyondTheMessage) {
  proto::RecvTensorResponse header;
  proto::TensorProto* meta = header.add_tensor()->mutable_tensor();
  meta->set_dtype(proto::DT_FLOAT);
  meta->mutable_shape()->add_dim(int64_t{1} << 40);
  RecvTensorResult out;
  Status s = DecodeRecvTensorResult(EncodeTensorMessage(header, {}), &out);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(IsInvalidArgument(s) || IsResourceExhausted(s)) << s;
}

TEST(TensorWireTest, BoolBytesOtherThanZeroOrOneAreRejected) {
  RecvTensorResult in;
  in.tensor.push_back({"k", Tensor::FromVector<bool>({true, false})});
  std::string bytes = Flatten(EncodeRecvTensorResult(in));
  bytes.back() = '\x05';
  RecvTensorResult out;
  Status s = DecodeRecvTensorResult(FromBytes(bytes), &out);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
}

}  // namespace
}  // namespace tw

namespace tw {
namespace {

Tensor Iota(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<float>()[i] = static_cast<float>(i) * 0.25f;
  return t;
}

// Shared memory (the receiver is on this host): tensors of kMinSharedBytes and more leave
// the message, small ones, bools and strings stay inline, and nothing is chunked. Without
// it, only the tensor above 4 MiB is chunked and its position reported.
TEST(TensorWireTest, TransportPutsLargeTensorsInSharedMemoryOrChunks) {
  RunGraphArgs in = ArgsWithEveryKind();
  const int64_t shared_elements = shm::kMinSharedBytes / 4;
  in.send.push_back({"shared", Iota(shared_elements)});
  in.send.push_back({"large", Iota(int64_t{5} << 20 >> 2 << 2)});
  in.send.push_back({"bools", Tensor(DT_BOOL, TensorShape({int64_t{1} << 20}))});

  std::vector<size_t> chunked;
  // Without the server's key a request keeps its tensors (the server would refuse them).
  grpc::ByteBuffer buffer =
      EncodeRunGraphArgs(in, {.chunk_large = true, .shared_memory = true, .chunked = &chunked});
  EXPECT_EQ(chunked, std::vector<size_t>{in.send.size() - 2}) << "no key, no shared memory";
  EXPECT_GT(Flatten(buffer).size(), (size_t{1} << 20) + shm::kMinSharedBytes);
  chunked.clear();
  // This process is the server here: its key, read as a peer reads it.
  const std::string key = shm::PeerKey(shm::KeyLocation());
  ASSERT_FALSE(key.empty());
  buffer = EncodeRunGraphArgs(
      in,
      {.chunk_large = true, .shared_memory = true, .shared_memory_key = key, .chunked = &chunked});
  EXPECT_TRUE(chunked.empty());
  EXPECT_LT(Flatten(buffer).size(), (size_t{1} << 20) + 4096) << "only the bools are inline";
  RunGraphArgs out;
  ASSERT_TRUE(DecodeRunGraphArgs(buffer, &out).ok());
  EXPECT_EQ(out.proto.shared_memory_host(), shm::HostIdentity());
  ASSERT_EQ(out.send.size(), in.send.size());
  for (size_t i = 0; i < in.send.size(); ++i) {
    EXPECT_EQ(out.send[i].tensor, in.send[i].tensor) << in.send[i].name;
  }

  chunked.clear();
  buffer = EncodeRunGraphArgs(in, {.chunk_large = true, .chunked = &chunked});
  EXPECT_EQ(chunked, std::vector<size_t>{in.send.size() - 2});
  std::vector<ChunkedTensor> chunks;
  ASSERT_TRUE(DecodeRunGraphArgs(buffer, &out, &chunks).ok());
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].index, in.send.size() - 2);
  EXPECT_EQ(out.send[in.send.size() - 3].tensor, in.send[in.send.size() - 3].tensor);
}

TEST(TensorWireTest, RecvTensorReplyInSharedMemoryRoundTrips) {
  RecvTensorResult in;
  in.tensor.push_back({"k", Iota(100'000)});
  grpc::ByteBuffer buffer = EncodeRecvTensorResult(in, /*shared_memory=*/true);
  EXPECT_LT(Flatten(buffer).size(), 200u);
  RecvTensorResult out;
  ASSERT_TRUE(DecodeRecvTensorResult(buffer, &out).ok());
  ASSERT_EQ(out.tensor.size(), 1u);
  EXPECT_EQ(out.tensor[0].tensor, in.tensor[0].tensor);
  // The block was released by the first decode: a replayed reply is an error, not stale data.
  Status replay = DecodeRecvTensorResult(buffer, &out);
  EXPECT_TRUE(IsDataLoss(replay)) << replay;

  std::string peer_host;
  proto::SharedMemoryKeyRef peer_key;
  ASSERT_TRUE(DecodeRecvTensorResult(EncodeRecvTensorResult(in), &out, &peer_host, &peer_key).ok());
  EXPECT_EQ(peer_host, shm::HostIdentity());
  EXPECT_EQ(peer_key.pid(), getpid());
  const std::string key = shm::PeerKey(peer_key);
  ASSERT_FALSE(key.empty());

  // A request's pushed tensors go in shared memory too, and carry the caller's identity.
  RecvTensorArgs request;
  request.proto.add_rendezvous_key("k");
  request.push.push_back({"p", Iota(100'000)});
  grpc::ByteBuffer pushed =
      EncodeRecvTensorArgs(request, {.shared_memory = true, .shared_memory_key = key});
  EXPECT_LT(Flatten(pushed).size(), 300u);
  RecvTensorArgs decoded;
  ASSERT_TRUE(DecodeRecvTensorArgs(pushed, &decoded).ok());
  EXPECT_EQ(decoded.proto.shared_memory_host(), shm::HostIdentity());
  ASSERT_EQ(decoded.push.size(), 1u);
  EXPECT_EQ(decoded.push[0].tensor, request.push[0].tensor);
}

// A shared-memory reference in a request names a file of the server's host (its /proc
// entry): one the server's key does not come with is InvalidArgument naming the tensor, in
// every request that carries tensors, and the server opens nothing; not even when the
// reference names a file the server really has open, which is watched here.
TEST(TensorWireTest, ForgedSharedMemoryReferencesInRequestsTouchNoFile) {
  const std::string file = ::testing::TempDir() + "/tw_wire_watched";
  const int fd = open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 1 << 20), 0);
  const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(inotify_add_watch(watch, file.c_str(), IN_OPEN | IN_ACCESS), 0);
  auto events = [watch] {
    alignas(struct inotify_event) char buf[4096];
    const ssize_t got = read(watch, buf, sizeof buf);
    return got > 0 ? got : 0;
  };
  ASSERT_EQ(events(), 0);

  const Tensor value = Iota(100'000);
  proto::SharedMemoryRef forged;
  forged.set_pid(getpid());
  forged.set_fd(fd);
  forged.set_block_id(7);
  forged.set_ticket(1);
  forged.set_length(value.TotalBytes());
  auto meta = [&](proto::NamedTensorProto* t) {
    t->set_name("feed");
    TensorMetaToProto(value, t->mutable_tensor());
    *t->mutable_shared() = forged;
  };
  const std::string key = shm::PeerKey(shm::KeyLocation());
  ASSERT_EQ(key.size(), 32u);
  std::string flipped = key;
  flipped[5] ^= 1;
  const uint64_t opened = shm::GetStats().opened;
  for (const std::string& k : {std::string(), flipped, key.substr(0, 31), key + "x"}) {
    forged.set_key(k);
    proto::RunGraphRequest run_graph;
    meta(run_graph.add_send());
    RunGraphArgs graph_args;
    Status s = DecodeRunGraphArgs(EncodeTensorMessage(run_graph, {}), &graph_args);
    EXPECT_TRUE(IsInvalidArgument(s)) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("tensor feed"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("was not offered to this task"));

    proto::RecvTensorRequest recv_tensor;
    meta(recv_tensor.add_push());
    RecvTensorArgs recv_args;
    s = DecodeRecvTensorArgs(EncodeTensorMessage(recv_tensor, {}), &recv_args);
    EXPECT_TRUE(IsInvalidArgument(s)) << s;

    proto::RunStepRequest run_step;
    meta(run_step.add_feed());
    RunStepArgs step_args;
    s = DecodeRunStepArgs(EncodeTensorMessage(run_step, {}), &step_args);
    EXPECT_TRUE(IsInvalidArgument(s)) << s;
  }
  EXPECT_EQ(shm::GetStats().opened, opened);
  EXPECT_EQ(events(), 0) << "the server opened the file a forged reference named";

  // The watch does see an open: with the key, the same reference is opened (and found not
  // to be a block).
  forged.set_key(key);
  proto::RunGraphRequest with_key;
  meta(with_key.add_send());
  RunGraphArgs args;
  Status s = DecodeRunGraphArgs(EncodeTensorMessage(with_key, {}), &args);
  EXPECT_TRUE(IsUnavailable(s)) << s;
  EXPECT_GT(events(), 0);
  EXPECT_EQ(shm::GetStats().opened, opened + 1);
  close(watch);
  close(fd);
  unlink(file.c_str());
}

// A block this process offered a peer (with the peer's key, not its own) is not offered to
// this process: its own requests refuse it.
TEST(TensorWireTest, ABlockOfferedToAnotherTaskIsRefused) {
  RunGraphArgs in;
  in.send.push_back({"feed", Iota(100'000)});
  grpc::ByteBuffer buffer =
      EncodeRunGraphArgs(in, {.shared_memory = true, .shared_memory_key = std::string(32, 'k')});
  EXPECT_LT(Flatten(buffer).size(), 300u) << "in shared memory";
  RunGraphArgs out;
  Status s = DecodeRunGraphArgs(buffer, &out);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  // The block itself is good, and is released here (other tests count blocks in flight).
  ASSERT_EQ(out.proto.send_size(), 1);
  Tensor copy(DT_FLOAT, TensorShape({100'000}));
  ASSERT_TRUE(shm::Import(out.proto.send(0).shared(), copy.raw_data(), copy.TotalBytes()).ok());
  EXPECT_EQ(copy, in.send[0].tensor);
}

}  // namespace
}  // namespace tw
