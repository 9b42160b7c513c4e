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
// Everything read is checked: a corrupt or truncated file is DataLoss naming it, never a
// crash. Not built yet: partitioned variables (entries with slices) are listed with their
// full shape, and reading one is Unimplemented naming it. Thread-safe: pure functions.
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

// A tensor of `dtype` and `shape` from its bytes in a TensorFlow data file, after checking
// them against the entry's masked CRC32C as TensorFlow computes it. DataLoss naming `what`.
StatusOr<Tensor> DecodeTensorFlowBytes(DataType dtype, const TensorShape& shape,
                                       std::string_view bytes, uint32_t masked_crc32c,
                                       const std::string& what);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_TF_BUNDLE_H_
