#include "src/checkpoint/checkpoint_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "src/base/errno_status.h"
#include "src/base/strings.h"

namespace tw::checkpoint {
namespace {

// ErrnoStatus, but for ELOOP: checkpoint files are opened with O_NOFOLLOW, so a symbolic
// link is refused by design, and the message says so.
Status ErrnoError(int err, std::string_view what, const std::string& path) {
  if (err == ELOOP) {
    return errors::InvalidArgument(std::string(what), " ", path, ": ", std::strerror(err),
                                   " (symbolic links are not followed)");
  }
  return ErrnoStatus(err, what, path);
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open directory", dir);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems cannot sync directories; the rename itself is still atomic there.
  if (rc != 0 && err != EINVAL && err != EROFS) {
    return ErrnoError(err, "cannot sync directory", dir);
  }
  return OkStatus();
}

}  // namespace

namespace {

// "<pid>-<salt>-": what every temporary name this process makes starts with after
// kTempInfix. The salt tells this process from an earlier one with the same pid (a
// restarted container's task often gets the same pid).
std::string ProcessTempTag() {
  static const uint64_t process_salt = std::random_device{}();
  return absl::StrCat(::getpid(), "-", process_salt % 100000, "-");
}

}  // namespace

std::string TempFileName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, std::string(kTempInfix), ProcessTempTag(), counter.fetch_add(1));
}

int RemoveStaleTempFiles(const std::string& dir,
                         const std::function<bool(std::string_view final_name)>& owned) {
  auto names = ListDirectory(dir);
  if (!names.ok()) return 0;
  const std::string own_tag = ProcessTempTag();
  int removed = 0;
  for (const std::string& name : *names) {
    const size_t infix = name.rfind(kTempInfix);
    if (infix == std::string::npos || infix == 0) continue;
    const std::string_view tag = std::string_view(name).substr(infix + kTempInfix.size());
    if (tag.starts_with(own_tag) || !owned(std::string_view(name).substr(0, infix))) continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    // Only regular files: never follow or remove a link or a directory of that name.
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::unlink(path.c_str()) == 0) ++removed;
  }
  return removed;
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const std::string temp = TempFileName(path);
  TW_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, WritableFile::Create(temp));
  Status s = file->Append(contents);
  if (s.ok()) s = file->SyncAndClose();
  if (s.ok()) s = RenameFile(temp, path);
  if (!s.ok()) ::unlink(temp.c_str());
  return s;
}

StatusOr<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, RandomAccessFile::Open(path));
  if (file->size() > max_bytes) {
    return errors::DataLoss("file ", path, " has ", file->size(), " bytes, more than the ",
                            max_bytes, " expected");
  }
  std::string contents(file->size(), '\0');
  TW_RETURN_IF_ERROR(file->Read(0, contents.size(), contents.data()));
  return contents;
}

StatusOr<std::unique_ptr<RandomAccessFile>> RandomAccessFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return ErrnoError(errno, "cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoError(err, "cannot stat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return errors::InvalidArgument(path, " is not a regular file");
  }
  return std::unique_ptr<RandomAccessFile>(
      new RandomAccessFile(path, fd, static_cast<uint64_t>(st.st_size)));
}

RandomAccessFile::~RandomAccessFile() { ::close(fd_); }

Status RandomAccessFile::Read(uint64_t offset, uint64_t n, char* dst) const {
  if (offset > size_ || n > size_ - offset) {
    return errors::DataLoss("file ", path_, " is truncated: ", n, " bytes at offset ", offset,
                            " are past its end (", size_, " bytes)");
  }
  while (n > 0) {
    const ssize_t got = ::pread(fd_, dst, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoError(errno, "cannot read", path_);
    if (got == 0) {
      return errors::DataLoss("file ", path_, " ended early at offset ", offset);
    }
    dst += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<uint64_t>(got);
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<WritableFile>> WritableFile::Create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return ErrnoError(errno, "cannot create", path);
  return std::unique_ptr<WritableFile>(new WritableFile(path, fd));
}

WritableFile::~WritableFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status WritableFile::Append(std::string_view data) {
  if (fd_ < 0) return errors::FailedPrecondition("file ", path_, " is closed");
  const char* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    const ssize_t put = ::write(fd_, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return ErrnoError(errno, "cannot write", path_);
    p += put;
    n -= static_cast<size_t>(put);
    size_ += static_cast<uint64_t>(put);
  }
  return OkStatus();
}

Status WritableFile::SyncAndClose() {
  if (fd_ < 0) return errors::FailedPrecondition("file ", path_, " is closed");
  Status s;
  if (::fsync(fd_) != 0) s = ErrnoError(errno, "cannot sync", path_);
  if (::close(fd_) != 0 && s.ok()) s = ErrnoError(errno, "cannot close", path_);
  fd_ = -1;
  return s;
}

Status RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoError(errno, "cannot rename " + from + " to", to);
  }
  return SyncDirectory(Dirname(to));
}

Status RemoveFileIfExists(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(errno, "cannot remove", path);
  }
  return OkStatus();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

StatusOr<std::vector<std::string>> ListDirectory(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoError(errno, "cannot list directory", dir);
  std::vector<std::string> names;
  while (const struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  return names;
}

StatusOr<std::string> CanonicalDirectory(const std::string& dir) {
  if (dir.empty()) return errors::InvalidArgument("checkpoint directory is empty");
  char resolved[PATH_MAX];
  if (::realpath(dir.c_str(), resolved) == nullptr) {
    return ErrnoError(errno, "cannot resolve checkpoint directory", dir);
  }
  struct stat st;
  if (::stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return errors::InvalidArgument("checkpoint directory ", dir, " is not a directory");
  }
  return std::string(resolved);
}

Status CheckPathUnder(const std::string& dir_as_given, const std::string& path) {
  std::string dir = dir_as_given;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  auto refuse = [&](std::string_view why) {
    return errors::InvalidArgument("checkpoint path \"", path, "\" is refused: ", why,
                                   " (checkpoint directory ", dir, ")");
  };
  auto normal = [](std::string_view p) {
    if (p.empty() || p[0] != '/') return false;
    if (p == "/") return true;
    for (std::string_view segment : Split(p.substr(1), '/')) {
      if (segment == ".." || segment == "." || segment.empty()) return false;
    }
    return true;
  };
  if (!normal(dir)) return refuse("the directory is not an absolute path in normal form");
  if (!normal(path)) {
    return refuse("it is not an absolute path without \".\" and \"..\" segments");
  }
  const std::string root = dir == "/" ? dir : dir + "/";
  if (!path.starts_with(root) || path.size() == root.size()) {
    return refuse("it is not inside the directory");
  }
  // The directory part may go through a symbolic link that leads elsewhere.
  auto canonical = CanonicalDirectory(dir);
  if (!canonical.ok()) return canonical.status();
  const std::string_view real_dir = *canonical;
  const std::string real_root = real_dir == "/" ? std::string(real_dir) : *canonical + "/";
  char resolved[PATH_MAX];
  if (::realpath(Dirname(path).c_str(), resolved) == nullptr) {
    return ErrnoError(errno, "cannot resolve the directory of checkpoint path", path);
  }
  const std::string real_parent = resolved;
  if (real_parent != real_dir && !real_parent.starts_with(real_root)) {
    return refuse("its directory resolves to " + real_parent + ", outside " + *canonical);
  }
  return OkStatus();
}

}  // namespace tw::checkpoint
