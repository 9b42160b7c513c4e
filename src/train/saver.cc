// Saver: builds the save, merge and restore ops per device group, and manages the
// checkpoint directory (state file, max_to_keep). The files' format is in
// src/checkpoint/checkpoint_*.h.
#include "tensorweave/train/saver.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_format.h"
#include "src/checkpoint/checkpoint_state.h"
#include "tensorweave/device_name.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw::train {
namespace {

using checkpoint::CheckPathUnder;
using checkpoint::IndexFileName;

std::string DescribeShape(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) absl::StrAppend(&s, i ? "," : "", dims[i]);
  return s + "]";
}

// Checks names, dtypes, and that the parts of each partitioned variable tile its rows.
Status ValidateVariables(const std::vector<SaveableVariable>& vars) {
  if (vars.empty()) return errors::InvalidArgument("Saver: no variables to save");
  struct Part {
    int64_t begin, end;
  };
  std::map<std::string, std::vector<Part>> parts;
  std::map<std::string, const SaveableVariable*> first;
  for (const SaveableVariable& v : vars) {
    if (v.name.empty()) return errors::InvalidArgument("Saver: a variable has no name");
    auto bad = [&](auto&&... why) {
      return errors::InvalidArgument("Saver: variable \"", v.name, "\" ", why...);
    };
    if (!v.var.op().valid()) return bad("has no variable node");
    if (!checkpoint::IsSavableDataType(v.var.dtype)) {
      return bad("has dtype ", DataTypeName(v.var.dtype), ", which cannot be saved");
    }
    auto [it, inserted] = first.emplace(v.name, &v);
    if (v.full_shape.empty()) {
      if (!inserted) return bad("is given twice");
      continue;
    }
    if (!inserted && (it->second->full_shape.empty() || it->second->full_shape != v.full_shape ||
                      it->second->var.dtype != v.var.dtype)) {
      return bad("is given twice, or its parts disagree on dtype or full shape");
    }
    const std::vector<int64_t>& full = v.full_shape;
    const std::vector<int64_t>& part = v.var.shape;
    bool fits = part.size() == full.size() && !part.empty() && part[0] >= 0;
    for (size_t i = 1; fits && i < part.size(); ++i) fits = part[i] == full[i] && full[i] >= 0;
    if (!fits || full[0] < 0 || v.row_offset < 0 || v.row_offset > full[0] ||
        part[0] > full[0] - v.row_offset) {
      return bad("has a part of shape ", DescribeShape(part), " at row ", v.row_offset,
                 ", which is not a slice of its full shape ", DescribeShape(full));
    }
    parts[v.name].push_back({v.row_offset, v.row_offset + part[0]});
  }
  for (auto& [name, list] : parts) {
    std::sort(list.begin(), list.end(),
              [](const Part& a, const Part& b) { return a.begin < b.begin; });
    int64_t next = 0;
    for (const Part& p : list) {
      if (p.begin != next) {
        return errors::InvalidArgument("Saver: the parts of variable \"", name, "\" ",
                                       p.begin < next ? "overlap" : "leave a gap", " at row ",
                                       std::min(p.begin, next));
      }
      next = p.end;
    }
    if (next != first[name]->full_shape[0]) {
      return errors::InvalidArgument("Saver: the parts of variable \"", name, "\" cover ", next,
                                     " of ", first[name]->full_shape[0], " rows");
    }
  }
  return OkStatus();
}

Status ValidateBasename(const std::string& b) {
  if (b.empty() || b == "." || b == ".." || b.find('/') != std::string::npos ||
      b.find('\0') != std::string::npos || b == checkpoint::kStateFileName) {
    return errors::InvalidArgument("SaverOptions.basename \"", b, "\" must be one path component");
  }
  return OkStatus();
}

