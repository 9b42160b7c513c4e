#include "src/io/file_contents.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "src/base/errno_status.h"

namespace tw::io {

StatusOr<std::string> ReadFileContents(const std::string& file, Compression compression) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", file);
  std::string raw;
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "cannot read", file);
    }
    if (n == 0) break;
    raw.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  if (compression == Compression::kNone) return raw;
  TW_ASSIGN_OR_RETURN(auto inflater, Inflater::Create(compression));
  std::string out;
  std::string_view in(raw);
  while (!inflater->finished()) {
    const size_t before = out.size();
    out.resize(before + (1 << 20));
    auto got = inflater->Decompress(&in, out.data() + before, 1 << 20);
    if (!got.ok()) return errors::DataLoss(file, ": ", got.status().message());
    out.resize(before + *got);
    if (*got == 0 && in.empty() && !inflater->finished()) {
      return errors::DataLoss(file, ": the ", CompressionName(compression),
                              " stream ends early (the file was cut short)");
    }
  }
  return out;
}

}  // namespace tw::io
