#include "src/rpc/chunk_transfer.h"

#include <utility>

#include "src/base/logging.h"
#include "src/rpc/tensor_chunks.h"

namespace tw {
namespace {

constexpr char kPutChunkMethod[] = "/tw.proto.WorkerService/PutChunk";
constexpr char kRecvChunkMethod[] = "/tw.proto.WorkerService/RecvChunk";

// Calls `done` once, with the first error, after `count` calls of Done.
class Join {
 public:
  Join(size_t count, ChunkTransfer::StatusCallback done)
      : pending_(count), done_(std::move(done)) {}
  void Done(const Status& s) {
    ChunkTransfer::StatusCallback finish;
    Status result;
    {
      absl::MutexLock lock(&mu_);
      if (!s.ok() && first_.ok()) first_ = s;
      if (--pending_ > 0) return;
      finish = std::move(done_);
      result = first_;
    }
    finish(result);
  }

 private:
  absl::Mutex mu_;
  size_t pending_ ABSL_GUARDED_BY(mu_);
  Status first_ ABSL_GUARDED_BY(mu_);
  ChunkTransfer::StatusCallback done_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

ChunkTransfer::ChunkTransfer(std::string host,
                             const std::vector<std::shared_ptr<grpc::Channel>>& chunk_channels,
                             CallFn call)
    : host_(std::move(host)), call_(std::move(call)) {
  for (const auto& c : chunk_channels) stubs_.push_back(std::make_unique<grpc::GenericStub>(c));
}

ChunkTransfer::~ChunkTransfer() { Close(); }

void ChunkTransfer::Close() {
  std::vector<std::shared_ptr<ChunkSocketClient>> sockets;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    sockets.swap(retired_);
    if (socket_ != nullptr) sockets.push_back(std::move(socket_));
  }
  // Outside the lock: joining runs the chunks' callbacks, which may start fallback calls.
  // (A transfer that holds one of these clients too finds it closed.)
  for (const auto& socket : sockets) socket->Close();
}

void ChunkTransfer::Push(int64_t step, const std::vector<const NamedTensor*>& tensors,
                         CancellationManager* cm, StatusCallback done) {
  size_t count = 0;
  for (const NamedTensor* t : tensors) count += ChunksOf(t->tensor.TotalBytes()).size();
  auto join = std::make_shared<Join>(count, std::move(done));
  std::shared_ptr<ChunkSocketClient> socket = Socket();
  for (const NamedTensor* t : tensors) {
    proto::TensorChunk chunk;
    chunk.set_step_id(step);
    chunk.set_key(t->name);
    TensorMetaToProto(t->tensor, chunk.mutable_meta());
    for (const auto& [offset, length] : ChunksOf(t->tensor.TotalBytes())) {
      chunk.set_offset(offset);
      chunk.set_length(length);
      auto in_call = [this, chunk, tensor = t->tensor, cm, join] {
        call_(
            kPutChunkMethod, EncodeBytesMessage(chunk, tensor, chunk.offset(), chunk.length()),
            [](const grpc::ByteBuffer&) { return OkStatus(); }, cm,
            [join](const Status& s) { join->Done(s); }, NextStub());
      };
      if (socket == nullptr) {
        in_call();
        continue;
      }
      socket->Put(chunk, t->tensor, cm,
                  [this, port = socket->port(), in_call, join](const Status& s, bool unreachable) {
                    if (!unreachable) return join->Done(s);
                    SocketUnreachable(port, s);
                    in_call();
                  });
    }
  }
}

void ChunkTransfer::Pull(int64_t step, const std::vector<ChunkedTensor>& chunked,
                         RunGraphResult* result, CancellationManager* cm, StatusCallback done) {
  for (const ChunkedTensor& c : chunked) {
    auto tensor = AllocateFromMetaProto(c.meta);
    if (!tensor.ok()) {
      done(tensor.status());
      return;
    }
    result->recv[c.index].tensor = *std::move(tensor);
  }
  size_t count = 0;
  for (const ChunkedTensor& c : chunked) {
    count += ChunksOf(result->recv[c.index].tensor.TotalBytes()).size();
  }
  auto join = std::make_shared<Join>(count, std::move(done));
  std::shared_ptr<ChunkSocketClient> socket = Socket();
  for (const ChunkedTensor& c : chunked) {
    NamedTensor& target = result->recv[c.index];
    for (const auto& [offset, length] : ChunksOf(target.tensor.TotalBytes())) {
      proto::TensorChunk chunk;
      chunk.set_step_id(step);
      chunk.set_key(target.name);
      chunk.set_offset(offset);
      chunk.set_length(length);
      // Each chunk lands straight in its range of the fetched tensor: from the socket, or
      // copied from the reply.
      char* dst = static_cast<char*>(target.tensor.raw_data()) + offset;
      auto in_call = [this, chunk, dst, cm, join] {
        call_(
            kRecvChunkMethod, EncodeProto(chunk),
            [dst, length = chunk.length()](const grpc::ByteBuffer& reply) {
              proto::TensorChunkAck ack;
              TensorMessageReader reader;
              TW_RETURN_IF_ERROR(reader.Open(reply, &ack));
              TW_RETURN_IF_ERROR(reader.ReadBytes(dst, length));
              return reader.Finish();
            },
            cm, [join](const Status& s) { join->Done(s); }, NextStub());
      };
      if (socket == nullptr) {
        in_call();
        continue;
      }
      socket->Fetch(
          chunk, dst, cm,
          [this, port = socket->port(), in_call, join](const Status& s, bool unreachable) {
            if (!unreachable) return join->Done(s);
            SocketUnreachable(port, s);
            in_call();
          });
    }
  }
}

std::shared_ptr<ChunkSocketClient> ChunkTransfer::Socket() {
  absl::MutexLock lock(&mu_);
  if (socket_ == nullptr || socket_->port() != port_ || !socket_->Usable()) return nullptr;
  return socket_;
}

void ChunkTransfer::LearnPort(int port) {
  std::shared_ptr<ChunkSocketClient> old;
  std::vector<std::shared_ptr<ChunkSocketClient>> closed;
  {
    absl::MutexLock lock(&mu_);
    port_ = port;
    // Without a host (a TLS cluster) a port is never used: chunks must not leave TLS.
    if (port == 0 || host_.empty() || closed_) return;
    if (socket_ != nullptr && socket_->port() == port) return;
    closed.swap(retired_);  // retired at an earlier change: their threads have ended
    old = std::move(socket_);
    if (old != nullptr) retired_.push_back(old);
    socket_ = std::make_shared<ChunkSocketClient>(host_, port, kChunkConnections);
  }
  // Outside the lock: these run chunks' callbacks.
  if (old != nullptr) old->BeginClose(/*queued_unreachable=*/true);
  for (const auto& socket : closed) socket->Close();
}

void ChunkTransfer::ForgetPort() {
  absl::MutexLock lock(&mu_);
  port_ = 0;
}

void ChunkTransfer::SocketUnreachable(int port, const Status& why) {
  {
    absl::MutexLock lock(&mu_);
    if (logged_port_ == port) return;
    logged_port_ = port;
  }
  Log().warn("{}; large tensors to and from {} travel in gRPC calls", std::string(why.message()),
             host_);
}

// Chunks take turns on the connections, so that several carry a transfer and the receiver
// reads and copies on as many threads (one connection's reading and parsing is serial in
// gRPC).
grpc::GenericStub* ChunkTransfer::NextStub() {
  if (stubs_.empty()) return nullptr;
  return stubs_[next_stub_.fetch_add(1, std::memory_order_relaxed) % stubs_.size()].get();
}

}  // namespace tw
