// Fuzzes the ChunkStore (src/rpc/tensor_chunks.h), which holds the chunks of large tensors
// that PutChunk and RecvChunk calls and the chunk sockets deliver from the network: any
// sequence of puts, takes, offers and serves of any TensorChunk headers must give tensors
// or InvalidArgument / Aborted / ResourceExhausted, never a crash, and a tensor taken after
// puts must have the size its header named, with every byte that was put.
//
// Input: records of {op byte, u16 little-endian size, size bytes of a TensorChunk}; op % 4:
// 0 put (its bytes all one value, new for every put and never 0, so that memory the buffer
// pool hands out again cannot pass for them; with op bit 7 the read fails halfway), 1 take
// the (step, key) put, 2 offer a tensor of ((op >> 2) % 4) * 4 MiB + 4 bytes at (step,
// key), 3 serve the chunk.
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
  static uint8_t next_fill = 0;
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
        // At most one chunk's worth is on offer.
        const size_t available = std::min<uint64_t>(chunk.length(), tw::kChunkBytes);
        if (++next_fill == 0) next_fill = 1;
        const uint8_t fill = next_fill;
        const bool fail = (op & 0x80) != 0;
        bool read_failed = false;
        tw::Status s = store.Put(chunk, available, [&](void* dst, size_t n) {
          std::memset(dst, fill, n / 2);
          if (!fail) {
            std::memset(static_cast<char*>(dst) + n / 2, fill, n - n / 2);
            return tw::OkStatus();
          }
          read_failed = true;
          return tw::errors::InvalidArgument("the connection broke mid-chunk");
        });
        if (!Expected(s)) std::abort();
        const auto key = std::make_pair(chunk.step_id(), chunk.key());
        if (s.ok()) {
          if (read_failed) std::abort();
          accepted[key][chunk.offset()] = fill;
        } else if (read_failed) {
          accepted.erase(key);  // a chunk that broke mid-read takes its tensor with it
          if (store.TakePut(key.first, key.second).ok()) std::abort();
        }
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
        // Up to three full chunks and a partial one: serves of several chunks.
        tw::Tensor offered(tw::DT_FLOAT, tw::TensorShape({((op >> 2) % 4) * 1024 * 1024 + 1}));
        std::memset(offered.raw_data(), op, offered.TotalBytes());
        store.Offer(chunk.step_id(), chunk.key(), offered);
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
