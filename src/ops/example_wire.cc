#include "src/ops/example_wire.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>

#include "google/protobuf/io/coded_stream.h"

namespace tw::example_wire {
namespace {

namespace pbio = google::protobuf::io;

// The tags of a canonical Example, all length-delimited (wire type 2): Example.features,
// Features.feature (a map entry), the entry's key and value, Feature's three kinds, and
// the lists' values.
constexpr uint32_t LengthDelimited(int field) { return (static_cast<uint32_t>(field) << 3) | 2; }
constexpr uint32_t kField1 = LengthDelimited(1);
constexpr uint32_t kField2 = LengthDelimited(2);
constexpr uint32_t kField3 = LengthDelimited(3);

static_assert(std::endian::native == std::endian::little,
              "packed floats are copied as they lie on the wire (little-endian)");

pbio::CodedInputStream StreamOver(std::string_view bytes) {
  return pbio::CodedInputStream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                static_cast<int>(bytes.size()));
}

// Reads a length-delimited body after its tag, without copying; false when the length
// runs past the input.
bool ReadBody(pbio::CodedInputStream* in, std::string_view* body) {
  uint64_t length = 0;
  if (!in->ReadVarint64(&length)) return false;
  if (length == 0) {
    *body = {};
    return true;
  }
  const void* data = nullptr;
  int available = 0;
  if (!in->GetDirectBufferPointer(&data, &available) ||
      length > static_cast<uint64_t>(available)) {
    return false;
  }
  *body = std::string_view(static_cast<const char*>(data), length);
  return in->Skip(static_cast<int>(length));
}

// The number of varints in a packed int64 list, or -1 when one is cut short or longer
// than a canonical int64 (ten bytes, the last 0 or 1: a negative number).
int64_t CountVarints(std::string_view packed) {
  int64_t count = 0;
  int length = 0;
  for (char c : packed) {
    const auto byte = static_cast<uint8_t>(c);
    ++length;
    if (length == 10 && byte > 1) return -1;
    if ((byte & 0x80) == 0) {
      ++count;
      length = 0;
    }
  }
  return length == 0 ? count : -1;
}

// One list's values (the body of a BytesList, FloatList or Int64List) into `view`; false
// when not canonical.
bool ReadList(DataType dtype, std::string_view body, FeatureView* view) {
  view->dtype = dtype;
  auto in = StreamOver(body);
  if (dtype == DT_STRING) {
    view->wire = body;
    int64_t count = 0;
    std::string_view value;
    while (!in.ExpectAtEnd()) {
      if (!in.ExpectTag(kField1) || !ReadBody(&in, &value)) return false;
      ++count;
    }
    view->size = count;
    return true;
  }
  // Packed numbers: one field holding them all, or none for an empty list.
  if (in.ExpectAtEnd()) return true;
  if (!in.ExpectTag(kField1) || !ReadBody(&in, &view->wire) || !in.ExpectAtEnd()) return false;
  if (dtype == DT_FLOAT) {
    if (view->wire.size() % sizeof(float) != 0) return false;
    view->size = static_cast<int64_t>(view->wire.size() / sizeof(float));
    return true;
  }
  view->size = CountVarints(view->wire);
  return view->size >= 0;
}

// A Feature's body: empty (no kind) or exactly one kind.
bool ReadFeature(std::string_view body, FeatureView* view) {
  *view = FeatureView{};
  auto in = StreamOver(body);
  if (in.ExpectAtEnd()) return true;
  DataType dtype = DT_INVALID;
  if (in.ExpectTag(kField1)) {
    dtype = DT_STRING;
  } else if (in.ExpectTag(kField2)) {
    dtype = DT_FLOAT;
  } else if (in.ExpectTag(kField3)) {
    dtype = DT_INT64;
  } else {
    return false;
  }
  std::string_view list;
  return ReadBody(&in, &list) && in.ExpectAtEnd() && ReadList(dtype, list, view);
}

bool IsAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<uint8_t>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

ExampleParser::ExampleParser(std::vector<std::string> keys) : keys_(std::move(keys)) {
  for (size_t i = 0; i < keys_.size(); ++i) slot_of_.emplace(keys_[i], static_cast<int>(i));
}

bool ExampleParser::Parse(std::string_view record, Views views) {
  std::fill(views.begin(), views.end(), std::nullopt);
  if (!ParseCanonical(record, views)) {
    fallbacks_.fetch_add(1, std::memory_order_relaxed);
    std::fill(views.begin(), views.end(), std::nullopt);
    if (!ParseWithMessage(record, views)) return false;
  }
  // A key asked for twice gets the same feature twice.
  for (size_t i = 0; i < keys_.size(); ++i) {
    const int first = slot_of_.at(keys_[i]);
    if (first != static_cast<int>(i)) views[i] = views[first];
  }
  return true;
}

bool ExampleParser::ParseCanonical(std::string_view record, Views views) const {
  if (record.size() > static_cast<size_t>(INT_MAX)) return false;
  auto example = StreamOver(record);
  if (example.ExpectAtEnd()) return true;  // no features
  std::string_view features;
  if (!example.ExpectTag(kField1) || !ReadBody(&example, &features) || !example.ExpectAtEnd()) {
    return false;
  }
  auto in = StreamOver(features);
  while (!in.ExpectAtEnd()) {
    std::string_view entry, key, value;
    if (!in.ExpectTag(kField1) || !ReadBody(&in, &entry)) return false;
    // A map entry: its key then its value, either left out when empty.
    auto fields = StreamOver(entry);
    if (fields.ExpectTag(kField1) && !ReadBody(&fields, &key)) return false;
    if (fields.ExpectTag(kField2) && !ReadBody(&fields, &value)) return false;
    if (!fields.ExpectAtEnd() || !IsAscii(key)) return false;
    FeatureView view;
    if (!ReadFeature(value, &view)) return false;  // checked even when not asked for
    auto slot = slot_of_.find(key);
    if (slot == slot_of_.end()) continue;
    auto& seen = views[slot->second];
    if (seen.has_value()) return false;  // a key given twice: the last wins, as merged
    seen = view;
  }
  return true;
}

bool ExampleParser::ParseWithMessage(std::string_view record, Views views) {
  if (record.size() > static_cast<size_t>(INT_MAX)) return false;
  auto* example = google::protobuf::Arena::CreateMessage<proto::Example>(&arena_);
  if (!example->ParseFromArray(record.data(), static_cast<int>(record.size()))) return false;
  const auto& map = example->features().feature();
  for (const auto& [key, first] : slot_of_) {
    auto it = map.find(std::string(key));
    if (it == map.end()) continue;
    const proto::Feature& f = it->second;
    FeatureView view;
    view.message = &f;
    switch (f.kind_case()) {
      case proto::Feature::kBytesList:
        view.dtype = DT_STRING;
        view.size = f.bytes_list().value_size();
        break;
      case proto::Feature::kFloatList:
        view.dtype = DT_FLOAT;
        view.size = f.float_list().value_size();
        break;
      case proto::Feature::kInt64List:
        view.dtype = DT_INT64;
        view.size = f.int64_list().value_size();
        break;
      case proto::Feature::KIND_NOT_SET:
        break;
    }
    views[first] = view;
  }
  return true;
}

void CopyValues(const FeatureView& v, int64_t n, Tensor* out, int64_t at) {
  if (n <= 0) return;
  if (v.message != nullptr) {
    const proto::Feature& f = *v.message;
    switch (v.dtype) {
      case DT_FLOAT:
        std::memcpy(out->flat<float>().data() + at, f.float_list().value().data(),
                    n * sizeof(float));
        break;
      case DT_INT64:
        std::memcpy(out->flat<int64_t>().data() + at, f.int64_list().value().data(),
                    n * sizeof(int64_t));
        break;
      case DT_STRING:
        for (int64_t i = 0; i < n; ++i) out->flat<std::string>()[at + i] = f.bytes_list().value(i);
        break;
      default:
        break;
    }
    return;
  }
  auto in = StreamOver(v.wire);
  switch (v.dtype) {
    case DT_FLOAT:
      std::memcpy(out->flat<float>().data() + at, v.wire.data(), n * sizeof(float));
      break;
    case DT_INT64: {
      int64_t* dst = out->flat<int64_t>().data() + at;
      for (int64_t i = 0; i < n; ++i) {
        uint64_t value = 0;
        in.ReadVarint64(&value);  // counted and checked by ReadList
        dst[i] = static_cast<int64_t>(value);
      }
      break;
    }
    case DT_STRING: {
      std::string* dst = out->flat<std::string>().data() + at;
      std::string_view value;
      for (int64_t i = 0; i < n; ++i) {
        in.ExpectTag(kField1);  // checked by ReadList
        ReadBody(&in, &value);
        dst[i].assign(value);
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace tw::example_wire
