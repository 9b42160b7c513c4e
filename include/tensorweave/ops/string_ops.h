// Graph-building functions for TF 1.x's string ops that input pipelines use: splitting
// lines into tokens (a sparse tensor), substrings, joining and hash buckets. Errors are
// TensorFlow's, raised when the step runs.
#ifndef TENSORWEAVE_OPS_STRING_OPS_H_
#define TENSORWEAVE_OPS_STRING_OPS_H_

#include <string>
#include <vector>

#include "tensorweave/ops/parsing_ops.h"
#include "tensorweave/scope.h"

namespace tw::ops {

// Splits each string of the vector `input` at every character of the scalar `delimiter`
// (each byte when it is empty), dropping empty tokens when skip_empty: a sparse tensor of
// shape [input size, most tokens] (tf.string_split).
SparseOutput StringSplit(const Scope& scope, Input input, Input delimiter, bool skip_empty = true);

// Where substrings start and how long they are: in bytes, or in UTF-8 characters.
enum class SubstrUnit { kByte, kUtf8Char };

// The substring of each string from `pos` (from the end when negative) of at most `len`
// units (tf.substr). pos and len have one shape, which is the input's or a scalar's; the
// input may be a scalar too. InvalidArgument naming the string when pos is out of range.
Output Substr(const Scope& scope, Input input, Input pos, Input len,
              SubstrUnit unit = SubstrUnit::kByte);

// The strings of `inputs` joined element by element with `separator` (tf.string_join);
// the inputs have one shape, or are scalars.
Output StringJoin(const Scope& scope, const std::vector<Input>& inputs,
                  const std::string& separator = "");

// Each string's bucket in [0, num_buckets): its FarmHash Fingerprint64 modulo num_buckets,
// the buckets TensorFlow's tf.string_to_hash_bucket_fast gives (feature columns' hash
// buckets). An int64 tensor of the input's shape.
Output StringToHashBucketFast(const Scope& scope, Input input, int64_t num_buckets);

// Each element of an int32, int64, float, double or bool tensor as text (tf.as_string):
// integers "%d", floats "%f" (with precision, or "%e"/"%g" for scientific/shortest),
// right-aligned to width with fill (" ", "0", "+", "-" or "#"); booleans "true"/"false".
struct AsStringOptions {
  int64_t precision = -1;
  bool scientific = false;
  bool shortest = false;
  int64_t width = -1;
  std::string fill;
};
Output AsString(const Scope& scope, Input input, const AsStringOptions& options = {});

// TensorFlow's default hash key of crosses (sparse_ops._DEFAULT_HASH_KEY).
inline constexpr int64_t kDefaultCrossHashKey = 0xDECAFCAFFE;

// The hashed crosses of categorical features per example (tf.sparse.cross_hashed, the
// ids of feature columns' crossed_column): every combination of one value of each input
// (the sparse inputs first, then the dense [batch, k] ones; the first varies slowest),
// hashed as TensorFlow hashes them (FingerprintCat64 of hash_key and each value's hash:
// a string's FarmHash Fingerprint64, an int64 itself) modulo num_buckets (0: the largest
// int64). Inputs are int64 or string; a sparse input has rank 2. A [batch, most crosses]
// sparse tensor.
SparseOutput SparseCrossHashed(const Scope& scope, const std::vector<SparseOutput>& sparse,
                               const std::vector<Input>& dense, int64_t num_buckets,
                               int64_t hash_key = kDefaultCrossHashKey);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_STRING_OPS_H_
