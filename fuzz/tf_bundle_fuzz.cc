// Fuzzes the reader of TensorFlow checkpoints (src/checkpoint/tf_bundle.h) with any bytes as
// the index and data files: input = [4-byte little-endian index length][index][data]. The
// reader must answer with a status (DataLoss, Unimplemented, ...) or tensors, and never
// crash, hang or read outside what it was given.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "src/checkpoint/checkpoint_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t index_size = 0;
  std::memcpy(&index_size, data, 4);
  index_size = static_cast<uint32_t>(std::min<size_t>(index_size, size - 4));
  static const std::string prefix = "/tmp/tw_tf_bundle_fuzz_" + std::to_string(getpid());
  {
    std::ofstream(prefix + ".index", std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data) + 4, index_size);
    std::ofstream(prefix + ".data-00000-of-00001", std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data) + 4 + index_size,
               static_cast<std::streamsize>(size - 4 - index_size));
  }
  auto reader = tw::checkpoint::CheckpointReader::Open(prefix);
  if (!reader.ok()) return 0;
  for (const std::string& name : (*reader)->Names()) {
    auto info = (*reader)->Find(name);
    if (!info.ok()) continue;
    const int64_t rows = info->full_shape.rank() == 0 ? 1 : info->full_shape.dim(0);
    if (info->full_shape.num_elements() > (1 << 20)) continue;  // bounded memory
    (void)(*reader)->ReadRows(name, 0, rows);
  }
  return 0;
}
