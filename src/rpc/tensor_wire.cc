#include "src/rpc/tensor_wire.h"

#include <cstring>
#include <optional>
#include <string>

#include "src/base/metrics.h"
#include "src/core/tensor_coding.h"
#include "src/rpc/shared_memory.h"

namespace tw {
namespace {

using NamedTensorProtos = google::protobuf::RepeatedPtrField<proto::NamedTensorProto>;

void ReleaseTensor(void* tensor) { delete static_cast<Tensor*>(tensor); }

// With `shared_memory` (the receiver is on this host), a large enough tensor's bytes copied
// into a shared-memory block; nothing when they are to travel otherwise (also when no block
// can be had).
std::optional<proto::SharedMemoryRef> SharedCopy(const Tensor& t,
                                                 const TensorTransport& transport) {
  if (!transport.shared_memory || !CarriesPayload(t.dtype()) || t.dtype() == DT_BOOL ||
      t.TotalBytes() < shm::kMinSharedBytes) {
    return std::nullopt;
  }
  proto::SharedMemoryRef ref;
  if (!shm::Export(t.raw_data(), t.TotalBytes(), transport.shared_memory_key, &ref).ok()) {
    return std::nullopt;
  }
  if (RecordingMetrics()) {
    static Counter* shared_bytes = TensorBytesSent("shared_memory");
    shared_bytes->Add(static_cast<double>(t.TotalBytes()));
  }
  return ref;
}

// Header metadata for `tensors`, and the tensors whose bytes follow the header; see
// TensorTransport for the ones that travel otherwise.
void AddTensors(const std::vector<NamedTensor>& tensors, const TensorTransport& transport,
                NamedTensorProtos* metas, std::vector<const Tensor*>* payloads) {
  metas->Clear();
  metas->Reserve(static_cast<int>(tensors.size()));
  for (size_t i = 0; i < tensors.size(); ++i) {
    const NamedTensor& t = tensors[i];
    proto::NamedTensorProto* meta = metas->Add();
    meta->set_name(t.name);
    TensorMetaToProto(t.tensor, meta->mutable_tensor());
    if (auto ref = SharedCopy(t.tensor, transport)) {
      *meta->mutable_shared() = *std::move(ref);
      continue;
    }
    if (transport.chunk_large && ShouldChunk(t.tensor)) {
      meta->set_chunked(true);
      if (transport.chunked != nullptr) transport.chunked->push_back(i);
    } else {
      payloads->push_back(&t.tensor);
    }
  }
}

// A request's transport: shared memory only with the server's key, which the server
// requires in every reference (shm::ImportFromRequest).
TensorTransport ForRequest(TensorTransport transport) {
  if (transport.shared_memory_key.empty()) transport.shared_memory = false;
  return transport;
}

// Where a message comes from decides which shared-memory references it may carry.
enum class Source { kRequest, kReply };

// A tensor whose bytes are in a peer's shared-memory block.
StatusOr<Tensor> ImportTensor(const proto::TensorProto& meta, const proto::SharedMemoryRef& ref,
                              Source source) {
  // Checked before the tensor is allocated: a forged ref costs the server nothing.
  if (source == Source::kRequest) TW_RETURN_IF_ERROR(shm::CheckOffered(ref));
  TW_ASSIGN_OR_RETURN(Tensor tensor, AllocateFromMetaProto(meta));
  TW_RETURN_IF_ERROR(source == Source::kRequest
                         ? shm::ImportFromRequest(ref, tensor.raw_data(), tensor.TotalBytes())
                         : shm::Import(ref, tensor.raw_data(), tensor.TotalBytes()));
  return tensor;
}

// Chunked entries (only accepted when `chunks` is given) get an empty tensor and their
// index and metadata in `chunks`.
Status ReadTensors(TensorMessageReader& reader, Source source, NamedTensorProtos* metas,
                   std::vector<NamedTensor>* out, std::vector<ChunkedTensor>* chunks) {
  out->clear();
  out->reserve(metas->size());
  for (proto::NamedTensorProto& meta : *metas) {
    if (meta.chunked()) {
      if (chunks == nullptr) {
        return errors::InvalidArgument("tensor ", meta.name(), " is chunked in a message that ",
                                       "carries its tensors whole");
      }
      chunks->push_back({out->size(), std::move(*meta.mutable_tensor())});
      out->push_back({meta.name(), Tensor()});
      continue;
    }
    auto tensor = meta.has_shared() ? ImportTensor(meta.tensor(), meta.shared(), source)
                                    : reader.ReadTensor(meta.tensor());
    if (!tensor.ok()) return errors::Annotate(tensor.status(), "tensor " + meta.name() + ": ");
    out->push_back({meta.name(), *std::move(tensor)});
  }
  metas->Clear();
  return reader.Finish();
}

template <typename Proto>
grpc::ByteBuffer EncodeNamed(Proto header, NamedTensorProtos* (Proto::*field)(),
                             const std::vector<NamedTensor>& tensors,
                             const TensorTransport& transport = {}) {
  std::vector<const Tensor*> payloads;
  AddTensors(tensors, transport, (header.*field)(), &payloads);
  return EncodeTensorMessage(header, payloads);
}

template <typename Proto>
Status DecodeNamed(const grpc::ByteBuffer& buffer, Source source, Proto* header,
                   NamedTensorProtos* (Proto::*field)(), std::vector<NamedTensor>* out,
                   std::vector<ChunkedTensor>* chunks = nullptr) {
  TensorMessageReader reader;
  TW_RETURN_IF_ERROR(reader.Open(buffer, header));
  return ReadTensors(reader, source, (header->*field)(), out, chunks);
}

// The fixed32 size and the header, as the message's first slice.
grpc::Slice HeaderSlice(const google::protobuf::MessageLite& header) {
  const size_t header_size = header.ByteSizeLong();
  std::string head(4 + header_size, '\0');
  const uint32_t size32 = static_cast<uint32_t>(header_size);
  for (int i = 0; i < 4; ++i) head[i] = static_cast<char>((size32 >> (8 * i)) & 0xff);
  header.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(head.data() + 4));
  return grpc::Slice(head);
}

// A slice over bytes of `owner`, holding a reference to its buffer until gRPC is done.
grpc::Slice TensorSlice(const Tensor& owner, size_t offset, size_t length) {
  if (RecordingMetrics()) {
    static Counter* tcp_bytes = TensorBytesSent("tcp");
    tcp_bytes->Add(static_cast<double>(length));
  }
  auto* holder = new Tensor(owner);
  return grpc::Slice(static_cast<char*>(const_cast<void*>(holder->raw_data())) + offset, length,
                     &ReleaseTensor, holder);
}

}  // namespace

