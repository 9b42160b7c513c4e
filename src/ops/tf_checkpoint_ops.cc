// SaveV2 and RestoreV2, with TensorFlow's names and signatures. RestoreV2: tensors (or row
// slices of them) read from a checkpoint in either format, as graph values;
// tf.train.init_from_checkpoint builds it as a variable's initial value, and a SavedModel's
// saver restores through it. SaveV2: tensors written as one checkpoint in TensorFlow's
// format (one data file), as a SavedModel's saver subgraph saves.
//
// `shape_and_slices` entries are "" (the whole tensor) or TensorFlow's slice spec: the full
// shape's dimensions, then per dimension "start,length" or "-" (all of it), ':'-separated
// ("10 4 0,4:-" is rows 0..3 of a [10, 4] tensor). tensorweave's checkpoints hold row
// slices, so a spec that cuts another dimension is Unimplemented naming the tensor.
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "src/base/request_text.h"
#include "src/checkpoint/checkpoint_reader.h"
#include "src/checkpoint/checkpoint_writer.h"
#include "src/framework/op_def.h"
#include "src/framework/op_kernel.h"
#include "src/ops/checkpoint_slice.h"

namespace tw {
namespace {

TW_REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetIsStateful()
    .Doc("Reads tensors, or row slices of them, from the checkpoint at prefix.");

// The slice of `name` that `spec` names, and the shape of what it reads. InvalidArgument
// for a malformed spec; Unimplemented for one that cuts a dimension other than 0.
Status ParseSliceSpec(const std::string& name, const std::string& spec,
                      checkpoint::VariableSlice* slice, PartialShape* shape) {
  slice->name = name;
  if (spec.empty()) {
    *shape = PartialShape::Unknown();  // whatever the checkpoint holds
    return OkStatus();
  }
  auto bad = [&] {
    return errors::InvalidArgument("RestoreV2: tensor \"", QuoteRequestText(name),
                                   "\" has a malformed shape_and_slices entry \"",
                                   QuoteRequestText(spec), "\"");
  };
  std::vector<std::string> words = absl::StrSplit(spec, ' ');
  const std::vector<std::string> extents = absl::StrSplit(words.back(), ':');
  words.pop_back();
  if (words.empty() || extents.size() != words.size()) return bad();
  std::vector<int64_t> dims;
  for (const std::string& w : words) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(w, &d) || d < 0) return bad();
    dims.push_back(d);
  }
  auto full = TensorShape::Create(dims);
  if (!full.ok()) return bad();
  int64_t start = 0;
  int64_t length = dims[0];
  for (size_t d = 0; d < extents.size(); ++d) {
    if (extents[d] == "-") continue;
    const std::vector<std::string> pair = absl::StrSplit(extents[d], ',');
    int64_t s = 0;
    int64_t n = 0;
    if (pair.size() != 2 || !absl::SimpleAtoi(pair[0], &s) || !absl::SimpleAtoi(pair[1], &n) ||
        s < 0 || n < 0 || s > dims[d] || n > dims[d] - s) {
      return bad();
    }
    if (d == 0) {
      start = s;
      length = n;
    } else if (s != 0 || n != dims[d]) {
      return errors::Unimplemented("RestoreV2: tensor \"", QuoteRequestText(name),
                                   "\" is asked for a slice along dimension ", d, " (\"",
                                   QuoteRequestText(spec),
                                   "\"); tensorweave reads slices of rows only");
    }
  }
  slice->partitioned = true;
  slice->full_shape = *full;
  slice->row_offset = start;
  dims[0] = length;
  *shape = PartialShape::Of(dims);
  return OkStatus();
}

