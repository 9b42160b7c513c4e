// The `checkpoint` state file of a checkpoint directory: which checkpoint is the latest
// and which are kept, in TensorFlow's text form so its tools read it too:
//
//   model_checkpoint_path: "model.ckpt-300"
//   all_model_checkpoint_paths: "model.ckpt-200"
//   all_model_checkpoint_paths: "model.ckpt-300"
//
// Paths are written relative to the directory; absolute ones are read too. Thread-safe:
// pure functions (concurrent writers of one directory race, the last rename wins).
#ifndef TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_STATE_H_
#define TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_STATE_H_

#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/status.h"

namespace tw::checkpoint {

inline constexpr char kStateFileName[] = "checkpoint";

struct CheckpointState {
  std::string model_checkpoint_path;                    // the latest
  std::vector<std::string> all_model_checkpoint_paths;  // oldest first
};

// Parses the text. Lines of other keys (TensorFlow's timestamps) are ignored; a known key
// whose value is not one double-quoted string is DataLoss naming `file` and the line.
StatusOr<CheckpointState> ParseCheckpointState(std::string_view text, const std::string& file);
std::string FormatCheckpointState(const CheckpointState& state);

// `dir`/checkpoint: NotFound when it does not exist, DataLoss when it is unreadable text
// or larger than 1 MiB.
StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir);
// Written atomically (temporary name, then rename).
Status WriteCheckpointState(const std::string& dir, const CheckpointState& state);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_CHECKPOINT_STATE_H_
