// Checkpoint I/O: SaveVariables, MergeCheckpoint and RestoreVariables (definitions, CPU
// kernels, graph-building functions). The format lives in src/checkpoint/checkpoint_*.h; see
// docs/architecture.md, "Checkpoints".
//
// The kernels take variable handles, so each runs on its variables' task and reads or
// writes the checkpoint files there: checkpoints need a file system every task sees at the
// same path (as with TensorFlow), and no variable value crosses the network. The Saver uses
// them only when asked to (SaverOptions::write_on_variable_tasks); by default it writes in
// the process that saves. Every path is checked against the task's FileAccessPolicy
// (src/framework/file_access.h) before any file is touched.
#include "tensorweave/ops/io_ops.h"

#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_format.h"
#include "src/checkpoint/checkpoint_reader.h"
#include "src/checkpoint/checkpoint_writer.h"
#include "src/ops/checkpoint_slice.h"
#include "src/ops/variable.h"

namespace tw {
namespace {

// One variable's place in the checkpoint, from the node's attributes.
struct SliceAttr {
  std::string name;
  bool partitioned = false;
  TensorShape full_shape;
  int64_t row_offset = 0;
};

// Reads `names` (string vector), `full_shapes` (unknown rank: saved whole) and
// `row_offsets`, one per variable input.
Status ParseSlices(OpKernelConstruction* c, std::vector<SliceAttr>* out) {
  const int n = c->num_inputs() - 1;
  Tensor names;
  std::vector<PartialShape> shapes;
  std::vector<int64_t> offsets;
  TW_RETURN_IF_ERROR(c->GetAttr("names", &names));
  TW_RETURN_IF_ERROR(c->GetAttr("full_shapes", &shapes));
  TW_RETURN_IF_ERROR(c->GetAttr("row_offsets", &offsets));
  if (names.dtype() != DT_STRING || names.rank() != 1 || names.num_elements() != n ||
      static_cast<int>(shapes.size()) != n || static_cast<int>(offsets.size()) != n) {
    return errors::InvalidArgument("node ", c->def().name(), " needs ", n,
                                   " names (a string vector), full_shapes and row_offsets, one "
                                   "per variable; got names ",
                                   names.DebugString(), ", ", shapes.size(), " shapes and ",
                                   offsets.size(), " offsets");
  }
  for (int i = 0; i < n; ++i) {
    SliceAttr s;
    s.name = names.flat<std::string>()[i];
    if (s.name.empty()) {
      return errors::InvalidArgument("node ", c->def().name(), ": name ", i, " is empty");
    }
    s.partitioned = !shapes[i].unknown_rank;
    if (s.partitioned) {
      auto full = TensorShape::Create(shapes[i].dims);
      if (!full.ok() || !full->IsFullyDefined() || full->rank() == 0 || offsets[i] < 0 ||
          offsets[i] > full->dim(0)) {
        return errors::InvalidArgument("node ", c->def().name(), ": variable \"", s.name,
                                       "\" has a bad partition: full shape ",
                                       shapes[i].DebugString(), ", row offset ", offsets[i]);
      }
      s.full_shape = *full;
      s.row_offset = offsets[i];
    }
    out->push_back(std::move(s));
  }
  return OkStatus();
}

// The prefix input, checked against the device's file policy and then `directory`.
// The policy comes from whoever started the task (ServerOptions.allowed_directories): the
// graph, and so its `directory` attribute, comes from any client that can reach the task,
// and can only narrow where the files go, never widen it. PermissionDenied naming the path
// and the allowed directories when the policy refuses it.
StatusOr<std::string> CheckedPrefix(OpKernelContext* ctx, const std::string& directory) {
  const Tensor& input = ctx->input(0);
  if (input.dtype() != DT_STRING || input.num_elements() != 1) {
    return errors::InvalidArgument("the checkpoint prefix must be one string, got ",
                                   input.DebugString());
  }
  const std::string prefix = input.flat<std::string>()[0];
  TW_RETURN_IF_ERROR(ctx->file_access().Check(prefix, "checkpoint path"));
  TW_RETURN_IF_ERROR(checkpoint::CheckPathUnder(directory, prefix));
  return prefix;
}

// ---- SaveVariables ----
TW_REGISTER_OP("SaveVariables")
    .Input("prefix: string")
    .Input("resources: N * resource")
    .Attr("N: int >= 1")
    .Attr("names: tensor")
    .Attr("full_shapes: list(shape)")
    .Attr("row_offsets: list(int)")
    .Attr("shard: int")
    .Attr("num_shards: int >= 1")
    .Attr("directory: string")
    .Attr("tensorflow_format: bool = false")
    .SetIsStateful()
    .Doc(
        "Writes the variables' values as one shard of the checkpoint at prefix "
        "(with tensorflow_format, TensorFlow's bytes).");

class SaveVariablesOp : public OpKernel {
 public:
  explicit SaveVariablesOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = ParseSlices(c, &slices_);
    if (s.ok()) s = c->GetAttr("shard", &shard_);
    if (s.ok()) s = c->GetAttr("num_shards", &num_shards_);
    if (s.ok()) s = c->GetAttr("directory", &directory_);
    if (s.ok()) s = c->GetAttr("tensorflow_format", &tensorflow_format_);
    c->SetStatus(s);
  }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    auto prefix = CheckedPrefix(ctx, directory_);
    TW_OP_REQUIRES_OK(ctx, prefix.status());
    // Snapshots taken under each variable's lock (updates happen in place); the files are
    // written without holding any lock.
    std::vector<Tensor> values;
    for (size_t i = 0; i < slices_.size(); ++i) {
      auto var = LookupVariable(ctx, ctx->input(static_cast<int>(i) + 1));
      TW_OP_REQUIRES_OK(ctx, var.status());
      absl::MutexLock lock((*var)->mu());
      TW_OP_REQUIRES(ctx, (*var)->initialized(),
                     errors::FailedPrecondition("cannot save variable \"", slices_[i].name,
                                                "\": it is uninitialized (", (*var)->name(), ")"));
      values.push_back((*var)->Snapshot());
    }
    auto writer = checkpoint::ShardWriter::Create(*prefix, shard_, num_shards_, tensorflow_format_);
    TW_OP_REQUIRES_OK(ctx, writer.status());
    for (size_t i = 0; i < slices_.size(); ++i) {
      const SliceAttr& s = slices_[i];
      TW_OP_REQUIRES_OK(ctx,
                        (*writer)->Add(s.name, s.partitioned ? s.full_shape : values[i].shape(),
                                       s.row_offset, values[i]));
    }
    TW_OP_REQUIRES_OK(ctx, (*writer)->Finish());
  }

