// Graph-building functions for parsing input records, as TF 1.x's parsing ops:
// tf.train.Example protos (tensorweave/protobuf/example.proto) into tensors, raw bytes and
// strings into numbers, CSV lines into columns. Errors are TensorFlow's messages, raised
// when the step runs (InvalidArgument naming the example, the feature or the record).
#ifndef TENSORWEAVE_OPS_PARSING_OPS_H_
#define TENSORWEAVE_OPS_PARSING_OPS_H_

#include <optional>
#include <string>
#include <vector>

#include "tensorweave/scope.h"

namespace tw::ops {

// A feature every example has (tf.FixedLenFeature), parsed into a dense [batch] + shape
// tensor. dtype is DT_FLOAT, DT_INT64 or DT_STRING. Without a default the feature is
// required. shape[0] == -1 makes it a tf.FixedLenSequenceFeature: any multiple of the rest
// of the shape, padded to the batch's longest with `default_value` (then a scalar).
struct FixedLenFeature {
  std::string key;
  DataType dtype = DT_FLOAT;
  std::vector<int64_t> shape;
  std::optional<Tensor> default_value;
};

// A feature of any length (tf.VarLenFeature), parsed into a sparse tensor.
struct VarLenFeature {
  std::string key;
  DataType dtype = DT_FLOAT;
};

// A sparse tensor as three dense ones: indices [n, rank] (int64), values [n], dense_shape
// [rank] (int64).
struct SparseOutput {
  Output indices, values, dense_shape;
};

struct ParsedExamples {
  std::vector<SparseOutput> sparse;  // one per VarLenFeature, rank 2: [batch, longest]
  std::vector<Output> dense;         // one per FixedLenFeature
};

// Parses `serialized` (a string vector of serialized Examples); `names` (optional, a string
// vector as long) name the examples in errors.
ParsedExamples ParseExample(const Scope& scope, Input serialized,
                            const std::vector<VarLenFeature>& sparse,
                            const std::vector<FixedLenFeature>& dense,
                            std::optional<Input> names = std::nullopt);

// The bytes of each string as numbers of `out_type` (a new last dimension); every string
// must be as long, a multiple of the type's size.
Output DecodeRaw(const Scope& scope, Input bytes, DataType out_type, bool little_endian = true);

// Each string as a number of `out_type` (DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64).
Output StringToNumber(const Scope& scope, Input strings, DataType out_type = DT_FLOAT);

struct DecodeCSVOptions {
  char field_delim = ',';
  bool use_quote_delim = true;       // "a,b" is one field; "" inside it is a quote
  std::string na_value;              // a field equal to it takes the default, as an empty one
  std::vector<int64_t> select_cols;  // empty: every column
};

// One output per column, shaped as `records`, of the types of `record_defaults` (each a
// tensor of one value, or empty for a required column).
std::vector<Output> DecodeCSV(const Scope& scope, Input records,
                              const std::vector<Tensor>& record_defaults,
                              const DecodeCSVOptions& options = {});

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_PARSING_OPS_H_