Status ValidateOptions(const SaverOptions& o) {
  if (o.checkpoint_dir.empty()) {
    return errors::InvalidArgument("SaverOptions.checkpoint_dir is empty");
  }
  return ValidateBasename(o.basename);
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

StatusOr<std::unique_ptr<Saver>> Saver::Create(const Scope& scope,
                                               std::vector<SaveableVariable> vars,
                                               SaverOptions options) {
  TW_RETURN_IF_ERROR(ValidateOptions(options));
  TW_RETURN_IF_ERROR(ValidateVariables(vars));
  std::error_code ec;
  std::filesystem::create_directories(options.checkpoint_dir, ec);
  if (ec) {
    return errors::Internal("cannot create checkpoint directory ", options.checkpoint_dir, ": ",
                            ec.message());
  }
  TW_ASSIGN_OR_RETURN(std::string dir, checkpoint::CanonicalDirectory(options.checkpoint_dir));

  // Group the variables by the device their node asked for; the placer then runs each
  // group's ops there, beside the variables.
  TW_ASSIGN_OR_RETURN(proto::GraphDef graph, scope.ToGraphDef());
  std::map<std::string, std::string> device_of;
  for (const proto::NodeDef& n : graph.node()) device_of[n.name()] = n.device();
  std::map<std::string, std::vector<const SaveableVariable*>> groups;
  for (const SaveableVariable& v : vars) {
    auto it = device_of.find(v.var.op().name());
    if (it == device_of.end()) {
      return errors::InvalidArgument("Saver: the node ", v.var.op().name(), " of variable \"",
                                     v.name, "\" is not in the scope's graph");
    }
    auto parsed = DeviceName::Parse(it->second);
    groups[parsed.ok() ? parsed->ToString() : it->second].push_back(&v);
  }

  auto saver = std::unique_ptr<Saver>(new Saver(dir, std::move(options)));
  Scope s = scope.NewSubScope("saver");
  saver->prefix_ = ops::Placeholder(s.WithOpName("prefix"), DT_STRING);
  const int num_shards = static_cast<int>(groups.size());
  std::vector<Operation> saves, restores;
  for (const auto& [device, members] : groups) {
    std::vector<ops::Variable> handles;
    std::vector<ops::CheckpointSlice> slices;
    for (const SaveableVariable* v : members) {
      handles.push_back(v->var);
      slices.push_back({.name = v->name,
                        .partitioned = !v->full_shape.empty(),
                        .full_shape = v->full_shape,
                        .row_offset = v->row_offset});
    }
    Scope at = device.empty() ? s : s.WithDevice(device);
    saves.push_back(ops::SaveVariables(at.WithOpName("save"), saver->prefix_, handles, slices,
                                       static_cast<int>(saves.size()), num_shards, dir));
    restores.push_back(
        ops::RestoreVariables(at.WithOpName("restore"), saver->prefix_, handles, slices, dir));
  }
  const std::string& first_device = groups.begin()->first;
  Scope merge_scope = first_device.empty() ? s : s.WithDevice(first_device);
  saver->save_ =
      ops::MergeCheckpoint(merge_scope.WithOpName("merge").WithControlDependencies(saves),
                           saver->prefix_, num_shards, dir);
  saver->restore_ = ops::Group(s.WithOpName("restore_all"), restores);
  TW_RETURN_IF_ERROR(scope.status());
  return saver;
}

StatusOr<std::string> Saver::ResolvePrefix(const std::string& prefix) const {
  if (prefix.empty()) return errors::InvalidArgument("the checkpoint prefix is empty");
  std::string path = prefix.starts_with("/") ? prefix : dir_ + "/" + prefix;
  TW_RETURN_IF_ERROR(CheckPathUnder(dir_, path));
  return path;
}

StatusOr<std::string> Saver::BeginSave(std::optional<int64_t> global_step,
                                       const std::string& basename) {
  if (global_step && *global_step < 0) {
    return errors::InvalidArgument("Saver::Save: global_step ", *global_step, " is negative");
  }
  const std::string& base = basename.empty() ? options_.basename : basename;
  TW_RETURN_IF_ERROR(ValidateBasename(base));
  const std::string name = global_step ? absl::StrCat(base, "-", *global_step) : base;
  // Saving again at a step replaces that checkpoint; dropping it first means a save that
  // fails halfway leaves no index over a mix of old and new data files.
  TW_RETURN_IF_ERROR(DeleteCheckpointFiles(dir_, name));
  return dir_ + "/" + name;
}

Status Saver::FinishSave(const std::string& prefix) {
  const std::string name = NameInDirectory(dir_, prefix);
  if (name.empty()) {
    return errors::InvalidArgument("Saver: the saved prefix ", prefix, " is not in ", dir_);
  }
  return UpdateStateAndDeleteOld(name);
}

StatusOr<std::string> Saver::Save(ClientSession& session, int64_t global_step) {
  TW_ASSIGN_OR_RETURN(std::string prefix, BeginSave(global_step));
  auto ran = session.Run({{prefix_, Tensor::Scalar<std::string>(prefix)}}, {}, {save_});
  if (!ran.ok()) return ran.status();
  TW_RETURN_IF_ERROR(FinishSave(prefix));
  return prefix;
}

Status Saver::UpdateStateAndDeleteOld(const std::string& name) {
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

StatusOr<std::string> Saver::BeginRestore(const std::string& prefix) const {
  TW_ASSIGN_OR_RETURN(std::string path, ResolvePrefix(prefix));
  if (!checkpoint::FileExists(IndexFileName(path))) {
    return errors::NotFound("checkpoint ", path, " not found: ", IndexFileName(path),
                            " does not exist");
  }
  return path;
}

Status Saver::Restore(ClientSession& session, const std::string& prefix) {
  TW_ASSIGN_OR_RETURN(std::string path, BeginRestore(prefix));
  auto ran = session.Run({{prefix_, Tensor::Scalar<std::string>(path)}}, {}, {restore_});
  return ran.status();
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
