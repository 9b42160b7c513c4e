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
#include <vector>

#include "google/protobuf/message_lite.h"
#include "grpcpp/support/byte_buffer.h"
#include "src/distributed/messages.h"
#include "tensorweave/status.h"

namespace tw {

// `payloads`: the tensors whose metadata the header carries, in its order; only those that
// CarriesPayload add bytes.
grpc::ByteBuffer EncodeTensorMessage(const google::protobuf::MessageLite& header,
                                     const std::vector<const Tensor*>& payloads);

// Reads one message: Open parses the header, ReadTensor then decodes each tensor in header
// order, Finish checks that nothing is left over. Every error is InvalidArgument naming what
// is wrong (never a crash: the bytes come from the network).
class TensorMessageReader {
 public:
  Status Open(const grpc::ByteBuffer& buffer, google::protobuf::MessageLite* header);
  StatusOr<Tensor> ReadTensor(const proto::TensorProto& meta);
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
grpc::ByteBuffer EncodeRunGraphArgs(const RunGraphArgs& args);
Status DecodeRunGraphArgs(const grpc::ByteBuffer& buffer, RunGraphArgs* args);
grpc::ByteBuffer EncodeRunGraphResult(const RunGraphResult& result);
Status DecodeRunGraphResult(const grpc::ByteBuffer& buffer, RunGraphResult* result);
grpc::ByteBuffer EncodeRecvTensorResult(const RecvTensorResult& result);
Status DecodeRecvTensorResult(const grpc::ByteBuffer& buffer, RecvTensorResult* result);

// A plain protobuf message as a ByteBuffer and back (for the raw gRPC methods' requests).
grpc::ByteBuffer EncodeProto(const google::protobuf::MessageLite& message);
Status DecodeProto(const grpc::ByteBuffer& buffer, google::protobuf::MessageLite* message);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_TENSOR_WIRE_H_
