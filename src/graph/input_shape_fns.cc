// The shape functions of the input ops: parsing, strings, readers and tf.data's iterators
// (src/ops/parsing_ops.cc, string_ops.cc, reader_ops.cc, src/data/iterator_ops.cc), after
// TensorFlow's: a FixedLenFeature's output is [batch] + its shape, an iterator's elements
// have its output_shapes, so that the layers built on them know their input sizes.
#include <string>
#include <vector>

#include "src/framework/attr_value.h"
#include "src/graph/shape_inference.h"

namespace tw {
namespace {

constexpr int64_t kUnknown = TensorShape::kUnknownDim;

StaticShape Make(const std::vector<int64_t>& dims) {
  auto shape = TensorShape::Create(dims);
  if (!shape.ok()) return std::nullopt;
  return *shape;
}

// sparse_indices [?, 2], sparse_values [?], sparse_shapes [2], dense_values [batch] + shape
// (a sequence feature's -1 becomes an unknown dimension).
Status ParseExampleShape(ShapeContext* ctx) {
  int64_t num_sparse = 0;
  std::vector<PartialShape> dense_shapes;
  TW_RETURN_IF_ERROR(GetNodeAttr(ctx->node(), "Nsparse", &num_sparse));
  TW_RETURN_IF_ERROR(GetNodeAttr(ctx->node(), "dense_shapes", &dense_shapes));
  const StaticShape& serialized = ctx->input(0);
  if (serialized && serialized->rank() > 1) {
    return ctx->Error("Shape must be at most rank 1 but is rank " +
                      std::to_string(serialized->rank()));
  }
  const int64_t batch = serialized && serialized->rank() == 1 ? serialized->dim(0) : kUnknown;
  const int n = static_cast<int>(num_sparse);
  for (int i = 0; i < n; ++i) {
    ctx->set_output(i, Make({kUnknown, 2}));
    ctx->set_output(n + i, Make({kUnknown}));
    ctx->set_output(2 * n + i, Make({2}));
  }
  for (size_t i = 0; i < dense_shapes.size() && 3 * n + static_cast<int>(i) < ctx->num_outputs();
       ++i) {
    if (dense_shapes[i].unknown_rank) continue;
    std::vector<int64_t> dims{batch};
    for (int64_t d : dense_shapes[i].dims) dims.push_back(d < 0 ? kUnknown : d);
    ctx->set_output(3 * n + static_cast<int>(i), Make(dims));
  }
  return OkStatus();
}

// The input's shape and one more dimension, known when the strings' length is not.
Status DecodeRawShape(ShapeContext* ctx) {
  if (!ctx->input(0)) return OkStatus();
  std::vector<int64_t> dims(ctx->input(0)->dims().begin(), ctx->input(0)->dims().end());
  dims.push_back(kUnknown);
  ctx->set_output(0, Make(dims));
  return OkStatus();
}

// Every output shaped as input 0.
Status AllLikeFirstInput(ShapeContext* ctx) {
  for (int i = 0; i < ctx->num_outputs(); ++i) ctx->set_output(i, ctx->input(0));
  return OkStatus();
}

}  // namespace

TW_REGISTER_SHAPE_FN("ParseExample", ParseExampleShape);
TW_REGISTER_SHAPE_FN("DecodeRaw", DecodeRawShape);
TW_REGISTER_SHAPE_FN("StringToNumber", AllLikeFirstInput);
TW_REGISTER_SHAPE_FN("StringToHashBucketFast", AllLikeFirstInput);
TW_REGISTER_SHAPE_FN("AsString", AllLikeFirstInput);
TW_REGISTER_SHAPE_FN("DecodeCSV", AllLikeFirstInput);
TW_REGISTER_SHAPE_FN("StringSplit", [](ShapeContext* ctx) {
  ctx->set_output(0, Make({kUnknown, 2}));
  ctx->set_output(1, Make({kUnknown}));
  ctx->set_output(2, Make({2}));
  return OkStatus();
});
// Substr and StringJoin: shaped as their inputs that are not scalars (scalars join all).
TW_REGISTER_SHAPE_FN("Substr", [](ShapeContext* ctx) {
  const StaticShape& input = ctx->input(0);
  ctx->set_output(0, input && input->rank() == 0 ? ctx->input(1) : input);
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("StringJoin", [](ShapeContext* ctx) {
  StaticShape shape = Make({});
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    if (!ctx->input(i)) return OkStatus();  // unknown: so is the output
    if (ctx->input(i)->rank() > 0) shape = ctx->input(i);
  }
  ctx->set_output(0, shape);
  return OkStatus();
});
TW_REGISTER_SHAPE_FN("SparseToDense", [](ShapeContext* ctx) {
  ctx->set_output(0, ctx->input_as_shape(1));
  return OkStatus();
});

namespace {
Status Scalars(ShapeContext* ctx) {
  for (int i = 0; i < ctx->num_outputs(); ++i) ctx->set_output(i, Make({}));
  return OkStatus();
}
Status Vectors(ShapeContext* ctx) {
  for (int i = 0; i < ctx->num_outputs(); ++i) ctx->set_output(i, Make({kUnknown}));
  return OkStatus();
}
}  // namespace
TW_REGISTER_SHAPE_FN("TFRecordReaderV2", Scalars);
TW_REGISTER_SHAPE_FN("TextLineReaderV2", Scalars);
TW_REGISTER_SHAPE_FN("FixedLengthRecordReaderV2", Scalars);
TW_REGISTER_SHAPE_FN("WholeFileReaderV2", Scalars);
TW_REGISTER_SHAPE_FN("ReaderReadV2", Scalars);
TW_REGISTER_SHAPE_FN("ReaderReadUpToV2", Vectors);
TW_REGISTER_SHAPE_FN("ReaderNumRecordsProducedV2", Scalars);
TW_REGISTER_SHAPE_FN("ReaderNumWorkUnitsCompletedV2", Scalars);
TW_REGISTER_SHAPE_FN("ReadFile", Scalars);
TW_REGISTER_SHAPE_FN("Iterator", Scalars);
TW_REGISTER_SHAPE_FN("OneShotIterator", Scalars);
TW_REGISTER_SHAPE_FN("IteratorToStringHandle", Scalars);
TW_REGISTER_SHAPE_FN("IteratorFromStringHandle", Scalars);
TW_REGISTER_SHAPE_FN("SerializeIterator", Scalars);
TW_REGISTER_SHAPE_FN("IteratorGetNext", [](ShapeContext* ctx) {
  std::vector<PartialShape> shapes;
  if (!GetNodeAttr(ctx->node(), "output_shapes", &shapes).ok()) return OkStatus();
  for (int i = 0; i < ctx->num_outputs() && i < static_cast<int>(shapes.size()); ++i) {
    if (shapes[i].unknown_rank) continue;
    std::vector<int64_t> dims;
    for (int64_t d : shapes[i].dims) dims.push_back(d < 0 ? kUnknown : d);
    ctx->set_output(i, Make(dims));
  }
  return OkStatus();
});

}  // namespace tw
