// Reading the requested features of tf.train.Example records straight from their wire
// format, as TensorFlow's fast Example parsing does: no message is built, so a record
// costs no allocation per feature, and a feature's numbers are copied (floats) or decoded
// (int64 varints) from the record's bytes into the output tensor.
//
// The contract is the message parser's result, exactly: records in the canonical encoding
// TensorFlow and protobuf write (each key once, one kind per feature, packed numbers, ASCII
// keys, no unknown fields) are read here; any other record (a repeated key, unpacked
// numbers, a non-ASCII key, anything malformed) is handed to protobuf's message parser,
// whose verdict and values it then is. example_wire_test.cc checks both ways agree on
// random and mutated records.
#ifndef TENSORWEAVE_SRC_OPS_EXAMPLE_WIRE_H_
#define TENSORWEAVE_SRC_OPS_EXAMPLE_WIRE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "google/protobuf/arena.h"
#include "tensorweave/protobuf/example.pb.h"
#include "tensorweave/tensor.h"

namespace tw::example_wire {

// One feature's values, where they lie: in the record's bytes (`wire`), or in a message
// the fallback parsed (`message`). Valid while the record and the RecordParser live.
struct FeatureView {
  DataType dtype = DT_INVALID;  // DT_INVALID: a feature with no kind (no values)
  int64_t size = 0;             // the number of values
  // float: size * 4 little-endian bytes; int64: size varints; string: a BytesList's body.
  std::string_view wire;
  const proto::Feature* message = nullptr;
};

// One record's features, in the order of the parser's keys.
using Views = absl::Span<std::optional<FeatureView>>;

// Parses records for a fixed list of keys. Thread-safe: a batch's records are parsed in
// parallel by one parser, whose arena keeps the fallback's messages until it goes.
class ExampleParser {
 public:
  explicit ExampleParser(std::vector<std::string> keys);
  // Out of line, as the constructor: users need not link absl's hash tables.
  ~ExampleParser();

  // Parses `record` into `views` (one per key): views[i] is keys[i]'s feature, or nullopt when the
  // record has none. False when the record is not a tf.train.Example (the message
  // parser's verdict). The views are valid while `record` and this parser live.
  bool Parse(std::string_view record, Views views);
  // How many records the message parser took (for tests and benchmarks).
  int64_t fallbacks() const { return fallbacks_.load(); }
  size_t num_keys() const { return keys_.size(); }

 private:
  // False when the record is not canonical (the views are then garbage).
  bool ParseCanonical(std::string_view record, Views views) const;
  bool ParseWithMessage(std::string_view record, Views views);

  // The first index of `key` in keys_, or -1: a scan of a few keys (as most parses ask
  // for) costs less than hashing the record's every key.
  int SlotOf(std::string_view key) const;
  static constexpr size_t kMostKeysScanned = 8;

  std::vector<std::string> keys_;
  absl::flat_hash_map<std::string_view, int> slot_of_;  // with more keys than that
  google::protobuf::Arena arena_;                       // thread-safe
  std::atomic<int64_t> fallbacks_{0};
};

// Copies `v`'s `n` first values into `out` (of v's dtype) from index `at`.
void CopyValues(const FeatureView& v, int64_t n, Tensor* out, int64_t at);

}  // namespace tw::example_wire

#endif  // TENSORWEAVE_SRC_OPS_EXAMPLE_WIRE_H_