Counter* TensorBytesSent(const char* path) {
  return Metrics()
      .CounterFamily("tw_tensor_bytes_sent_total",
                     "Tensor bytes this process sent to other tasks, by path.", {"path"})
      .With({path});
}

grpc::ByteBuffer EncodeTensorMessage(const google::protobuf::MessageLite& header,
                                     const std::vector<const Tensor*>& payloads) {
  std::vector<grpc::Slice> slices;
  slices.reserve(1 + payloads.size());
  slices.push_back(HeaderSlice(header));
  for (const Tensor* t : payloads) {
    if (!CarriesPayload(t->dtype()) || t->TotalBytes() == 0) continue;
    slices.push_back(TensorSlice(*t, 0, t->TotalBytes()));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

grpc::ByteBuffer EncodeBytesMessage(const google::protobuf::MessageLite& header,
                                    const Tensor& owner, size_t offset, size_t length) {
  grpc::Slice slices[2] = {HeaderSlice(header), TensorSlice(owner, offset, length)};
  return grpc::ByteBuffer(slices, 2);
}

Status TensorMessageReader::Open(const grpc::ByteBuffer& buffer,
                                 google::protobuf::MessageLite* header) {
  slices_.clear();
  slice_ = offset_ = 0;
  if (!buffer.Dump(&slices_).ok()) return errors::InvalidArgument("unreadable message");
  remaining_ = 0;
  for (const grpc::Slice& s : slices_) remaining_ += s.size();
  unsigned char size_bytes[4];
  if (remaining_ < 4) {
    return errors::InvalidArgument("message of ", remaining_, " bytes has no header size");
  }
  TW_RETURN_IF_ERROR(Read(size_bytes, 4));
  const size_t header_size = size_bytes[0] | (size_bytes[1] << 8) | (size_bytes[2] << 16) |
                             (static_cast<size_t>(size_bytes[3]) << 24);
  if (header_size > remaining_) {
    return errors::InvalidArgument("message header of ", header_size, " bytes, but only ",
                                   remaining_, " bytes follow");
  }
  // The header is small; a contiguous copy keeps the parser simple.
  std::string bytes(header_size, '\0');
  TW_RETURN_IF_ERROR(Read(bytes.data(), header_size));
  if (!header->ParseFromString(bytes)) {
    return errors::InvalidArgument("message header does not parse as ", header->GetTypeName());
  }
  return OkStatus();
}

Status TensorMessageReader::ReadBytes(void* dst, size_t n) { return Read(dst, n); }

Status TensorMessageReader::Read(void* dst, size_t n) {
  if (n > remaining_) {
    return errors::InvalidArgument("message ends ", n - remaining_, " bytes early");
  }
  auto* out = static_cast<uint8_t*>(dst);
  remaining_ -= n;
  while (n > 0) {
    const grpc::Slice& s = slices_[slice_];
    const size_t take = std::min(n, s.size() - offset_);
    std::memcpy(out, s.begin() + offset_, take);
    out += take;
    n -= take;
    offset_ += take;
    if (offset_ == s.size()) {
      ++slice_;
      offset_ = 0;
    }
  }
  return OkStatus();
}

StatusOr<Tensor> TensorMessageReader::ReadTensor(const proto::TensorProto& meta) {
  return TensorFromMetaProto(meta, remaining_,
                             [this](void* dst, size_t n) { return Read(dst, n); });
}

Status TensorMessageReader::Finish() const {
  if (remaining_ != 0) {
    return errors::InvalidArgument("message has ", remaining_, " bytes after its last tensor");
  }
  return OkStatus();
}

grpc::ByteBuffer EncodeRunStepArgs(const RunStepArgs& args) {
  return EncodeNamed(args.proto, &proto::RunStepRequest::mutable_feed, args.feed);
}
Status DecodeRunStepArgs(const grpc::ByteBuffer& buffer, RunStepArgs* args) {
  return DecodeNamed(buffer, Source::kRequest, &args->proto, &proto::RunStepRequest::mutable_feed,
                     &args->feed);
}
grpc::ByteBuffer EncodeRunStepResult(const RunStepResult& result) {
  return EncodeNamed(proto::RunStepResponse(), &proto::RunStepResponse::mutable_tensor,
                     result.tensor);
}
Status DecodeRunStepResult(const grpc::ByteBuffer& buffer, RunStepResult* result) {
  proto::RunStepResponse header;
  return DecodeNamed(buffer, Source::kReply, &header, &proto::RunStepResponse::mutable_tensor,
                     &result->tensor);
}
grpc::ByteBuffer EncodeRunGraphArgs(const RunGraphArgs& args, const TensorTransport& transport) {
  proto::RunGraphRequest header = args.proto;
  header.set_shared_memory_host(shm::HostIdentity());
  return EncodeNamed(std::move(header), &proto::RunGraphRequest::mutable_send, args.send,
                     ForRequest(transport));
}
Status DecodeRunGraphArgs(const grpc::ByteBuffer& buffer, RunGraphArgs* args,
                          std::vector<ChunkedTensor>* chunks) {
  return DecodeNamed(buffer, Source::kRequest, &args->proto, &proto::RunGraphRequest::mutable_send,
                     &args->send, chunks);
}
grpc::ByteBuffer EncodeRunGraphResult(const RunGraphResult& result,
                                      const TensorTransport& transport) {
  proto::RunGraphResponse header;
  header.set_shared_memory_host(shm::HostIdentity());
  *header.mutable_shared_memory_key() = shm::KeyLocation();
  header.set_chunk_port(static_cast<uint32_t>(transport.chunk_port));
  return EncodeNamed(std::move(header), &proto::RunGraphResponse::mutable_recv, result.recv,
                     transport);
}
Status DecodeRunGraphResult(const grpc::ByteBuffer& buffer, RunGraphResult* result,
                            std::vector<ChunkedTensor>* chunks, std::string* peer_host,
                            proto::SharedMemoryKeyRef* peer_key, int* chunk_port) {
  proto::RunGraphResponse header;
  TW_RETURN_IF_ERROR(DecodeNamed(buffer, Source::kReply, &header,
                                 &proto::RunGraphResponse::mutable_recv, &result->recv, chunks));
  if (peer_host != nullptr) *peer_host = header.shared_memory_host();
  if (peer_key != nullptr) *peer_key = header.shared_memory_key();
  if (chunk_port != nullptr) *chunk_port = static_cast<int>(header.chunk_port() & 0xffff);
  return OkStatus();
}

grpc::ByteBuffer EncodeRecvTensorArgs(const RecvTensorArgs& args,
                                      const TensorTransport& transport) {
  proto::RecvTensorRequest header = args.proto;
  header.set_shared_memory_host(shm::HostIdentity());
  TensorTransport whole = ForRequest(transport);
  whole.chunk_large = false;
  whole.chunked = nullptr;
  return EncodeNamed(std::move(header), &proto::RecvTensorRequest::mutable_push, args.push, whole);
}
Status DecodeRecvTensorArgs(const grpc::ByteBuffer& buffer, RecvTensorArgs* args) {
  return DecodeNamed(buffer, Source::kRequest, &args->proto,
                     &proto::RecvTensorRequest::mutable_push, &args->push);
}
grpc::ByteBuffer EncodeRecvTensorResult(const RecvTensorResult& result, bool shared_memory) {
  proto::RecvTensorResponse header;
  header.set_shared_memory_host(shm::HostIdentity());
  *header.mutable_shared_memory_key() = shm::KeyLocation();
  return EncodeNamed(std::move(header), &proto::RecvTensorResponse::mutable_tensor, result.tensor,
                     {.shared_memory = shared_memory});
}
Status DecodeRecvTensorResult(const grpc::ByteBuffer& buffer, RecvTensorResult* result,
                              std::string* peer_host, proto::SharedMemoryKeyRef* peer_key) {
  proto::RecvTensorResponse header;
  TW_RETURN_IF_ERROR(DecodeNamed(buffer, Source::kReply, &header,
                                 &proto::RecvTensorResponse::mutable_tensor, &result->tensor));
  if (peer_host != nullptr) *peer_host = header.shared_memory_host();
  if (peer_key != nullptr) *peer_key = header.shared_memory_key();
  return OkStatus();
}

grpc::ByteBuffer EncodeProto(const google::protobuf::MessageLite& message) {
  grpc::Slice slice(message.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

Status DecodeProto(const grpc::ByteBuffer& buffer, google::protobuf::MessageLite* message) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return errors::InvalidArgument("unreadable message");
  std::string bytes;
  for (const grpc::Slice& s : slices)
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  if (!message->ParseFromString(bytes)) {
    return errors::InvalidArgument("message does not parse as ", message->GetTypeName());
  }
  return OkStatus();
}

}  // namespace tw
