// The Status for a failed POSIX call on a file: the code from errno, the message naming
// the file. Shared by the layers that write files (checkpoints, summaries). Thread-safe: a
// pure function.
#ifndef TENSORWEAVE_SRC_BASE_ERRNO_STATUS_H_
#define TENSORWEAVE_SRC_BASE_ERRNO_STATUS_H_

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "tensorweave/status.h"

namespace tw {

// "<what> <path>: <strerror>", as NotFound, PermissionDenied, AlreadyExists,
// ResourceExhausted (disk full) or Internal.
inline Status ErrnoStatus(int err, std::string_view what, const std::string& path) {
  const std::string msg = std::string(what) + " " + path + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return errors::NotFound(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return errors::PermissionDenied(msg);
    case EEXIST:
      return errors::AlreadyExists(msg);
    case ENOSPC:
    case EDQUOT:
      return errors::ResourceExhausted(msg);
    default:
      return errors::Internal(msg);
  }
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_BASE_ERRNO_STATUS_H_
