// FileAccessPolicy: the directories in which kernels on a device may read and write files
// (today the checkpoint ops of src/ops/io_ops.cc).
//
// Why it exists: a graph comes from whoever can reach the task's port, so a path or a
// directory named by the graph (the checkpoint ops' `directory` attribute) confines nothing.
// The directories are given by whoever starts the task (ServerOptions.allowed_directories,
// `tw server --allowed-dir`) and reach the kernels through their device
// (DeviceBase::file_access()). An in-process session (DirectSession, target "") allows every
// path: its graphs come from its own process, which could open the files itself. So do the
// steps of a session on the task's own server from the task's process (its LocalMaster
// call): their partitions on that task run with an unrestricted policy of the step
// (OpKernelContext::file_access(), RunGraphArgs::from_this_process), which never travels
// over the network, so partitions on other tasks, and every graph a remote client sends,
// keep the directories.
//
// What a check resolves: the path is made absolute (relative paths are taken from the
// working directory), the deepest existing directory on its way is canonicalized with
// realpath(3) (so ".." and symbolic links are followed as the kernel would follow them) and
// the rest appended; that must lie inside one of the allowed directories, themselves
// canonicalized at the time of the check (a directory that does not exist yet allows
// nothing until it does). The last component is not resolved: the checkpoint files are
// opened with O_NOFOLLOW and created with O_EXCL, and renames replace a symbolic link rather
// than follow it.
//
// Time of check and time of use: the directories on the path are resolved again when the
// files are opened. No op can create a symbolic link or a directory, so a remote client
// cannot change them in between; a local user who can write inside an allowed directory
// could (replace a subdirectory with a link after the check). Allowed directories must
// therefore not be writable by users the task's owner does not trust.
//
// Thread-safe: immutable after construction.
#ifndef TENSORWEAVE_SRC_FRAMEWORK_FILE_ACCESS_H_
#define TENSORWEAVE_SRC_FRAMEWORK_FILE_ACCESS_H_

#include <string>
#include <vector>

#include "tensorweave/status.h"

namespace tw {

class FileAccessPolicy {
 public:
  // Allows nothing: every Check is PermissionDenied.
  FileAccessPolicy() = default;
  // Allows every path (in-process sessions).
  static FileAccessPolicy Unrestricted();
  // Allows paths inside `directories` (and the directories' own entries). Each must be
  // non-empty and free of NUL bytes; relative ones are made absolute against the working
  // directory now. They need not exist yet. InvalidArgument naming `field` and the entry.
  static StatusOr<FileAccessPolicy> AllowDirectories(const std::vector<std::string>& directories,
                                                     const std::string& field);

  bool unrestricted() const { return unrestricted_; }
  // The allowed directories as given (absolute); empty when unrestricted or allowing nothing.
  const std::vector<std::string>& directories() const { return directories_; }

  // OK when the file `path` may be read or written. InvalidArgument for an empty path or one
  // with a NUL byte or ending in "."/".."/"/"; PermissionDenied naming `what` (say
  // "checkpoint path"), the path, what it resolves to and the allowed directories otherwise.
  // Reads the file system (realpath), so it may block briefly.
  Status Check(const std::string& path, const std::string& what) const;

  // "a, b" or "none" (for messages and logs).
  std::string DescribeDirectories() const;

 private:
  bool unrestricted_ = false;
  std::vector<std::string> directories_;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_FRAMEWORK_FILE_ACCESS_H_
