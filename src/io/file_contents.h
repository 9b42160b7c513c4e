// The whole contents of a file, decompressed: for the readers and datasets that take a
// file at once (whole files, fixed-length records, text lines). Thread-safe.
#ifndef TENSORWEAVE_SRC_IO_FILE_CONTENTS_H_
#define TENSORWEAVE_SRC_IO_FILE_CONTENTS_H_

#include <string>

#include "src/io/compression.h"
#include "tensorweave/status.h"

namespace tw::io {

// The contents of `path`, the stream decompressed when `compression` says so. Errors from
// errno name the path (src/base/errno_status.h); DataLoss naming it for a corrupt or cut
// short compressed stream.
StatusOr<std::string> ReadFileContents(const std::string& path,
                                       Compression compression = Compression::kNone);

}  // namespace tw::io

#endif  // TENSORWEAVE_SRC_IO_FILE_CONTENTS_H_
