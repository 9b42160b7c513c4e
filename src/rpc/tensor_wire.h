// The wire form of the calls that carry tensors (RunStep, RunGraph, RecvTensor).
//
// A message is a little-endian fixed32 header size, the header (a protobuf message whose
// TensorProtos carry dtype and shape only, see TensorMetaToProto), then the bytes of every
// numeric tensor in header order. Encoding points gRPC slices at the tensors' own memory
// (each slice holds a reference to its tensor until gRPC has sent it), so a payload is never
// copied into a protobuf string; decoding copies each payload once, from gRPC's receive
// slices straight into the new tensor.
#ifndef TENSORWEAVE_SRC_RPC_TENSOR_WIRE_H_
#define TENSORWEAVE_SRC_RPC_TENSOR_WIRE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "google/protobuf/message_lite.h"
#include "grpcpp/support/byte_buffer.h"
#include "src/base/metrics.h"
#include "src/core/tensor_coding.h"
#include "src/distributed/messages.h"
#include "tensorweave/status.h"

namespace tw {

// `payloads`: the tensors whose metadata the header carries, in its order; only those that
// CarriesPayload add bytes.
grpc::ByteBuffer EncodeTensorMessage(const google::protobuf::MessageLite& header,
                                     const std::vector<const Tensor*>& payloads);

// A message whose payload is bytes [offset, offset + length) of `owner` (a chunk), without
// copying them.
grpc::ByteBuffer EncodeBytesMessage(const google::protobuf::MessageLite& header,
                                    const Tensor& owner, size_t offset, size_t length);

// Reads one message: Open parses the header, ReadTensor then decodes each tensor in header
// order, Finish checks that nothing is left over. Every error is InvalidArgument naming what
// is wrong (never a crash: the bytes come from the network).
class TensorMessageReader {
 public:
  Status Open(const grpc::ByteBuffer& buffer, google::protobuf::MessageLite* header);
  StatusOr<Tensor> ReadTensor(const proto::TensorProto& meta);
  // The next `n` raw bytes (a chunk's payload). InvalidArgument when fewer are left.
  Status ReadBytes(void* dst, size_t n);
  size_t remaining() const { return remaining_; }
  Status Finish() const;

 private:
  // Copies the next `n` bytes to `dst`.
  Status Read(void* dst, size_t n);

  std::vector<grpc::Slice> slices_;
  size_t slice_ = 0;   // current slice
  size_t offset_ = 0;  // within it
  size_t remaining_ = 0;
};

// The calls' messages. Decode functions fill the C++ forms of src/distributed/messages.h;
// the proto parts' tensor fields are left empty.
grpc::ByteBuffer EncodeRunStepArgs(const RunStepArgs& args);
Status DecodeRunStepArgs(const grpc::ByteBuffer& buffer, RunStepArgs* args);
grpc::ByteBuffer EncodeRunStepResult(const RunStepResult& result);
Status DecodeRunStepResult(const grpc::ByteBuffer& buffer, RunStepResult* result);

// How the tensors of a RunGraph or RecvTensor message travel besides inline:
// - `shared_memory` (the receiver is on this host, shm::SameHost): tensors of at least
//   shm::kMinSharedBytes go in shared-memory blocks (src/rpc/shared_memory.h) when a block
//   can be had. Requests need `shared_memory_key` too (shm::PeerKey of the server, learned
//   from its replies): a server refuses a reference without its key, so without one the
//   tensors travel inline;
// - `chunk_large`: the others that ShouldChunk are marked chunked and travel as TensorChunks
//   (src/rpc/tensor_chunks.h).
// Encoding appends the positions of the chunked tensors to `chunked` when given.
// - `chunk_port` (replies): the server's chunk socket, see RunGraphResponse.chunk_port.
struct TensorTransport {
  bool chunk_large = false;
  int chunk_port = 0;
  bool shared_memory = false;
  std::string shared_memory_key;
  std::vector<size_t>* chunked = nullptr;
};
// Numeric tensors above 4 MiB (bools excepted: their bytes are checked as a whole). Below
// that a chunk's own round trip costs more than it saves, also on a chunk socket (1 and 2
// MB pushes and pulls were 2-29% slower chunked there: docs/performance.md).
inline bool ShouldChunk(const Tensor& t) {
  return CarriesPayload(t.dtype()) && t.dtype() != DT_BOOL && t.TotalBytes() > (size_t{4} << 20);
}

// Decoding accepts chunked entries only when `chunks` is given: each gets an empty tensor,
// and its index and metadata are appended to `chunks`. Shared-memory entries are read from
// their blocks (and the blocks released); in requests (RunStep, RunGraph, RecvTensor args)
// only those carrying this process's key (shm::ImportFromRequest), any other is
// InvalidArgument before the file system is touched.
struct ChunkedTensor {
  size_t index;
  proto::TensorProto meta;
};
// Requests carry the caller's host identity, replies the server's and where its
// shared-memory key is (shm::KeyLocation).
grpc::ByteBuffer EncodeRunGraphArgs(const RunGraphArgs& args,
                                    const TensorTransport& transport = {});
Status DecodeRunGraphArgs(const grpc::ByteBuffer& buffer, RunGraphArgs* args,
                          std::vector<ChunkedTensor>* chunks = nullptr);
grpc::ByteBuffer EncodeRunGraphResult(const RunGraphResult& result,
                                      const TensorTransport& transport = {});
// `peer_host` and `peer_key`, when given, receive the server's host identity and where
// its shared-memory key is; `chunk_port` its chunk socket's port (0: none).
Status DecodeRunGraphResult(const grpc::ByteBuffer& buffer, RunGraphResult* result,
                            std::vector<ChunkedTensor>* chunks = nullptr,
                            std::string* peer_host = nullptr,
                            proto::SharedMemoryKeyRef* peer_key = nullptr,
                            int* chunk_port = nullptr);
// Pushed tensors travel whole (never chunked): in shared memory when `transport` allows.
grpc::ByteBuffer EncodeRecvTensorArgs(const RecvTensorArgs& args,
                                      const TensorTransport& transport = {});
Status DecodeRecvTensorArgs(const grpc::ByteBuffer& buffer, RecvTensorArgs* args);
grpc::ByteBuffer EncodeRecvTensorResult(const RecvTensorResult& result, bool shared_memory = false);
// `peer_host` and `peer_key` as for DecodeRunGraphResult.
Status DecodeRecvTensorResult(const grpc::ByteBuffer& buffer, RecvTensorResult* result,
                              std::string* peer_host = nullptr,
                              proto::SharedMemoryKeyRef* peer_key = nullptr);

// tw_tensor_bytes_sent_total{path}: tensor bytes this process sent to other tasks, over TCP
// ("tcp": gRPC messages and chunk sockets) or in shared-memory blocks ("shared_memory").
Counter* TensorBytesSent(const char* path);

// A plain protobuf message as a ByteBuffer and back (for the raw gRPC methods' requests).
grpc::ByteBuffer EncodeProto(const google::protobuf::MessageLite& message);
Status DecodeProto(const grpc::ByteBuffer& buffer, google::protobuf::MessageLite* message);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_TENSOR_WIRE_H_
