// Saver: sharded checkpoints of variables spread over parameter-server tasks.
//
//   tw::train::SaverOptions options{.checkpoint_dir = "/shared/ckpt", .max_to_keep = 3};
//   auto saver = tw::train::Saver::Create(root, {{"w", w}, {"b", b}}, options);
//   auto prefix = (*saver)->Save(session, step);    // "/shared/ckpt/model.ckpt-<step>"
//   ...
//   auto latest = tw::train::LatestCheckpoint("/shared/ckpt");
//   if (latest.ok()) status = (*saver)->Restore(session, *latest);
//
// Each task that holds variables writes its own data file, in parallel, in one session
// step; then one task writes the index, which is what makes the checkpoint valid (files
// are written under temporary names and renamed, so an interrupted save never leaves a
// checkpoint that looks complete). A checkpoint restores onto a cluster with a different
// number of ps tasks, or variables partitioned differently, as long as names, dtypes and
// full shapes match. The directory must be one file system visible at the same path to
// every task holding variables and to the program calling Save (as in TensorFlow).
// docs/architecture.md ("Checkpoints") describes the files.
#ifndef TENSORWEAVE_TRAIN_SAVER_H_
#define TENSORWEAVE_TRAIN_SAVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensorweave/ops/io_ops.h"
#include "tensorweave/ops/state_ops.h"
#include "tensorweave/scope.h"
#include "tensorweave/session.h"
#include "tensorweave/status.h"

namespace tw::train {

struct SaverOptions {
  // Where checkpoints and the `checkpoint` state file live; created when missing. Every
  // checkpoint path must lie inside it.
  std::string checkpoint_dir;
  // Checkpoints are "<checkpoint_dir>/<basename>-<global_step>"; one path component.
  std::string basename = "model.ckpt";
  // Checkpoints listed in the state file beyond this many are deleted, oldest first.
  // 0 or less keeps them all.
  int max_to_keep = 5;
};

// A variable to save under `name`. With `full_shape` empty the variable is saved whole;
// otherwise it is one part of a variable partitioned along dimension 0: it holds rows
// [row_offset, row_offset + var.shape[0]) of a tensor of shape `full_shape` called `name`,
// and the parts given to one Saver must cover every row exactly once.
struct SaveableVariable {
  std::string name;
  ops::Variable var;
  std::vector<int64_t> full_shape;
  int64_t row_offset = 0;
};

// Builds its ops at Create and runs them in any session over the scope's graph.
// Thread-compatible: Save and Restore of one Saver must not run concurrently.
class Saver {
 public:
  // Adds to `scope`'s graph one SaveVariables and one RestoreVariables op per device that
  // holds variables (the device of each variable's node, as built), and a MergeCheckpoint
  // op on the first of them. InvalidArgument naming the variable: no variables, an empty
  // or repeated name, a dtype that cannot be saved (resource), parts of a partitioned
  // variable that overlap, leave rows uncovered or disagree with its full shape; also bad
  // options (empty directory, a basename with '/'). Errors creating the directory.
  static StatusOr<std::unique_ptr<Saver>> Create(const Scope& scope,
                                                 std::vector<SaveableVariable> vars,
                                                 SaverOptions options);

  // Saves every variable as "<checkpoint_dir>/<basename>-<global_step>" (replacing an
  // existing checkpoint of that step), records it as the latest in the state file and
  // deletes checkpoints beyond max_to_keep. Returns the prefix. Errors from the step
  // (FailedPrecondition for an uninitialized variable, file errors naming the file);
  // InvalidArgument for a negative step.
  StatusOr<std::string> Save(ClientSession& session, int64_t global_step);

  // Assigns every variable its value from the checkpoint `prefix` (absolute, or relative to
  // checkpoint_dir). InvalidArgument for a prefix outside checkpoint_dir; NotFound when the
  // checkpoint or a variable in it is missing; InvalidArgument naming a variable whose
  // dtype or shape differs (and both); DataLoss for corrupted files.
  Status Restore(ClientSession& session, const std::string& prefix);

  // The directory, canonical (absolute, symbolic links resolved).
  const std::string& checkpoint_dir() const { return dir_; }

  // Save and Restore in parts, for callers that run the step in a session of their own
  // (the Python front-end): feed prefix_placeholder() the prefix and run save_op() or
  // restore_op().
  //
  // Save = BeginSave, the step, FinishSave. BeginSave returns the prefix
  // "<checkpoint_dir>/<basename>-<global_step>" ("<checkpoint_dir>/<basename>" without a
  // step; `basename` "" is the options' one) after deleting a checkpoint already there.
  // InvalidArgument for a negative step or a basename that is not one path component.
  StatusOr<std::string> BeginSave(std::optional<int64_t> global_step,
                                  const std::string& basename = "");
  // Records the saved `prefix` as the latest and deletes checkpoints beyond max_to_keep.
  Status FinishSave(const std::string& prefix);
  // Restore's checks: the absolute prefix to feed, as Restore describes its errors.
  StatusOr<std::string> BeginRestore(const std::string& prefix) const;
  Output prefix_placeholder() const { return prefix_; }
  Operation save_op() const { return save_; }
  Operation restore_op() const { return restore_; }

 private:
  Saver(std::string dir, SaverOptions options)
      : dir_(std::move(dir)), options_(std::move(options)) {}
  StatusOr<std::string> ResolvePrefix(const std::string& prefix) const;
  Status UpdateStateAndDeleteOld(const std::string& prefix);

  const std::string dir_;
  const SaverOptions options_;
  Output prefix_;      // a string placeholder fed with the checkpoint prefix
  Operation save_;     // the MergeCheckpoint op (after every SaveVariables)
  Operation restore_;  // a NoOp after every RestoreVariables
};

// The newest checkpoint the directory's state file lists whose index exists (a
// checkpoint whose save did not finish has none), as an absolute prefix. NotFound when
// there is no state file or no such checkpoint; DataLoss for an unreadable state file.
// Paths in the state file outside the directory are skipped.
StatusOr<std::string> LatestCheckpoint(const std::string& checkpoint_dir);

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_SAVER_H_
