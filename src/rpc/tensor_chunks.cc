#include "src/rpc/tensor_chunks.h"

namespace tw {
namespace {

// The index of the chunk at `offset` of `length` bytes in a tensor of `bytes`, or -1.
int ChunkIndex(size_t bytes, uint64_t offset, uint64_t length) {
  if (offset % kChunkBytes != 0 || offset >= bytes) return -1;
  const size_t expected = std::min(kChunkBytes, bytes - offset);
  return length == expected ? static_cast<int>(offset / kChunkBytes) : -1;
}

}  // namespace

std::vector<std::pair<size_t, size_t>> ChunksOf(size_t bytes) {
  std::vector<std::pair<size_t, size_t>> chunks;
  for (size_t offset = 0; offset < bytes; offset += kChunkBytes) {
    chunks.emplace_back(offset, std::min(kChunkBytes, bytes - offset));
  }
  return chunks;
}

void ChunkStore::ExpireLocked() {
  const absl::Time cutoff = absl::Now() - expiry_;
  for (auto* map : {&puts_, &offers_}) {
    for (auto it = map->begin(); it != map->end();) {
      it = it->second.created < cutoff ? map->erase(it) : std::next(it);
    }
  }
}

Status ChunkStore::Put(const proto::TensorChunk& chunk, size_t available, ContentReader read) {
  const Key key{chunk.step_id(), chunk.key()};
  Tensor tensor;
  int index = -1;
  uint64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    ExpireLocked();
    auto it = puts_.find(key);
    bool created = false;
    if (it == puts_.end()) {
      // Allocates from the metadata; the bytes come chunk by chunk below.
      TW_ASSIGN_OR_RETURN(Tensor fresh, AllocateFromMetaProto(chunk.meta()));
      if (fresh.TotalBytes() == 0) {
        return errors::InvalidArgument("chunk of ", chunk.key(), ": its tensor has no payload");
      }
      Entry entry;
      entry.tensor = std::move(fresh);
      entry.remaining = ChunksOf(entry.tensor.TotalBytes()).size();
      entry.done.assign(entry.remaining, false);
      entry.created = absl::Now();
      entry.generation = ++generations_;
      it = puts_.emplace(key, std::move(entry)).first;
      created = true;
    } else if (static_cast<int>(chunk.meta().dtype()) != it->second.tensor.dtype()) {
      return errors::InvalidArgument("chunk of ", chunk.key(), " disagrees on the dtype");
    }
    Entry& entry = it->second;
    index = ChunkIndex(entry.tensor.TotalBytes(), chunk.offset(), chunk.length());
    Status refused;
    if (index < 0 || entry.done[index]) {
      refused = errors::InvalidArgument("chunk of ", chunk.key(), " at ", chunk.offset(), " of ",
                                        chunk.length(), " bytes is not an expected chunk of its ",
                                        entry.tensor.TotalBytes(), "-byte tensor");
    } else if (chunk.length() > available) {
      refused = errors::InvalidArgument("chunk of ", chunk.key(), " carries ", available,
                                        " bytes, not ", chunk.length());
    }
    if (!refused.ok()) {
      if (created) puts_.erase(it);  // a refused first chunk keeps no tensor
      return refused;
    }
    entry.done[index] = true;
    generation = entry.generation;
    tensor = entry.tensor;  // shares the buffer; chunks write disjoint ranges
  }
  // Copied outside the lock, so chunks of one tensor land in parallel.
  Status s = read(static_cast<char*>(tensor.raw_data()) + chunk.offset(), chunk.length());
  absl::MutexLock lock(&mu_);
  auto it = puts_.find(key);
  // Another entry of the same key (this one expired or failed, and the key was put again)
  // has not received these bytes.
  if (it == puts_.end() || it->second.generation != generation) {
    return errors::Aborted("chunk of ", chunk.key(), " expired");
  }
  if (!s.ok()) {
    puts_.erase(it);
    return s;
  }
  --it->second.remaining;
  return OkStatus();
}

StatusOr<Tensor> ChunkStore::TakePut(int64_t step, const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = puts_.find({step, key});
  if (it == puts_.end()) {
    return errors::InvalidArgument("no chunks of ", key, " arrived for step ", step);
  }
  if (it->second.remaining > 0) {
    return errors::InvalidArgument(it->second.remaining, " chunks of ", key, " are missing");
  }
  Tensor tensor = std::move(it->second.tensor);
  puts_.erase(it);
  return tensor;
}

void ChunkStore::Offer(int64_t step, const std::string& key, Tensor tensor) {
  absl::MutexLock lock(&mu_);
  ExpireLocked();
  Entry entry;
  entry.remaining = ChunksOf(tensor.TotalBytes()).size();
  entry.done.assign(entry.remaining, false);
  entry.tensor = std::move(tensor);
  entry.created = absl::Now();
  offers_[{step, key}] = std::move(entry);
}

StatusOr<Tensor> ChunkStore::Serve(const proto::TensorChunk& chunk) {
  absl::MutexLock lock(&mu_);
  auto it = offers_.find({chunk.step_id(), chunk.key()});
  if (it == offers_.end()) {
    return errors::InvalidArgument("no tensor ", chunk.key(), " of step ", chunk.step_id(),
                                   " waits to be fetched");
  }
  Entry& entry = it->second;
  const int index = ChunkIndex(entry.tensor.TotalBytes(), chunk.offset(), chunk.length());
  if (index < 0 || entry.done[index]) {
    return errors::InvalidArgument("chunk of ", chunk.key(), " at ", chunk.offset(), " of ",
                                   chunk.length(), " bytes is not an expected chunk");
  }
  entry.done[index] = true;
  Tensor tensor = entry.tensor;
  if (--entry.remaining == 0) offers_.erase(it);
  return tensor;
}

size_t ChunkStore::size() const {
  absl::MutexLock lock(&mu_);
  return puts_.size() + offers_.size();
}

}  // namespace tw
