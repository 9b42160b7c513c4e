// Test helpers for example_wire: a record's requested features as the message parser and
// as the wire reader see them, to compare (example_wire_test.cc, fuzz/example_wire_fuzz.cc).
#ifndef TENSORWEAVE_SRC_OPS_EXAMPLE_WIRE_TEST_UTIL_H_
#define TENSORWEAVE_SRC_OPS_EXAMPLE_WIRE_TEST_UTIL_H_

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "src/ops/example_wire.h"

namespace tw::example_wire::testing {

// What the message parser makes of `record` for `keys`: per key, its values as a tensor
// of the feature's type, or nothing; nullopt when it refuses the record.
using Decoded = std::vector<std::optional<Tensor>>;

// A feature with no kind, which either way has no values and no type.
inline Tensor NoKind() { return Tensor::FromVector<int32_t>({}); }

inline std::optional<Tensor> FromMessage(const proto::Feature& f) {
  switch (f.kind_case()) {
    case proto::Feature::kBytesList:
      return Tensor::FromVector<std::string>(
          {f.bytes_list().value().begin(), f.bytes_list().value().end()});
    case proto::Feature::kFloatList:
      return Tensor::FromVector<float>(
          {f.float_list().value().begin(), f.float_list().value().end()});
    case proto::Feature::kInt64List:
      return Tensor::FromVector<int64_t>(
          {f.int64_list().value().begin(), f.int64_list().value().end()});
    case proto::Feature::KIND_NOT_SET:
      break;
  }
  return NoKind();
}

inline std::optional<Decoded> ByMessage(const std::string& record,
                                        const std::vector<std::string>& keys) {
  proto::Example e;
  if (!e.ParseFromString(record)) return std::nullopt;
  Decoded out;
  for (const std::string& key : keys) {
    auto it = e.features().feature().find(key);
    out.push_back(it == e.features().feature().end() ? std::nullopt : FromMessage(it->second));
  }
  return out;
}

inline std::optional<Decoded> ByWire(ExampleParser& parser, const std::string& record) {
  std::vector<std::optional<FeatureView>> views(parser.num_keys());
  if (!parser.Parse(record, absl::MakeSpan(views))) return std::nullopt;
  Decoded out;
  for (const auto& v : views) {
    if (!v) {
      out.push_back(std::nullopt);
      continue;
    }
    if (v->dtype == DT_INVALID) {
      out.push_back(NoKind());
      continue;
    }
    Tensor t(v->dtype, TensorShape({v->size}));
    CopyValues(*v, v->size, &t, 0);
    out.push_back(std::move(t));
  }
  return out;
}

// Equal types, shapes and values (floats bit for bit, NaNs included).
inline bool Same(const std::optional<Tensor>& a, const std::optional<Tensor>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->dtype() != b->dtype() || a->shape() != b->shape()) return false;
  if (a->dtype() == DT_STRING) {
    for (int64_t i = 0; i < a->num_elements(); ++i) {
      if (a->flat<std::string>()[i] != b->flat<std::string>()[i]) return false;
    }
    return true;
  }
  // (An empty tensor may have no buffer: memcmp must not see its null pointer.)
  return a->TotalBytes() == 0 || std::memcmp(a->raw_data(), b->raw_data(), a->TotalBytes()) == 0;
}

}  // namespace tw::example_wire::testing

#endif  // TENSORWEAVE_SRC_OPS_EXAMPLE_WIRE_TEST_UTIL_H_
