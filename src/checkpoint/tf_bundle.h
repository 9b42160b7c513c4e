// TensorFlow's own checkpoints (the V2 "tensor bundle" format), read: a checkpoint that
// TensorFlow saved restores here, and tf.train.list_variables and load_variable read it.
//
// <prefix>.index is a table in LevelDB's format (read with Debian's libleveldb, whose
// table reader is the format TensorFlow's table code writes): the key "" holds a
// BundleHeaderProto (shards, endianness, versions), every other key a tensor's name and
// its BundleEntryProto (dtype, shape, shard, offset, size, masked CRC32C;
// proto/tensorweave/protobuf/tensor_bundle.proto, TensorFlow's field numbers).
// <prefix>.data-NNNNN-of-NNNNN hold the bytes: numbers as in memory (little-endian);
// strings as every element's varint64 length, the masked CRC32C of those lengths (taken
// as uint32 each, 4 bytes), then every element's bytes, the entry's CRC covering the
// lengths (as uint32), that 4-byte checksum and the bytes, as TensorFlow computes it.
//
// A partitioned variable's entry has no bytes of its own: it lists its slices
// (TensorSliceProto), and each slice is an entry of its own under a key made of the name
// and the slice (ordered_code.h: EncodeSliceKey). tensorweave partitions variables by rows,
// so it reads slices along dimension 0 (any partitioning: restoring onto another one reads
// the rows it needs) and refuses others as Unimplemented naming the variable.
//
// Written too (WriteTensorFlowIndex): the index as TensorFlow's BundleWriter writes it
// (LevelDB's table format with TensorFlow's table options: no compression, 256 KiB blocks,
// a restart point every 16 keys), over data files whose bytes are TensorFlow's.
//
// Everything read is checked: a corrupt or truncated file is DataLoss naming it, never a
// crash. Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_CHECKPOINT_TF_BUNDLE_H_
#define TENSORWEAVE_SRC_CHECKPOINT_TF_BUNDLE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tensorweave/protobuf/checkpoint.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::checkpoint {

// Whether `index_bytes` (a whole .index file) ends with the magic number of LevelDB's table
// format: a TensorFlow checkpoint's index rather than tensorweave's.
bool IsTensorFlowIndex(std::string_view index_bytes);

// The index of TensorFlow checkpoint `prefix` (its index file: `index_file`, whose whole
// contents are `index_bytes`; CheckTableBlocks checks them before LevelDB reads them) as a
// CheckpointIndex with tensorflow_bundle set: one entry per tensor, all of its rows, in
// TensorFlow's names; a partitioned variable's entry has shard -1 (not readable yet).
// DataLoss for an unreadable table, header or entry; Unimplemented for a big-endian
// checkpoint or one whose versions this reader does not accept (TensorFlow's rules).
StatusOr<proto::CheckpointIndex> ReadTensorFlowIndex(const std::string& prefix,
                                                     const std::string& index_file,
                                                     std::string_view index_bytes);

// Writes `index_file` for the merged index `index` of a checkpoint whose data files hold
// TensorFlow's bytes (ShardWriter with tensorflow_format): the header, then an entry per
// tensor; a tensor saved in row slices becomes a partitioned entry listing its slices and
// an entry per slice under its slice key. Atomic (WriteFileAtomically).
Status WriteTensorFlowIndex(const std::string& index_file, const proto::CheckpointIndex& index);

// A tensor's bytes as TensorFlow writes them in a data file (numbers as in memory; strings
// as above), and the masked CRC32C TensorFlow's entry holds for them.
struct TensorFlowBytes {
  std::string bytes;
  uint32_t masked_crc32c = 0;
};
TensorFlowBytes EncodeTensorFlowBytes(const Tensor& tensor);

// A tensor of `dtype` and `shape` from its bytes in a TensorFlow data file, after checking
// them against the entry's masked CRC32C as TensorFlow computes it. DataLoss naming `what`.
StatusOr<Tensor> DecodeTensorFlowBytes(DataType dtype, const TensorShape& shape,
                                       std::string_view bytes, uint32_t masked_crc32c,
                                       const std::string& what);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_TF_BUNDLE_H_
