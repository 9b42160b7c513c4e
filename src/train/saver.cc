// Saver: builds the per-device ops that move variable values between the variables and
// the checkpoint files, and writes or reads those files here or on the variables' tasks.
// The directory's bookkeeping: checkpoint_directory.cc; the files' format:
// src/checkpoint/checkpoint_*.h.
#include "tensorweave/train/saver.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "src/checkpoint/checkpoint_format.h"
#include "src/checkpoint/checkpoint_reader.h"
#include "src/checkpoint/checkpoint_writer.h"
#include "src/ops/checkpoint_slice.h"
#include "tensorweave/device_name.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/iterator_ops.h"

namespace tw::train {
namespace {

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
    if (v.kind == SaveableKind::kIterator &&
        (v.var.dtype != DT_STRING || !v.var.shape.empty() || !v.full_shape.empty())) {
      return bad("is an iterator: give it as a whole DT_STRING scalar");
    }
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

bool FullyDefined(const std::vector<int64_t>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; });
}

checkpoint::VariableSlice SliceOf(const SaveableVariable& v) {
  checkpoint::VariableSlice s{.name = v.name, .partitioned = !v.full_shape.empty()};
  if (s.partitioned) {
    s.full_shape = *TensorShape::Create(v.full_shape);  // checked by ValidateVariables
    s.row_offset = v.row_offset;
  }
  return s;
}

// Runs fn(0), ..., fn(count - 1) on as many threads as there are cores (this one among
// them) and returns the first error by index. The shards of a checkpoint are files of their
// own: writing them at once overlaps one's CRC with another's disk writes.
Status ParallelFor(int count, const std::function<Status(int)>& fn) {
  const int threads =
      std::min(count, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  std::vector<Status> results(static_cast<size_t>(count));
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i = next.fetch_add(1); i < count; i = next.fetch_add(1)) results[i] = fn(i);
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& helper : helpers) helper.join();
  for (const Status& s : results) TW_RETURN_IF_ERROR(s);
  return OkStatus();
}

Status NoDirectory(const char* what) {
  return errors::FailedPrecondition("Saver::", what,
                                    ": this Saver was built without a checkpoint_dir");
}

}  // namespace

StatusOr<std::unique_ptr<Saver>> Saver::Create(const Scope& scope,
                                               std::vector<SaveableVariable> vars,
                                               SaverOptions options) {
  TW_RETURN_IF_ERROR(ValidateVariables(vars));
  auto saver = std::unique_ptr<Saver>(new Saver(std::move(options)));
  const SaverOptions& o = saver->options_;
  if (!o.checkpoint_dir.empty() || o.write_on_variable_tasks) {
    TW_ASSIGN_OR_RETURN(saver->directory_, CheckpointDirectory::Create(
                                               o.checkpoint_dir, {.basename = o.basename,
                                                                  .max_to_keep = o.max_to_keep}));
  }

  // Group the variables by the device their node asked for; the placer then runs each
  // group's ops there, beside the variables.
  TW_ASSIGN_OR_RETURN(proto::GraphDef graph, scope.ToGraphDef());
  std::map<std::string, std::string> device_of;
  for (const proto::NodeDef& n : graph.node()) device_of[n.name()] = n.device();
  DeviceGroups groups;
  for (const SaveableVariable& v : vars) {
    auto it = device_of.find(v.var.op().name());
    if (it == device_of.end()) {
      return errors::InvalidArgument("Saver: the node ", v.var.op().name(), " of variable \"",
                                     v.name, "\" is not in the scope's graph");
    }
    auto parsed = DeviceName::Parse(it->second);
    groups[parsed.ok() ? parsed->ToString() : it->second].push_back(&v);
  }

  if (o.write_on_variable_tasks) {
    for (const SaveableVariable& v : vars) {
      if (v.kind == SaveableKind::kIterator) {
        return errors::InvalidArgument("Saver: \"", v.name,
                                       "\" is an iterator, which write_on_variable_tasks does "
                                       "not save; save it with a Saver that writes here");
      }
    }
  }
  Scope s = scope.NewSubScope("saver");
  saver->num_shards_ = static_cast<int>(groups.size());
  std::vector<Operation> restores;
  if (o.write_on_variable_tasks) {
    saver->BuildTaskOps(s, groups, &restores);
  } else {
    saver->BuildReadsAndAssigns(s, groups, &restores);
  }
  saver->restore_ = ops::Group(s.WithOpName("restore_all"), restores);
  TW_RETURN_IF_ERROR(scope.status());
  return saver;
}

