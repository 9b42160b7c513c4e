// Block handles of a table in LevelDB's format, checked before LevelDB reads the table.
//
// LevelDB's Table allocates as many bytes as a block handle states before it reads the
// block, and as many as a Snappy block says it expands to before it decompresses it: a
// corrupt or hostile index (a TensorFlow checkpoint's .index file) would make it allocate
// terabytes and abort. CheckTableBlocks reads the footer and the index block as LevelDB's
// table format defines them (leveldb/doc/table_format.md) and refuses the table unless
// every handle (metaindex, index, and each data block the index names) lies inside the
// file before the footer, each block's compression is none or Snappy, and each Snappy
// block is one Snappy accepts (snappy::IsValidCompressedBuffer: checked without
// decompressing). After it passes, LevelDB's own reading (with checksums) is bounded by
// the file's size. Thread-safe: a pure function.
#ifndef TENSORWEAVE_SRC_CHECKPOINT_TABLE_BLOCKS_H_
#define TENSORWEAVE_SRC_CHECKPOINT_TABLE_BLOCKS_H_

#include <string>
#include <string_view>

#include "tensorweave/status.h"

namespace tw::checkpoint {

// OK if every block handle of the table `table` (a whole file) is inside it and every
// block it names is uncompressed or valid Snappy; otherwise DataLoss "<what> is corrupt:"
// naming the block (`what` names the file, e.g. "TensorFlow checkpoint index x.index").
Status CheckTableBlocks(std::string_view table, const std::string& what);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_TABLE_BLOCKS_H_
