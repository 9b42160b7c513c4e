// Saver: checkpoints of variables spread over parameter-server tasks, written and read by
// the process that saves and restores.
//
//   tw::train::SaverOptions options{.checkpoint_dir = "/ckpt", .max_to_keep = 3};
//   auto saver = tw::train::Saver::Create(root, {{"w", w}, {"b", b}}, options);
//   auto prefix = (*saver)->Save(session, step);    // "/ckpt/model.ckpt-<step>"
//   ...
//   auto latest = tw::train::LatestCheckpoint("/ckpt");
//   if (latest.ok()) status = (*saver)->Restore(session, *latest);
//
// Where the files go. By default a save fetches every variable's value in one session step
// (values travel from the ps tasks as any fetched tensor does) and this process writes the
// files; a restore reads them here and feeds the values to one step of Assigns on the
// variables' tasks. So no ps task needs the checkpoint directory, a shared file system or
// allowed directories (on Kubernetes only the chief's pod mounts a volume), and a graph
// sent over the network never touches a file. With `write_on_variable_tasks`, each task
// holding variables writes its own shard in parallel and reads its own slices, as TF 1.x's
// sharded saves do: then the directory must be one file system at the same path for every
// such task and this process, inside each task's allowed directories (docs/security.md).
//
// Either way the files are the same: one data file per device holding variables, written
// under temporary names and renamed, then the index, which makes the checkpoint valid (an
// interrupted save never looks complete). A checkpoint restores onto a cluster with another
// number of ps tasks, or variables partitioned differently, as long as names, dtypes and
// full shapes match. docs/architecture.md ("Checkpoints") describes the files.
#ifndef TENSORWEAVE_TRAIN_SAVER_H_
#define TENSORWEAVE_TRAIN_SAVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensorweave/ops/io_ops.h"
#include "tensorweave/ops/state_ops.h"
#include "tensorweave/scope.h"
#include "tensorweave/session.h"
#include "tensorweave/status.h"
#include "tensorweave/train/checkpoint_directory.h"

namespace tw::train {

// The files' format (docs/architecture.md, "Checkpoints"). kTensorFlow: TensorFlow's V2
// checkpoint (its tensor-bundle index and data files), which TensorFlow's Saver,
// tf.train.load_checkpoint and TF Serving read. kTensorweave: tensorweave's own index
// (a checksummed protocol buffer) over the same data files. Either restores here.
enum class CheckpointFormat { kTensorFlow, kTensorweave };

struct SaverOptions {
  // Where checkpoints and the `checkpoint` state file live; created when missing. Every
  // checkpoint path must lie inside it. May be empty when write_on_variable_tasks is false:
  // then the Saver only builds its ops, for callers that keep their directories themselves
  // (CheckpointDirectory, WriteValues, ReadValues: the Python front-end), and Save and
  // Restore are FailedPrecondition.
  std::string checkpoint_dir;
  // Checkpoints are "<checkpoint_dir>/<basename>-<global_step>"; one path component.
  std::string basename = "model.ckpt";
  // Checkpoints listed in the state file beyond this many are deleted, oldest first.
  // 0 or less keeps them all.
  int max_to_keep = 5;
  // false: this process writes and reads the files (no shared file system needed). true:
  // the tasks holding the variables do, each its own shard (see above); faster for models
  // much larger than one link can carry in the time a disk writes them.
  bool write_on_variable_tasks = false;
  CheckpointFormat format = CheckpointFormat::kTensorFlow;
};

// What a checkpoint entry holds: a variable's value, or a tf.data iterator's place in its
// input (tensorweave/ops/iterator_ops.h), so that training restored from a checkpoint
// goes on with the examples that followed it.
enum class SaveableKind { kVariable, kIterator };

// A variable to save under `name`. With `full_shape` empty the variable is saved whole;
// otherwise it is one part of a variable partitioned along dimension 0: it holds rows
// [row_offset, row_offset + var.shape[0]) of a tensor of shape `full_shape` called `name`,
// and the parts given to one Saver must cover every row exactly once. An iterator
// (kind kIterator) is given as var = {its handle, DT_STRING, {}} and saved whole.
struct SaveableVariable {
  std::string name;
  ops::Variable var;
  std::vector<int64_t> full_shape;
  int64_t row_offset = 0;
  SaveableKind kind = SaveableKind::kVariable;
};

// Builds its ops at Create and runs them in any session over the scope's graph.
// Thread-compatible: Save and Restore of one Saver must not run concurrently.
class Saver {
 public:
  // Adds to `scope`'s graph, for each device that holds variables (the device of each
  // variable's node, as built): a read of each variable and a placeholder and Assign for
  // its restore, or with write_on_variable_tasks one SaveVariables and one RestoreVariables
  // op and a MergeCheckpoint op on the first of them (iterators are then refused: their
  // state is built in the step, not read from a variable). InvalidArgument naming the
  // variable: no variables, an empty or repeated name, a dtype that cannot be saved (resource),
  // parts of a partitioned variable that overlap, leave rows uncovered or disagree with its full
  // shape; also bad options (empty directory where one is needed, a basename with '/').
  // Errors creating the directory.
  static StatusOr<std::unique_ptr<Saver>> Create(const Scope& scope,
                                                 std::vector<SaveableVariable> vars,
                                                 SaverOptions options);