void Saver::BuildReadsAndAssigns(const Scope& s, const DeviceGroups& groups,
                                 std::vector<Operation>* restores) {
  shard_begin_ = {0};
  for (const auto& [device, members] : groups) {
    Scope at = device.empty() ? s : s.WithDevice(device);
    for (const SaveableVariable* v : members) {
      ordered_.push_back(*v);
      Output input = ops::Placeholder(at.WithOpName("restore_value"), v->var.dtype);
      restore_inputs_.push_back(input);
      if (v->kind == SaveableKind::kIterator) {
        values_.push_back(ops::SerializeIterator(at.WithOpName("save_iterator"), v->var.handle));
        restores->push_back(
            ops::DeserializeIterator(at.WithOpName("restore_iterator"), v->var.handle, input));
        continue;
      }
      values_.push_back(ops::ReadVariable(at.WithOpName("read"), v->var));
      restores->push_back(ops::Assign(at.WithOpName("restore"), v->var, input,
                                      {.validate_shape = FullyDefined(v->var.shape)})
                              .op());
    }
    shard_begin_.push_back(ordered_.size());
  }
}

void Saver::BuildTaskOps(const Scope& s, const DeviceGroups& groups,
                         std::vector<Operation>* restores) {
  const std::string& dir = checkpoint_dir();
  prefix_ = ops::Placeholder(s.WithOpName("prefix"), DT_STRING);
  std::vector<Operation> saves;
  for (const auto& [device, members] : groups) {
    Scope at = device.empty() ? s : s.WithDevice(device);
    std::vector<ops::Variable> handles;
    std::vector<ops::CheckpointSlice> slices;
    for (const SaveableVariable* v : members) {
      handles.push_back(v->var);
      slices.push_back({.name = v->name,
                        .partitioned = !v->full_shape.empty(),
                        .full_shape = v->full_shape,
                        .row_offset = v->row_offset});
    }
    saves.push_back(ops::SaveVariables(at.WithOpName("save"), prefix_, handles, slices,
                                       static_cast<int>(saves.size()), num_shards_, dir,
                                       options_.format == CheckpointFormat::kTensorFlow));
    restores->push_back(
        ops::RestoreVariables(at.WithOpName("restore"), prefix_, handles, slices, dir));
  }
  const std::string& first_device = groups.begin()->first;
  Scope merge_scope = first_device.empty() ? s : s.WithDevice(first_device);
  save_ = ops::MergeCheckpoint(merge_scope.WithOpName("merge").WithControlDependencies(saves),
                               prefix_, num_shards_, dir);
}

const std::string& Saver::checkpoint_dir() const {
  static const std::string kNone;
  return directory_ != nullptr ? directory_->dir() : kNone;
}