 private:
  std::vector<SliceAttr> slices_;
  int shard_ = 0;
  int num_shards_ = 1;
  std::string directory_;
  bool tensorflow_format_ = false;
};
TW_REGISTER_KERNEL("SaveVariables", "CPU", SaveVariablesOp);

// ---- MergeCheckpoint ----
TW_REGISTER_OP("MergeCheckpoint")
    .Input("prefix: string")
    .Attr("num_shards: int >= 1")
    .Attr("directory: string")
    .SetIsStateful()
    .Doc("Writes the checkpoint's index from its shards' indexes, making it valid.");

class MergeCheckpointOp : public OpKernel {
 public:
  explicit MergeCheckpointOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("num_shards", &num_shards_);
    if (s.ok()) s = c->GetAttr("directory", &directory_);
    c->SetStatus(s);
  }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    auto prefix = CheckedPrefix(ctx, directory_);
    TW_OP_REQUIRES_OK(ctx, prefix.status());
    TW_OP_REQUIRES_OK(ctx, checkpoint::MergeShardIndexes(*prefix, num_shards_));
  }

 private:
  int num_shards_ = 1;
  std::string directory_;
};
TW_REGISTER_KERNEL("MergeCheckpoint", "CPU", MergeCheckpointOp);

// ---- RestoreVariables ----
TW_REGISTER_OP("RestoreVariables")
    .Input("prefix: string")
    .Input("resources: N * resource")
    .Attr("N: int >= 1")
    .Attr("names: tensor")
    .Attr("full_shapes: list(shape)")
    .Attr("row_offsets: list(int)")
    .Attr("directory: string")
    .SetIsStateful()
    .Doc("Assigns the variables their values from the checkpoint at prefix.");

