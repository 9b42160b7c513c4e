// The fast Example reader against protobuf's message parser: the same verdict and the same
// values on random records, on non-canonical encodings (which it hands to the message
// parser) and on mutated bytes.
#include "src/ops/example_wire.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ops/example_wire_test_util.h"

namespace tw::example_wire {
namespace {

using testing::ByMessage;
using testing::ByWire;
using testing::Same;

void ExpectAgree(ExampleParser& parser, const std::vector<std::string>& keys,
                 const std::string& record) {
  auto want = ByMessage(record, keys);
  auto got = ByWire(parser, record);
  ASSERT_EQ(got.has_value(), want.has_value()) << "record of " << record.size() << " bytes";
  if (!want) return;
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_TRUE(Same((*got)[i], (*want)[i])) << "key " << keys[i];
  }
}

proto::Example RandomExample(std::mt19937_64& rng) {
  proto::Example e;
  auto& map = *e.mutable_features()->mutable_feature();
  const int n = static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) {
    proto::Feature& f = map["k" + std::to_string(rng() % 5)];
    const int values = static_cast<int>(rng() % 4) * static_cast<int>(rng() % 3);
    switch (rng() % 4) {
      case 0:
        for (int j = 0; j < values; ++j) {
          f.mutable_bytes_list()->add_value(std::string(rng() % 300, static_cast<char>(rng())));
        }
        if (values == 0) f.mutable_bytes_list();
        break;
      case 1:
        for (int j = 0; j < values; ++j) f.mutable_float_list()->add_value(rng() * 1e-9f - 5.0f);
        if (values == 0) f.mutable_float_list();
        break;
      case 2:  // small, large and negative numbers: varints of 1 to 10 bytes
        for (int j = 0; j < values; ++j) {
          f.mutable_int64_list()->add_value(static_cast<int64_t>(rng()) >> (rng() % 64));
        }
        if (values == 0) f.mutable_int64_list();
        break;
      default:
        break;  // a feature with no kind
    }
  }
  return e;
}

const std::vector<std::string> kKeys = {"k0", "k1", "k2", "k3", "k1", "missing"};

TEST(ExampleWireTest, ProtobufsOwnRecordsAreReadWithoutTheMessageParser) {
  std::mt19937_64 rng(31);
  ExampleParser parser(kKeys);
  for (int i = 0; i < 2000; ++i) {
    ExpectAgree(parser, kKeys, RandomExample(rng).SerializeAsString());
  }
  EXPECT_EQ(parser.fallbacks(), 0);
}

// Bytes of a length-delimited field `field` holding `body`.
std::string Field(int field, const std::string& body) {
  std::string out(1, static_cast<char>((field << 3) | 2));
  size_t n = body.size();
  do {
    out.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
    n >>= 7;
  } while (n > 0);
  return out + body;
}
std::string Entry(const std::string& key, const std::string& feature) {
  return Field(1, Field(1, key) + Field(2, feature));
}

TEST(ExampleWireTest, OtherEncodingsGoToTheMessageParserAndAgree) {
  const std::string floats = Field(2, Field(1, std::string("\0\0\x80?\0\0\0@", 8)));  // 1, 2
  const std::string unpacked_floats =
      Field(2, std::string("\x0d\0\0\x80?\x0d\0\0\0@", 10));  // two fixed32 fields
  const std::string unpacked_ints = Field(3, std::string("\x08\x05\x08\x07", 4));  // 5, 7
  const std::string two_kinds = Field(1, Field(1, "a")) + Field(3, Field(1, "\x01"));
  const std::vector<std::string> records = {
      Field(1, Entry("k0", floats) + Entry("k0", unpacked_ints)),             // a key twice
      Field(1, Entry("k1", unpacked_floats)),                                 // unpacked floats
      Field(1, Entry("k2", unpacked_ints)),                                   // unpacked int64s
      Field(1, Entry("k0", floats)) + Field(1, Entry("k1", floats)),          // features twice
      Field(1, Entry("k3", two_kinds)),                                       // two kinds, merged
      Field(1, Entry("k\xc3\xa9", floats) + Entry("k0", floats)),             // a non-ASCII key
      Field(1, Entry("k\xff", floats)),                                       // invalid UTF-8
      Field(1, Entry("k0", floats)) + std::string("\x10\x01", 2),             // an unknown field
      Field(1, Field(2, floats) + Field(1, "k0")),                            // value before key
      Field(1, Entry("k0", Field(2, Field(1, std::string("\0\0\x80", 3))))),  // 3 float bytes
  };
  ExampleParser parser(kKeys);
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE("record " + std::to_string(i));
    ExpectAgree(parser, kKeys, records[i]);
  }
  EXPECT_EQ(parser.fallbacks(), static_cast<int64_t>(records.size()));
  // The duplicated key's last value wins, as the message parser merges maps.
  auto got = ByWire(parser, records[0]);
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE((*got)[0].has_value());
  EXPECT_EQ((*got)[0]->dtype(), DT_INT64);
}

TEST(ExampleWireTest, MutatedRecordsGetTheMessageParsersVerdict) {
  std::mt19937_64 rng(7);
  ExampleParser parser(kKeys);
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string record = RandomExample(rng).SerializeAsString();
    if (record.empty()) continue;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !record.empty(); ++e) {
      switch (rng() % 3) {
        case 0:
          record[rng() % record.size()] = static_cast<char>(rng());
          break;
        case 1:
          record.resize(rng() % record.size());
          break;
        default:
          record.insert(rng() % (record.size() + 1), 1, static_cast<char>(rng()));
      }
    }
    ExpectAgree(parser, kKeys, record);
    if (!ByMessage(record, kKeys)) ++refused;
  }
  EXPECT_GT(refused, 100);  // the mutations reach the refusals, not only benign bytes
}

}  // namespace
}  // namespace tw::example_wire