// The checkpoint path of a SaveV2 or RestoreV2 step (`op` names it in errors): its prefix
// one string the device's file policy allows, with one tensor name and one slice spec per
// tensor (`n`).
StatusOr<std::string> CheckedPath(OpKernelContext* ctx, const char* op, int64_t n) {
  const Tensor& prefix = ctx->input(0);
  const Tensor& names = ctx->input(1);
  const Tensor& specs = ctx->input(2);
  if (prefix.dtype() != DT_STRING || prefix.num_elements() != 1) {
    return errors::InvalidArgument(op, ": prefix must be one string, got ",
                                   prefix.shape().DebugString());
  }
  if (names.dtype() != DT_STRING || specs.dtype() != DT_STRING || names.num_elements() != n ||
      specs.num_elements() != n) {
    return errors::InvalidArgument(op, ": ", n, " tensors need as many tensor_names and ",
                                   "shape_and_slices; got ", names.num_elements(), " and ",
                                   specs.num_elements());
  }
  const std::string& path = prefix.flat<std::string>()[0];
  TW_RETURN_IF_ERROR(ctx->file_access().Check(path, "checkpoint path"));
  return path;
}

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("dtypes", &dtypes_));
  }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& names = ctx->input(1);
    const Tensor& specs = ctx->input(2);
    const auto n = static_cast<int64_t>(dtypes_.size());
    auto path = CheckedPath(ctx, "RestoreV2", n);
    TW_OP_REQUIRES_OK(ctx, path.status());
    auto reader = checkpoint::CheckpointReader::Open(*path);
    TW_OP_REQUIRES_OK(ctx, reader.status());
    for (int64_t i = 0; i < n; ++i) {
      const std::string& name = names.flat<std::string>()[i];
      checkpoint::VariableSlice slice;
      PartialShape shape;
      TW_OP_REQUIRES_OK(ctx, ParseSliceSpec(name, specs.flat<std::string>()[i], &slice, &shape));
      auto value = checkpoint::ReadVariableSlice(**reader, slice, dtypes_[i], shape, name);
      TW_OP_REQUIRES_OK(ctx, value.status());
      ctx->set_output(static_cast<int>(i), *std::move(value));
    }
  }

 private:
  std::vector<DataType> dtypes_;
};
TW_REGISTER_KERNEL("RestoreV2", "CPU", RestoreV2Op);

TW_REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetIsStateful()
    .Doc("Writes the tensors, or row slices of larger ones, as the checkpoint at prefix.");

class SaveV2Op : public OpKernel {
 public:
  explicit SaveV2Op(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("dtypes", &dtypes_));
  }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& names = ctx->input(1);
    const Tensor& specs = ctx->input(2);
    const auto n = static_cast<int64_t>(dtypes_.size());
    auto checked = CheckedPath(ctx, "SaveV2", n);
    TW_OP_REQUIRES_OK(ctx, checked.status());
    const std::string& path = *checked;
    auto writer = checkpoint::ShardWriter::Create(path, 0, 1, /*tensorflow_format=*/true);
    TW_OP_REQUIRES_OK(ctx, writer.status());
    for (int64_t i = 0; i < n; ++i) {
      const std::string& name = names.flat<std::string>()[i];
      const Tensor& value = ctx->input(3 + static_cast<int>(i));
      checkpoint::VariableSlice slice;
      PartialShape shape;
      TW_OP_REQUIRES_OK(ctx, ParseSliceSpec(name, specs.flat<std::string>()[i], &slice, &shape));
      TW_OP_REQUIRES(ctx, shape.IsCompatibleWith(value.shape()),
                     errors::InvalidArgument("SaveV2: tensor \"", QuoteRequestText(name),
                                             "\" has shape ", value.shape().DebugString(),
                                             "; its slice spec says ", shape.DebugString()));
      TW_OP_REQUIRES_OK(ctx,
                        (*writer)->Add(name, slice.partitioned ? slice.full_shape : value.shape(),
                                       slice.row_offset, value));
    }
    TW_OP_REQUIRES_OK(ctx, (*writer)->Finish());
    TW_OP_REQUIRES_OK(ctx, checkpoint::MergeShardIndexes(path, 1));
  }

 private:
  std::vector<DataType> dtypes_;
};
TW_REGISTER_KERNEL("SaveV2", "CPU", SaveV2Op);

}  // namespace
}  // namespace tw
