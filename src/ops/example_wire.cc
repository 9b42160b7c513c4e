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

// Reads a length-delimited field's length (after its tag); false when it runs past the
// current limit (the enclosing message) or the input.
bool ReadLength(pbio::CodedInputStream* in, int* length) {
  uint64_t n = 0;
  if (!in->ReadVarint64(&n) || n > static_cast<uint64_t>(in->BytesUntilLimit())) return false;
  *length = static_cast<int>(n);
  return true;
}

// Reads a length-delimited body (after its tag) as a view of the input.
bool ReadBody(pbio::CodedInputStream* in, std::string_view* body) {
  int length = 0;
  if (!ReadLength(in, &length)) return false;
  const void* data = nullptr;
  int available = 0;
  in->GetDirectBufferPointerInline(&data, &available);
  if (length > available) return false;
  *body = std::string_view(static_cast<const char*>(data), length);
  return in->Skip(length);
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

// One list's values (a BytesList, FloatList or Int64List, the current limit) into
// `view`; false when not canonical.
bool ReadList(pbio::CodedInputStream* in, DataType dtype, FeatureView* view) {
  view->dtype = dtype;
  if (dtype == DT_STRING) {
    const void* start = nullptr;
    int available = 0;
    in->GetDirectBufferPointerInline(&start, &available);
    const int bytes = in->BytesUntilLimit();
    int64_t count = 0;
    std::string_view value;
    while (!in->ExpectAtEnd()) {
      if (!in->ExpectTag(kField1) || !ReadBody(in, &value)) return false;
      ++count;
    }
    view->wire = std::string_view(static_cast<const char*>(start), bytes);
    view->size = count;
    return true;
  }
  // Packed numbers: one field holding them all, or none for an empty list.
  if (in->ExpectAtEnd()) return true;
  if (!in->ExpectTag(kField1) || !ReadBody(in, &view->wire) || !in->ExpectAtEnd()) return false;
  if (dtype == DT_FLOAT) {
    if (view->wire.size() % sizeof(float) != 0) return false;
    view->size = static_cast<int64_t>(view->wire.size() / sizeof(float));
    return true;
  }
  view->size = CountVarints(view->wire);
  return view->size >= 0;
}

// A Feature (the current limit): empty (no kind) or exactly one kind.
bool ReadFeature(pbio::CodedInputStream* in, FeatureView* view) {
  *view = FeatureView{};
  if (in->ExpectAtEnd()) return true;
  DataType dtype = DT_INVALID;
  if (in->ExpectTag(kField1)) {
    dtype = DT_STRING;
  } else if (in->ExpectTag(kField2)) {
    dtype = DT_FLOAT;
  } else if (in->ExpectTag(kField3)) {
    dtype = DT_INT64;
  } else {
    return false;
  }
  int length = 0;
  if (!ReadLength(in, &length)) return false;
  const auto list = in->PushLimit(length);
  if (!ReadList(in, dtype, view)) return false;
  in->PopLimit(list);
  return in->ExpectAtEnd();
}

bool IsAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<uint8_t>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

ExampleParser::ExampleParser(std::vector<std::string> keys) : keys_(std::move(keys)) {
  if (keys_.size() > kMostKeysScanned) {
    for (size_t i = 0; i < keys_.size(); ++i) slot_of_.emplace(keys_[i], static_cast<int>(i));
  }
}

ExampleParser::~ExampleParser() = default;

int ExampleParser::SlotOf(std::string_view key) const {
  if (keys_.size() > kMostKeysScanned) {
    auto it = slot_of_.find(key);
    return it == slot_of_.end() ? -1 : it->second;
  }
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return static_cast<int>(i);
  }
  return -1;
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
    const int first = SlotOf(keys_[i]);
    if (first != static_cast<int>(i)) views[i] = views[first];
  }
  return true;
}

// One stream over the record; each nested message is a limit pushed on it.
bool ExampleParser::ParseCanonical(std::string_view record, Views views) const {
  if (record.size() >= static_cast<size_t>(INT_MAX)) return false;
  auto in = StreamOver(record);
  if (in.ExpectAtEnd()) return true;  // no features
  int length = 0;
  if (!in.ExpectTag(kField1) || !ReadLength(&in, &length)) return false;
  const auto features = in.PushLimit(length);
  while (!in.ExpectAtEnd()) {
    if (!in.ExpectTag(kField1) || !ReadLength(&in, &length)) return false;
    const auto entry = in.PushLimit(length);
    // A map entry: its key then its value, either left out when empty.
    std::string_view key;
    FeatureView view;
    if (in.ExpectTag(kField1) && !ReadBody(&in, &key)) return false;
    if (in.ExpectTag(kField2)) {
      if (!ReadLength(&in, &length)) return false;
      const auto value = in.PushLimit(length);
      if (!ReadFeature(&in, &view)) return false;  // checked even when not asked for
      in.PopLimit(value);
    }
    if (!in.ExpectAtEnd() || !IsAscii(key)) return false;
    in.PopLimit(entry);
    const int slot = SlotOf(key);
    if (slot < 0) continue;
    if (views[slot].has_value()) return false;  // a key given twice: the last wins, as merged
    views[slot] = view;
  }
  in.PopLimit(features);
  return in.ExpectAtEnd();
}

bool ExampleParser::ParseWithMessage(std::string_view record, Views views) {
  if (record.size() > static_cast<size_t>(INT_MAX)) return false;
  auto* example = google::protobuf::Arena::CreateMessage<proto::Example>(&arena_);
  if (!example->ParseFromArray(record.data(), static_cast<int>(record.size()))) return false;
  const auto& map = example->features().feature();
  for (size_t first = 0; first < keys_.size(); ++first) {
    if (SlotOf(keys_[first]) != static_cast<int>(first)) continue;  // a key asked for again
    auto it = map.find(keys_[first]);
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
