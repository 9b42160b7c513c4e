// File helpers for checkpoints: whole-file reads, atomic writes (temporary name, fsync,
// rename), and the check that keeps every checkpoint path inside its directory.
//
// Errors name the file. POSIX only. Thread-safe: no shared state (temporary names are
// unique per process and call).
#ifndef TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_FILE_H_
#define TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_FILE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/status.h"

namespace tw::checkpoint {

// Marks temporary files: "<final name>.tmp-<unique>". Readers never open such names, so
// a save interrupted at any point leaves nothing that looks like a checkpoint.
inline constexpr std::string_view kTempInfix = ".tmp-";

// A unique temporary name for `path` in the same directory:
// "<path>.tmp-<pid>-<process salt>-<counter>".
std::string TempFileName(const std::string& path);

// Removes from `dir` the temporary files (TempFileName) of the final names `owned` accepts
// that were made by another process: what a save killed midway left behind, which no later
// save would otherwise ever remove. This process's own temporary files, which may belong
// to a write in progress, are kept. Callers pass only final names that no other live
// process writes (the files of the caller's own shard), so that a concurrent save's
// files are never taken. Best effort: an entry that cannot be removed is skipped, since
// the save itself does not depend on it. Returns the number of files removed.
int RemoveStaleTempFiles(const std::string& dir,
                         const std::function<bool(std::string_view final_name)>& owned);

// Writes `contents` to a temporary name, fsyncs it, renames it to `path` and fsyncs the
// directory: readers see the old file or the whole new one. Internal/PermissionDenied/
// NotFound (from errno) naming the file.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// The whole file. NotFound when it does not exist; DataLoss when it is larger than
// `max_bytes`; a symbolic link is refused (InvalidArgument).
StatusOr<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes);

// A file opened for reading at offsets. Not thread-safe. Refuses symbolic links.
class RandomAccessFile {
 public:
  static StatusOr<std::unique_ptr<RandomAccessFile>> Open(const std::string& path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Reads exactly n bytes at `offset` into dst; DataLoss naming the file when it ends early.
  Status Read(uint64_t offset, uint64_t n, char* dst) const;

 private:
  RandomAccessFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_;
  uint64_t size_;
};

// Appends to a new file (created exclusively, never following a link). Not thread-safe.
// The destructor closes the file; it does not remove it.
class WritableFile {
 public:
  static StatusOr<std::unique_ptr<WritableFile>> Create(const std::string& path);
  ~WritableFile();
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  Status Append(std::string_view data);
  // Flushes to disk (fsync) and closes.
  Status SyncAndClose();
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  WritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
  uint64_t size_ = 0;
};

// rename(2) then fsync of the directory.
Status RenameFile(const std::string& from, const std::string& to);
// Removes a file; OK when it does not exist.
Status RemoveFileIfExists(const std::string& path);
bool FileExists(const std::string& path);
// The names (not paths) of the directory's entries; NotFound when it does not exist.
StatusOr<std::vector<std::string>> ListDirectory(const std::string& dir);

// The canonical absolute path of an existing directory (symbolic links resolved).
// NotFound / InvalidArgument (not a directory) naming it.
StatusOr<std::string> CanonicalDirectory(const std::string& dir);

// Checks that `path` names a file inside the existing directory `dir`: both absolute,
// neither with "." or ".." segments, `path` under `dir` by name, and the directory holding
// `path`, with symbolic links resolved, under `dir` with symbolic links resolved.
// InvalidArgument naming the path and the directory otherwise.
Status CheckPathUnder(const std::string& dir, const std::string& path);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_FILE_H_
