// Large tensors of RunGraph calls travel in chunks, several in flight at once on the call's
// channel, instead of inside the RunGraph messages. A whole-message transfer is serial: the
// receiver starts copying only once the last byte has arrived. With chunks it copies one
// while the next arrives, which is what lifts loopback transfers above ~3 GB/s here
// (shared reference: performance.md).
//
// Push: the caller puts every chunk of a large feed (PutChunk) and then sends RunGraph,
// whose request marks the feed chunked; the server assembles the chunks in a ChunkStore and
// RunGraph takes the tensor from it. Pull: the server leaves a large fetch in its ChunkStore
// and marks it chunked in the RunGraph reply; the caller fetches the chunks (RecvChunk)
// straight into the destination tensor.
#ifndef TENSORWEAVE_SRC_RPC_TENSOR_CHUNKS_H_
#define TENSORWEAVE_SRC_RPC_TENSOR_CHUNKS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/core/tensor_coding.h"
#include "tensorweave/protobuf/worker.pb.h"
#include "tensorweave/tensor.h"

namespace tw {

constexpr size_t kChunkBytes = size_t{4} << 20;

// Chunks travel on connections of their own, this many to each peer task, taking turns
// (ChunkTransfer): gRPC reads and parses one connection on one thread at a time, so a
// second connection lets the receiver read one chunk while it copies another. Opened at the
// first chunked transfer. Two (one per core here) took 64 MB pulls over TCP from 0.55-0.6x
// to 0.8-0.9x of iperf3's one stream, pushes from 0.5x to 0.65-0.7x; four did no better
// (docs/performance.md, "Between hosts").
constexpr int kChunkConnections = 2;

// The chunks of a tensor of `bytes` bytes: (offset, length) pairs.
std::vector<std::pair<size_t, size_t>> ChunksOf(size_t bytes);

// A server's chunked tensors in flight. Thread-safe. Entries nobody claims (the other side
// failed mid-transfer) are dropped after `expiry`.
class ChunkStore {
 public:
  explicit ChunkStore(absl::Duration expiry = absl::Seconds(60)) : expiry_(expiry) {}

  // Writes a pushed chunk: `read(dst, n)` copies its bytes. The tensor is created from
  // `chunk.meta` by its first chunk. InvalidArgument for a chunk that is not one of the
  // tensor's (see ChunksOf), arrives twice, or disagrees with earlier chunks on the meta.
  Status Put(const proto::TensorChunk& chunk, size_t available, ContentReader read);
  // The pushed tensor of (step, key), once every chunk has arrived; removes it.
  // InvalidArgument when it is missing or incomplete.
  StatusOr<Tensor> TakePut(int64_t step, const std::string& key);

  // Leaves a fetched tensor for RecvChunk.
  void Offer(int64_t step, const std::string& key, Tensor tensor);
  // The offered tensor a RecvChunk reads [offset, offset + length) of; the entry goes once
  // all of its bytes have been served. InvalidArgument for an unknown key or a bad range.
  StatusOr<Tensor> Serve(const proto::TensorChunk& chunk);

  size_t size() const;

 private:
  struct Entry {
    Tensor tensor;
    std::vector<bool> done;  // per chunk: received (pushes) or served (fetches)
    size_t remaining = 0;    // chunks not yet received or served
    absl::Time created;
    uint64_t generation = 0;  // tells a put's entry from a later one of the same key
  };
  using Key = std::pair<int64_t, std::string>;
  void ExpireLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Duration expiry_;
  mutable absl::Mutex mu_;
  std::map<Key, Entry> puts_ ABSL_GUARDED_BY(mu_);
  std::map<Key, Entry> offers_ ABSL_GUARDED_BY(mu_);
  uint64_t generations_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_TENSOR_CHUNKS_H_