class RestoreVariablesOp : public OpKernel {
 public:
  explicit RestoreVariablesOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = ParseSlices(c, &slices_);
    if (s.ok()) s = c->GetAttr("directory", &directory_);
    c->SetStatus(s);
  }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    auto prefix = CheckedPrefix(ctx, directory_);
    TW_OP_REQUIRES_OK(ctx, prefix.status());
    auto reader = checkpoint::CheckpointReader::Open(*prefix);
    TW_OP_REQUIRES_OK(ctx, reader.status());
    // Everything is read and checked before any variable changes.
    std::vector<std::shared_ptr<VariableResource>> vars;
    std::vector<Tensor> values;
    for (size_t i = 0; i < slices_.size(); ++i) {
      auto var = LookupVariable(ctx, ctx->input(static_cast<int>(i) + 1));
      TW_OP_REQUIRES_OK(ctx, var.status());
      const SliceAttr& s = slices_[i];
      auto value = checkpoint::ReadVariableSlice(
          **reader, {s.name, s.partitioned, s.full_shape, s.row_offset}, (*var)->dtype(),
          (*var)->shape(), (*var)->name());
      TW_OP_REQUIRES_OK(ctx, value.status());
      vars.push_back(*std::move(var));
      values.push_back(*std::move(value));
    }
    for (size_t i = 0; i < vars.size(); ++i) {
      absl::MutexLock lock(vars[i]->mu());
      vars[i]->set_value(std::move(values[i]));
    }
  }

 private:
  std::vector<SliceAttr> slices_;
  std::string directory_;
};
TW_REGISTER_KERNEL("RestoreVariables", "CPU", RestoreVariablesOp);

}  // namespace

namespace ops {
namespace {

AttrMap SliceAttrs(const std::vector<CheckpointSlice>& slices, const std::string& directory) {
  std::vector<std::string> names;
  std::vector<PartialShape> shapes;
  std::vector<int64_t> offsets;
  for (const CheckpointSlice& s : slices) {
    names.push_back(s.name);
    shapes.push_back(s.partitioned ? PartialShape::Of(s.full_shape) : PartialShape::Unknown());
    offsets.push_back(s.partitioned ? s.row_offset : 0);
  }
  return {{"names", MakeAttr(Tensor::FromVector<std::string>(names))},
          {"full_shapes", MakeAttr(shapes)},
          {"row_offsets", MakeAttr(offsets)},
          {"directory", MakeAttr(directory)}};
}

InputList Handles(const std::vector<Variable>& vars) {
  InputList handles;
  for (const Variable& v : vars) handles.push_back(v.handle);
  return handles;
}

}  // namespace

Operation SaveVariables(const Scope& scope, Input prefix, const std::vector<Variable>& vars,
                        const std::vector<CheckpointSlice>& slices, int shard, int num_shards,
                        const std::string& directory, bool tensorflow_format) {
  if (vars.size() != slices.size()) {
    scope.UpdateStatus(errors::InvalidArgument("SaveVariables: ", vars.size(), " variables but ",
                                               slices.size(), " slices"));
    return Operation();
  }
  AttrMap attrs = SliceAttrs(slices, directory);
  attrs["shard"] = MakeAttr(shard);
  attrs["num_shards"] = MakeAttr(num_shards);
  attrs["tensorflow_format"] = MakeAttr(tensorflow_format);
  return scope.AddNode("SaveVariables", {{prefix}, Handles(vars)}, attrs);
}

Operation MergeCheckpoint(const Scope& scope, Input prefix, int num_shards,
                          const std::string& directory) {
  return scope.AddNode("MergeCheckpoint", {{prefix}},
                       {{"num_shards", MakeAttr(num_shards)}, {"directory", MakeAttr(directory)}});
}

Operation RestoreVariables(const Scope& scope, Input prefix, const std::vector<Variable>& vars,
                           const std::vector<CheckpointSlice>& slices,
                           const std::string& directory) {
  if (vars.size() != slices.size()) {
    scope.UpdateStatus(errors::InvalidArgument("RestoreVariables: ", vars.size(), " variables but ",
                                               slices.size(), " slices"));
    return Operation();
  }
  return scope.AddNode("RestoreVariables", {{prefix}, Handles(vars)},
                       SliceAttrs(slices, directory));
}

}  // namespace ops
}  // namespace tw