  // Saves every variable as "<checkpoint_dir>/<basename>-<global_step>" (replacing an
  // existing checkpoint of that step), records it as the latest in the state file and
  // deletes checkpoints beyond max_to_keep. Returns the prefix. Errors from the step
  // (FailedPrecondition for an uninitialized variable), file errors naming the file;
  // InvalidArgument for a negative step.
  StatusOr<std::string> Save(ClientSession& session, int64_t global_step);

  // Assigns every variable its value from the checkpoint `prefix` (absolute, or relative to
  // checkpoint_dir); all are read and checked before any changes. InvalidArgument for a
  // prefix outside checkpoint_dir; NotFound when the checkpoint or a variable in it is
  // missing; InvalidArgument naming a variable whose dtype or shape differs (and both);
  // DataLoss for corrupted files.
  Status Restore(ClientSession& session, const std::string& prefix);

  // The directory, canonical (absolute, symbolic links resolved); "" when none was given.
  const std::string& checkpoint_dir() const;
  bool writes_on_variable_tasks() const { return options_.write_on_variable_tasks; }

  // Save and Restore in parts, for callers that run the step in a session of their own
  // (the Python front-end). The directory's bookkeeping: directory() (null without a
  // checkpoint_dir), or a CheckpointDirectory of the caller's.
  CheckpointDirectory* directory() const { return directory_.get(); }

  // In this process (write_on_variable_tasks false): fetch value_outputs() in one step,
  // give the values to WriteValues; for a restore, feed ReadValues' values to
  // restore_inputs() (same order) and run restore_op().
  const std::vector<Output>& value_outputs() const { return values_; }
  const std::vector<Output>& restore_inputs() const { return restore_inputs_; }
  // Writes the checkpoint `prefix` (its data files, then its index) from `values`, one per
  // value_outputs() entry. InvalidArgument naming the variable for a value of another
  // dtype or shape; file errors naming the file.
  Status WriteValues(const std::string& prefix, const std::vector<Tensor>& values) const;
  // Each variable's value from the checkpoint `prefix`, one per restore_inputs() entry,
  // with Restore's errors.
  StatusOr<std::vector<Tensor>> ReadValues(const std::string& prefix) const;

  // On the variables' tasks (write_on_variable_tasks true): feed prefix_placeholder() the
  // prefix and run save_op() or restore_op().
  Output prefix_placeholder() const { return prefix_; }
  Operation save_op() const { return save_; }
  Operation restore_op() const { return restore_; }

 private:
  // The variables by the device their node asked for, in device order.
  using DeviceGroups = std::map<std::string, std::vector<const SaveableVariable*>>;
  explicit Saver(SaverOptions options) : options_(std::move(options)) {}
  // Per variable, on its device: a read (to fetch) and a placeholder with an Assign (to
  // feed); shard_begin_ from the groups.
  void BuildReadsAndAssigns(const Scope& s, const DeviceGroups& groups,
                            std::vector<Operation>* restores);
  // Per device: SaveVariables and RestoreVariables, and the MergeCheckpoint on the first.
  void BuildTaskOps(const Scope& s, const DeviceGroups& groups, std::vector<Operation>* restores);

  const SaverOptions options_;
  std::unique_ptr<CheckpointDirectory> directory_;
  // The variables in the order of values_ and restore_inputs_, grouped by device: those of
  // data file i are [shard_begin_[i], shard_begin_[i + 1]).
  std::vector<SaveableVariable> ordered_;
  std::vector<size_t> shard_begin_;
  int num_shards_ = 0;
  std::vector<Output> values_;          // each variable's value, read on its device
  std::vector<Output> restore_inputs_;  // a placeholder per variable, on its device
  Output prefix_;                       // write_on_variable_tasks: the prefix placeholder
  Operation save_;                      // write_on_variable_tasks: the MergeCheckpoint op
  Operation restore_;                   // a NoOp after every Assign or RestoreVariables
};

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_SAVER_H_