Status Saver::WriteValues(const std::string& prefix, const std::vector<Tensor>& values) const {
  if (options_.write_on_variable_tasks) {
    return errors::FailedPrecondition(
        "Saver::WriteValues: this Saver writes on the variables' tasks (save_op())");
  }
  if (values.size() != ordered_.size()) {
    return errors::InvalidArgument("Saver::WriteValues: ", values.size(), " values for ",
                                   ordered_.size(), " variables");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const SaveableVariable& v = ordered_[i];
    if (values[i].dtype() != v.var.dtype) {
      return errors::InvalidArgument("Saver: the value of variable \"", v.name, "\" is ",
                                     DataTypeName(values[i].dtype()), ", not ",
                                     DataTypeName(v.var.dtype));
    }
  }
  // One data file per device, as the variables' tasks would write them, so either kind of
  // save restores the other's files; the shards' variables are consecutive.
  TW_RETURN_IF_ERROR(ParallelFor(num_shards_, [&](int shard) -> Status {
    TW_ASSIGN_OR_RETURN(auto writer, checkpoint::ShardWriter::Create(
                                         prefix, shard, num_shards_,
                                         options_.format == CheckpointFormat::kTensorFlow));
    for (size_t i = shard_begin_[shard]; i < shard_begin_[shard + 1]; ++i) {
      const SaveableVariable& v = ordered_[i];
      const checkpoint::VariableSlice slice = SliceOf(v);
      TW_RETURN_IF_ERROR(writer->Add(v.name,
                                     slice.partitioned ? slice.full_shape : values[i].shape(),
                                     slice.row_offset, values[i]));
    }
    return writer->Finish();
  }));
  return checkpoint::MergeShardIndexes(prefix, num_shards_);
}

StatusOr<std::vector<Tensor>> Saver::ReadValues(const std::string& prefix) const {
  if (options_.write_on_variable_tasks) {
    return errors::FailedPrecondition(
        "Saver::ReadValues: this Saver reads on the variables' tasks (restore_op())");
  }
  // A reader per shard of variables, in parallel (a reader caches open files and is not
  // thread-safe); the errors are those of the first variable, in order, that has one.
  std::vector<Tensor> values(ordered_.size());
  std::vector<Status> errors(ordered_.size());
  TW_RETURN_IF_ERROR(ParallelFor(num_shards_, [&](int shard) -> Status {
    TW_ASSIGN_OR_RETURN(auto reader, checkpoint::CheckpointReader::Open(prefix));
    for (size_t i = shard_begin_[shard]; i < shard_begin_[shard + 1]; ++i) {
      const SaveableVariable& v = ordered_[i];
      auto value = checkpoint::ReadVariableSlice(*reader, SliceOf(v), v.var.dtype,
                                                 PartialShape::Of(v.var.shape), v.var.op().name());
      if (!value.ok()) {
        errors[i] = value.status();
        return OkStatus();
      }
      values[i] = *std::move(value);
    }
    return OkStatus();
  }));
  for (const Status& s : errors) TW_RETURN_IF_ERROR(s);
  return values;
}

StatusOr<std::string> Saver::Save(ClientSession& session, int64_t global_step) {
  if (directory_ == nullptr) return NoDirectory("Save");
  TW_ASSIGN_OR_RETURN(std::string prefix, directory_->BeginSave(global_step));
  if (options_.write_on_variable_tasks) {
    auto ran = session.Run({{prefix_, Tensor::Scalar<std::string>(prefix)}}, {}, {save_});
    if (!ran.ok()) return ran.status();
  } else {
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, session.Run({}, values_));
    TW_RETURN_IF_ERROR(WriteValues(prefix, values));
  }
  TW_RETURN_IF_ERROR(directory_->FinishSave(prefix));
  return prefix;
}

Status Saver::Restore(ClientSession& session, const std::string& prefix) {
  if (directory_ == nullptr) return NoDirectory("Restore");
  TW_ASSIGN_OR_RETURN(std::string path, directory_->BeginRestore(prefix));
  if (options_.write_on_variable_tasks) {
    return session.Run({{prefix_, Tensor::Scalar<std::string>(path)}}, {}, {restore_}).status();
  }
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, ReadValues(path));
  ClientSession::FeedList feeds;
  feeds.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) feeds.emplace_back(restore_inputs_[i], values[i]);
  return session.Run(feeds, {}, {restore_}).status();
}

}  // namespace tw::train
