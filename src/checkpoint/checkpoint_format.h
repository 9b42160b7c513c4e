// The checkpoint format: file names, the framed and checksummed index, and the byte
// encoding of saved tensors. docs/architecture.md ("Checkpoints") describes the layout.
//
// A checkpoint with prefix P (say /ckpt/model.ckpt-100) is
//   P.data-00000-of-00002, P.data-00001-of-00002   tensor bytes, one file per shard
//   P.index                                        every saved tensor: where and its CRC
// and it is valid exactly when P.index exists (it is renamed into place last). While
// saving, each shard also writes P.index-0000i-of-0000n, its own part of the index, which
// MergeShardIndexes combines into P.index and removes.
//
// Everything read here comes from a file and is checked: corruption is DataLoss naming the
// file (and the tensor), never a crash. Little-endian hosts only (checked at compile time).
// Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_FORMAT_H_
#define TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tensorweave/protobuf/checkpoint.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::checkpoint {

// At most this many shards (file names carry five digits).
inline constexpr int kMaxShards = 99999;
// An index larger than this is refused as corrupt before it is read.
inline constexpr uint64_t kMaxIndexBytes = uint64_t{1} << 30;

std::string IndexFileName(const std::string& prefix);  // P.index
std::string DataFileName(const std::string& prefix, int shard, int num_shards);
std::string ShardIndexFileName(const std::string& prefix, int shard, int num_shards);

// The index file: "TWCKIDX1", the payload length (8 bytes), the serialized
// proto::CheckpointIndex, and the masked CRC32C (4 bytes) of everything before it.
std::string EncodeIndexFile(const proto::CheckpointIndex& index);
// Parses and validates an index read from `file` (named in errors): the framing, the
// checksum, and every entry (see ValidateIndex). DataLoss on any problem.
StatusOr<proto::CheckpointIndex> DecodeIndexFile(std::string_view bytes, const std::string& file);

// Checks an index's fields: num_shards in [1, kMaxShards], one size per shard (or one for
// a shard's own index), names non-empty, dtypes storable, shapes non-negative without
// overflow, row ranges inside the shape, offset + length inside the shard's file, and for
// numeric dtypes a length equal to the slice's bytes. With `merged`, also that the slices
// of each name agree on dtype and shape and cover its rows exactly once. DataLoss naming
// `file` and the entry.
Status ValidateIndex(const proto::CheckpointIndex& index, const std::string& file, bool merged);

// Rows of a shape: dimension 0, or 1 for a scalar. Elements per row: the rest.
int64_t NumRows(const TensorShape& full_shape);
int64_t RowElements(const TensorShape& full_shape);

// True for the dtypes a checkpoint can hold (all but resource and invalid).
bool IsSavableDataType(DataType dtype);

// A tensor's bytes in a data file: numeric and bool elements as in memory (little-endian),
// strings each as a varint32 length and the bytes.
std::string EncodeTensorBytes(const Tensor& tensor);
// The inverse, into a new tensor of `dtype` and `shape`. DataLoss naming `what` when the
// byte count is wrong, a length runs past the end or a bool is not 0 or 1.
StatusOr<Tensor> DecodeTensorBytes(DataType dtype, const TensorShape& shape, std::string_view bytes,
                                   const std::string& what);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_FORMAT_H_
