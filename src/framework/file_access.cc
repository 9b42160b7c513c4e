#include "src/framework/file_access.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_join.h"
#include "src/base/strings.h"

namespace tw {
namespace {

// `path` made absolute against the working directory, without touching the file system
// beyond getcwd(3).
StatusOr<std::string> Absolute(const std::string& path) {
  if (path.starts_with("/")) return path;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr) {
    return errors::PermissionDenied("cannot make \"", path,
                                    "\" absolute: the working directory is unknown (",
                                    std::strerror(errno), ")");
  }
  const std::string base = cwd;
  return base == "/" ? "/" + path : base + "/" + path;
}

// Whether the canonical path `real` is `dir` or inside it (`dir` canonical too).
bool Inside(const std::string& real, const std::string& dir) {
  if (dir == "/") return true;
  return real == dir ||
         (real.size() > dir.size() && real.starts_with(dir) && real[dir.size()] == '/');
}

// The canonical directory that will hold the file `absolute`: the deepest existing
// directory on the way resolved by realpath(3), then the components that do not exist yet.
// Empty (with `why` set) when that cannot be known.
std::string ResolveParent(const std::string& absolute, std::string* why) {
  std::vector<std::string> parts;
  for (std::string_view p : Split(std::string_view(absolute).substr(1), '/')) {
    if (!p.empty() && p != ".") parts.emplace_back(p);
  }
  if (!parts.empty()) parts.pop_back();  // the file's own name, checked by the caller
  for (size_t k = parts.size();; --k) {
    const std::string dir = "/" + absl::StrJoin(parts.begin(), parts.begin() + k, "/");
    char resolved[PATH_MAX];
    if (::realpath(dir.c_str(), resolved) != nullptr) {
      std::string out = resolved;
      for (size_t i = k; i < parts.size(); ++i) {
        // Past a directory that does not exist, ".." cannot be resolved as the kernel would.
        if (parts[i] == "..") {
          *why = (dir == "/" ? "" : dir) + "/" + parts[k] +
                 " does not exist, so a \"..\" after it cannot be resolved";
          return "";
        }
        out += (out == "/" ? "" : "/") + parts[i];
      }
      return out;
    }
    if (errno != ENOENT || k == 0) {
      *why = "cannot resolve " + dir + ": " + std::strerror(errno);
      return "";
    }
  }
}

}  // namespace

FileAccessPolicy FileAccessPolicy::Unrestricted() {
  FileAccessPolicy policy;
  policy.unrestricted_ = true;
  return policy;
}

StatusOr<FileAccessPolicy> FileAccessPolicy::AllowDirectories(
    const std::vector<std::string>& directories, const std::string& field) {
  FileAccessPolicy policy;
  for (const std::string& dir : directories) {
    if (dir.empty() || dir.find('\0') != std::string::npos) {
      return errors::InvalidArgument(field, ": \"", dir,
                                     "\" is not a directory name (empty, or with a NUL byte)");
    }
    auto absolute = Absolute(dir);
    if (!absolute.ok()) return errors::InvalidArgument(field, ": ", absolute.status().message());
    policy.directories_.push_back(*std::move(absolute));
  }
  return policy;
}

std::string FileAccessPolicy::DescribeDirectories() const {
  if (unrestricted_) return "every directory";
  if (directories_.empty()) return "none";
  return absl::StrJoin(directories_, ", ");
}

Status FileAccessPolicy::Check(const std::string& path, const std::string& what) const {
  if (path.empty() || path.find('\0') != std::string::npos) {
    return errors::InvalidArgument(what, " \"", path, "\" is empty or has a NUL byte");
  }
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    return errors::InvalidArgument(what, " \"", path, "\" does not name a file");
  }
  if (unrestricted_) return OkStatus();
  auto denied = [&](const std::string& detail) {
    return errors::PermissionDenied(
        what, " \"", path, "\" is outside the directories this task may read and write (", detail,
        "); allowed: ", DescribeDirectories(),
        ". Whoever starts the task chooses them: ServerOptions.allowed_directories, "
        "tw server --allowed-dir");
  };
  TW_ASSIGN_OR_RETURN(std::string absolute, Absolute(path));
  std::string why;
  const std::string parent = ResolveParent(absolute, &why);
  if (parent.empty()) return denied(why);
  for (const std::string& dir : directories_) {
    char resolved[PATH_MAX];
    if (::realpath(dir.c_str(), resolved) == nullptr) continue;  // allows nothing until it exists
    if (Inside(parent, resolved)) return OkStatus();
  }
  return denied("its directory is " + parent);
}

}  // namespace tw
