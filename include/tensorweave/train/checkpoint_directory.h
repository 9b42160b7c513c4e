// CheckpointDirectory: the bookkeeping of one directory of checkpoints, as TF 1.x's Saver
// keeps it: the names of new checkpoints, the `checkpoint` state file that lists them, and
// max_to_keep. It touches only this process's files; the Saver (saver.h) fills the
// checkpoints it names.
//
//   auto dir = tw::train::CheckpointDirectory::Create("/ckpt", {.max_to_keep = 3});
//   auto prefix = (*dir)->BeginSave(100);        // "/ckpt/model.ckpt-100", old files gone
//   ... write the checkpoint's files at *prefix ...
//   status = (*dir)->FinishSave(*prefix);        // now the latest; the oldest beyond 3 go
#ifndef TENSORWEAVE_TRAIN_CHECKPOINT_DIRECTORY_H_
#define TENSORWEAVE_TRAIN_CHECKPOINT_DIRECTORY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tensorweave/status.h"

namespace tw::train {

struct CheckpointDirectoryOptions {
  // Checkpoints are "<dir>/<basename>-<global_step>"; one path component.
  std::string basename = "model.ckpt";
  // Checkpoints listed in the state file beyond this many are deleted, oldest first.
  // 0 or less keeps them all.
  int max_to_keep = 5;
};

// Thread-compatible: one save at a time per directory (Saver serializes its own).
class CheckpointDirectory {
 public:
  // Creates `dir` when missing. InvalidArgument for an empty directory or a basename that
  // is not one path component; Internal naming the directory when it cannot be created.
  static StatusOr<std::unique_ptr<CheckpointDirectory>> Create(
      const std::string& dir, CheckpointDirectoryOptions options = {});

  // The prefix "<dir>/<basename>-<global_step>" ("<dir>/<basename>" without a step;
  // `basename` "" is the options' one), after deleting a checkpoint already there (so a
  // save that fails halfway leaves no index over a mix of old and new data files).
  // InvalidArgument for a negative step or a basename that is not one path component.
  StatusOr<std::string> BeginSave(std::optional<int64_t> global_step,
                                  const std::string& basename = "");
  // Records the saved `prefix` as the latest in the state file and deletes checkpoints
  // beyond max_to_keep. InvalidArgument when `prefix` is not a checkpoint of this directory.
  Status FinishSave(const std::string& prefix);
  // The absolute prefix of the checkpoint `prefix` (absolute, or relative to the
  // directory). InvalidArgument for a prefix outside the directory (also through ".." or a
  // symbolic link); NotFound when the checkpoint has no index.
  StatusOr<std::string> BeginRestore(const std::string& prefix) const;

  // The directory, canonical (absolute, symbolic links resolved).
  const std::string& dir() const { return dir_; }

 private:
  CheckpointDirectory(std::string dir, CheckpointDirectoryOptions options)
      : dir_(std::move(dir)), options_(std::move(options)) {}
  Status UpdateStateAndDeleteOld(const std::string& name);

  const std::string dir_;
  const CheckpointDirectoryOptions options_;
};

// The newest checkpoint the directory's state file lists whose index exists (a
// checkpoint whose save did not finish has none), as an absolute prefix. NotFound when
// there is no state file or no such checkpoint; DataLoss for an unreadable state file.
// Paths in the state file outside the directory are skipped.
StatusOr<std::string> LatestCheckpoint(const std::string& checkpoint_dir);

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_CHECKPOINT_DIRECTORY_H_
