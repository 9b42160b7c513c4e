// CheckpointDirectory: names, the state file and max_to_keep (the files' format:
// src/checkpoint/checkpoint_*.h).
#include "tensorweave/train/checkpoint_directory.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_format.h"
#include "src/checkpoint/checkpoint_state.h"

namespace tw::train {
namespace {

using checkpoint::CheckPathUnder;
using checkpoint::IndexFileName;

Status ValidateBasename(const std::string& b) {
  if (b.empty() || b == "." || b == ".." || b.find('/') != std::string::npos ||
      b.find('\0') != std::string::npos || b == checkpoint::kStateFileName) {
    return errors::InvalidArgument("SaverOptions.basename \"", b, "\" must be one path component");
  }
  return OkStatus();
}

// Deletes every file of the checkpoint `name` in `dir`: the index first (so the checkpoint
// stops being valid before any data goes), then data files, shard indexes and leftovers
// of interrupted saves.
Status DeleteCheckpointFiles(const std::string& dir, const std::string& name) {
  TW_RETURN_IF_ERROR(checkpoint::RemoveFileIfExists(IndexFileName(dir + "/" + name)));
  TW_ASSIGN_OR_RETURN(std::vector<std::string> entries, checkpoint::ListDirectory(dir));
  for (const std::string& e : entries) {
    if (e.starts_with(name + ".data-") || e.starts_with(name + ".index")) {
      TW_RETURN_IF_ERROR(checkpoint::RemoveFileIfExists(dir + "/" + e));
    }
  }
  return OkStatus();
}

// A state file entry as a name inside `dir`, or "" when it points elsewhere.
std::string NameInDirectory(const std::string& dir, const std::string& entry) {
  const std::string path = entry.starts_with("/") ? entry : dir + "/" + entry;
  if (!CheckPathUnder(dir, path).ok()) return "";
  const std::string name = path.substr(dir.size() + 1);
  return name.find('/') == std::string::npos ? name : "";
}

}  // namespace

StatusOr<std::unique_ptr<CheckpointDirectory>> CheckpointDirectory::Create(
    const std::string& dir, CheckpointDirectoryOptions options) {
  if (dir.empty()) return errors::InvalidArgument("SaverOptions.checkpoint_dir is empty");
  TW_RETURN_IF_ERROR(ValidateBasename(options.basename));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return errors::Internal("cannot create checkpoint directory ", dir, ": ", ec.message());
  }
  TW_ASSIGN_OR_RETURN(std::string canonical, checkpoint::CanonicalDirectory(dir));
  return std::unique_ptr<CheckpointDirectory>(
      new CheckpointDirectory(std::move(canonical), std::move(options)));
}

StatusOr<std::string> CheckpointDirectory::BeginSave(std::optional<int64_t> global_step,
                                                     const std::string& basename) {
  if (global_step && *global_step < 0) {
    return errors::InvalidArgument("Saver::Save: global_step ", *global_step, " is negative");
  }
  const std::string& base = basename.empty() ? options_.basename : basename;
  TW_RETURN_IF_ERROR(ValidateBasename(base));
  const std::string name = global_step ? absl::StrCat(base, "-", *global_step) : base;
  TW_RETURN_IF_ERROR(DeleteCheckpointFiles(dir_, name));
  return dir_ + "/" + name;
}

Status CheckpointDirectory::FinishSave(const std::string& prefix) {
  const std::string name = NameInDirectory(dir_, prefix);
  if (name.empty()) {
    return errors::InvalidArgument("Saver: the saved prefix ", prefix, " is not in ", dir_);
  }
  return UpdateStateAndDeleteOld(name);
}

Status CheckpointDirectory::UpdateStateAndDeleteOld(const std::string& name) {
  // An unreadable state file must not stop training: it is rewritten from scratch (its
  // checkpoints are then no longer deleted by max_to_keep).
  auto old = checkpoint::ReadCheckpointState(dir_);
  std::vector<std::string> kept;
  if (old.ok()) {
    for (const std::string& entry : old->all_model_checkpoint_paths) {
      std::string n = NameInDirectory(dir_, entry);
      if (!n.empty() && n != name && std::find(kept.begin(), kept.end(), n) == kept.end()) {
        kept.push_back(std::move(n));
      }
    }
  }
  kept.push_back(name);
  std::vector<std::string> doomed;
  if (options_.max_to_keep > 0 && kept.size() > static_cast<size_t>(options_.max_to_keep)) {
    const size_t drop = kept.size() - static_cast<size_t>(options_.max_to_keep);
    doomed.assign(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(drop));
    kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  // The state file first: a crash before the deletions leaves unlisted files, never a
  // listed checkpoint without its files.
  TW_RETURN_IF_ERROR(checkpoint::WriteCheckpointState(
      dir_, {.model_checkpoint_path = name, .all_model_checkpoint_paths = kept}));
  for (const std::string& d : doomed) TW_RETURN_IF_ERROR(DeleteCheckpointFiles(dir_, d));
  return OkStatus();
}

StatusOr<std::string> CheckpointDirectory::BeginRestore(const std::string& prefix) const {
  if (prefix.empty()) return errors::InvalidArgument("the checkpoint prefix is empty");
  const std::string path = prefix.starts_with("/") ? prefix : dir_ + "/" + prefix;
  TW_RETURN_IF_ERROR(CheckPathUnder(dir_, path));
  if (!checkpoint::FileExists(IndexFileName(path))) {
    return errors::NotFound("checkpoint ", path, " not found: ", IndexFileName(path),
                            " does not exist");
  }
  return path;
}

StatusOr<std::string> LatestCheckpoint(const std::string& checkpoint_dir) {
  TW_ASSIGN_OR_RETURN(std::string dir, checkpoint::CanonicalDirectory(checkpoint_dir));
  auto state = checkpoint::ReadCheckpointState(dir);
  if (IsNotFound(state.status())) {
    return errors::NotFound("no checkpoint in ", checkpoint_dir, ": it has no ",
                            checkpoint::kStateFileName, " file");
  }
  TW_RETURN_IF_ERROR(state.status());
  std::vector<std::string> candidates{state->model_checkpoint_path};
  candidates.insert(candidates.end(), state->all_model_checkpoint_paths.rbegin(),
                    state->all_model_checkpoint_paths.rend());
  for (const std::string& c : candidates) {
    const std::string name = NameInDirectory(dir, c);
    if (name.empty()) continue;
    const std::string prefix = dir + "/" + name;
    if (checkpoint::FileExists(IndexFileName(prefix))) return prefix;
  }
  return errors::NotFound("no complete checkpoint in ", checkpoint_dir,
                          ": the state file lists none whose index exists");
}

}  // namespace tw::train
