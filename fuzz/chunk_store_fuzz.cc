// Fuzzes the ChunkStore (src/rpc/tensor_chunks.h), which holds the chunks of large tensors
// that PutChunk and RecvChunk calls and the chunk sockets deliver from the network: any
// sequence of puts, takes, offers and serves of any TensorChunk headers must give tensors
// or InvalidArgument / Aborted / ResourceExhausted, never a crash, and a tensor taken after
// puts must have the size its header named, with every byte that was put.
//
// Input: records of {op byte, u16 little-endian size, size bytes of a TensorChunk}; op % 4:
// 0 put (bytes of value `op`), 1 take the (step, key) put, 2 offer a small tensor at
// (step, key), 3 serve the chunk.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "src/rpc/tensor_chunks.h"

namespace {

bool Expected(const tw::Status& s) {
  return s.ok() || tw::IsInvalidArgument(s) || tw::IsAborted(s) || absl::IsResourceExhausted(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tw::ChunkStore store;
  // What was put and accepted: per (step, key), the fill byte of each chunk by its offset.
  std::map<std::pair<int64_t, std::string>, std::map<uint64_t, uint8_t>> accepted;
  size_t at = 0;
  while (at + 3 <= size) {
    const uint8_t op = data[at];
    const size_t length = data[at + 1] | (size_t{data[at + 2]} << 8);
    at += 3;
    if (at + length > size) break;
    tw::proto::TensorChunk chunk;
    const bool parsed = chunk.ParseFromArray(data + at, static_cast<int>(length));
    at += length;
    if (!parsed) continue;
    switch (op % 4) {
      case 0: {
        // A chunk's bytes are all `op`; at most one chunk's worth is on offer.
        const size_t available = std::min<uint64_t>(chunk.length(), tw::kChunkBytes);
        tw::Status s = store.Put(chunk, available, [op](void* dst, size_t n) {
          std::memset(dst, op, n);
          return tw::OkStatus();
        });
        if (!Expected(s)) std::abort();
        if (s.ok()) accepted[{chunk.step_id(), chunk.key()}][chunk.offset()] = op;
        break;
      }
      case 1: {
        auto taken = store.TakePut(chunk.step_id(), chunk.key());
        if (!Expected(taken.status())) std::abort();
        if (!taken.ok()) break;
        // Complete: every chunk of the tensor was accepted, and holds what was put.
        auto it = accepted.find({chunk.step_id(), chunk.key()});
        if (it == accepted.end()) std::abort();
        const char* bytes = static_cast<const char*>(taken->raw_data());
        for (const auto& [offset, bytes_in_chunk] : tw::ChunksOf(taken->TotalBytes())) {
          auto fill = it->second.find(offset);
          if (fill == it->second.end()) std::abort();
          for (size_t i = 0; i < bytes_in_chunk; ++i) {
            if (static_cast<uint8_t>(bytes[offset + i]) != fill->second) std::abort();
          }
        }
        accepted.erase(it);
        break;
      }
      case 2: {
        tw::Tensor small(tw::DT_FLOAT, tw::TensorShape({(op >> 2) + 1}));
        std::memset(small.raw_data(), op, small.TotalBytes());
        store.Offer(chunk.step_id(), chunk.key(), small);
        break;
      }
      case 3: {
        auto served = store.Serve(chunk);
        if (!Expected(served.status())) std::abort();
        // What a RecvChunk or a chunk socket then sends: inside the tensor.
        if (served.ok() && chunk.offset() + chunk.length() > served->TotalBytes()) std::abort();
        break;
      }
    }
  }
  return 0;
}
