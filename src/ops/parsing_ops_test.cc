// Tests of the parsing ops (parsing_ops.cc): Examples encoded by hand from the published
// field numbers (independent of the generated classes), dense, sequence and sparse
// features, TensorFlow's error messages, DecodeRaw, StringToNumber and DecodeCSV.
#include "tensorweave/ops/parsing_ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ops/array_test_util.h"
#include "tensorweave/protobuf/example.pb.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::I64;
using testing::Strings;
using testing::Vec;

// ---- The wire format of feature.proto and example.proto, written out by hand ----

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Field(int number, const std::string& bytes) {  // length-delimited
  return Varint(static_cast<uint64_t>(number) << 3 | 2) + Varint(bytes.size()) + bytes;
}
// Feature: bytes_list = 1, float_list = 2, int64_list = 3; each list's values are field 1,
// numbers packed.
std::string Int64Feature(const std::vector<int64_t>& values) {
  std::string packed;
  for (int64_t v : values) packed += Varint(static_cast<uint64_t>(v));
  return Field(3, Field(1, packed));
}
std::string FloatFeature(const std::vector<float>& values) {
  std::string packed(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  return Field(2, Field(1, packed));
}
std::string BytesFeature(const std::vector<std::string>& values) {
  std::string list;
  for (const auto& v : values) list += Field(1, v);
  return Field(1, list);
}
// Example { Features features = 1 }, Features { map<string, Feature> feature = 1 }: each
// map entry is a message with key = 1, value = 2.
std::string Example(const std::vector<std::pair<std::string, std::string>>& features) {
  std::string map;
  for (const auto& [key, feature] : features) map += Field(1, Field(1, key) + Field(2, feature));
  return Field(1, map);
}

std::string Message(const Status& s) { return std::string(s.message()); }
std::string ShapeOf(const Scope& scope, const Output& o) {
  std::optional<TensorShape> s = scope.InferredShape(o);
  return s ? s->DebugString() : "?";
}

class ParseExampleTest : public ::testing::Test {
 protected:
  StatusOr<std::vector<Tensor>> Parse(const std::vector<std::string>& records,
                                      const std::vector<ops::VarLenFeature>& sparse,
                                      const std::vector<ops::FixedLenFeature>& dense) {
    Scope root = Scope::NewRootScope();
    auto parsed = ops::ParseExample(root, Vec<std::string>(records), sparse, dense);
    std::vector<Output> fetches;
    for (const auto& s : parsed.sparse) {
      fetches.insert(fetches.end(), {s.indices, s.values, s.dense_shape});
    }
    fetches.insert(fetches.end(), parsed.dense.begin(), parsed.dense.end());
    ClientSession session(root);
    return session.Run({}, fetches);
  }
};

TEST_F(ParseExampleTest, HandEncodedExamplesMatchTheGeneratedClasses) {
  proto::Example e;
  auto& map = *e.mutable_features()->mutable_feature();
  map["label"].mutable_int64_list()->add_value(7);
  map["pixels"].mutable_bytes_list()->add_value("abc");
  proto::Example parsed;
  ASSERT_TRUE(parsed.ParseFromString(
      Example({{"label", Int64Feature({7})}, {"pixels", BytesFeature({"abc"})}})));
  EXPECT_EQ(parsed.features().feature().at("label").int64_list().value(0), 7);
  EXPECT_EQ(parsed.features().feature().at("pixels").bytes_list().value(0), "abc");
  // And the generated classes write what the hand encoder reads back the same.
  proto::Example again;
  ASSERT_TRUE(again.ParseFromString(e.SerializeAsString()));
  EXPECT_EQ(again.features().feature().at("label").int64_list().value(0), 7);
}

TEST_F(ParseExampleTest, DenseFeaturesOfEveryTypeWithDefaults) {
  const std::vector<std::string> records = {
      Example({{"label", Int64Feature({3})},
               {"xy", FloatFeature({1.5f, -2})},
               {"name", BytesFeature({"shirt"})}}),
      Example({{"xy", FloatFeature({0, 4})}}),  // label and name from their defaults
  };
  auto out = Parse(records, {},
                   {{"label", DT_INT64, {}, Tensor::Scalar<int64_t>(-1)},
                    {"xy", DT_FLOAT, {2}, std::nullopt},
                    {"name", DT_STRING, {1}, Vec<std::string>({"none"})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], I64({3, -1}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({1.5f, -2, 0, 4}, TensorShape({2, 2})));
  EXPECT_EQ((*out)[2], Tensor::FromVector<std::string>({"shirt", "none"}, TensorShape({2, 1})));
}

TEST_F(ParseExampleTest, SequenceFeaturesArePaddedToTheLongest) {
  const std::vector<std::string> records = {
      Example({{"steps", Int64Feature({1, 2, 3, 4})}}),
      Example({{"steps", Int64Feature({5, 6})}}),
      Example({}),
  };
  auto out = Parse(records, {}, {{"steps", DT_INT64, {-1, 2}, Tensor::Scalar<int64_t>(0)}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0},
                                                   TensorShape({3, 2, 2})));
}

TEST_F(ParseExampleTest, VarLenFeaturesAreSparse) {
  const std::vector<std::string> records = {
      Example({{"tags", BytesFeature({"a", "b"})}}),
      Example({}),
      Example({{"tags", BytesFeature({"c", "d", "e"})}}),
  };
  auto out = Parse(records, {{"tags", DT_STRING}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0],
            Tensor::FromVector<int64_t>({0, 0, 0, 1, 2, 0, 2, 1, 2, 2}, TensorShape({5, 2})));
  EXPECT_EQ((*out)[1], Vec<std::string>({"a", "b", "c", "d", "e"}));
  EXPECT_EQ((*out)[2], I64({3, 3}));
}

TEST_F(ParseExampleTest, ErrorsAreTensorFlows) {
  const std::string record = Example({{"x", Int64Feature({1, 2})}});
  auto missing = Parse({record}, {}, {{"y", DT_FLOAT, {}, std::nullopt}});
  EXPECT_TRUE(IsInvalidArgument(missing.status())) << missing.status();
  EXPECT_THAT(Message(missing.status()),
              HasSubstr("Feature: y is required but could not be found."));

  auto type = Parse({record}, {}, {{"x", DT_FLOAT, {2}, std::nullopt}});
  EXPECT_THAT(Message(type.status()),
              HasSubstr("Data types don't match. Data type: int64 but expected type: float"));

  auto size = Parse({record}, {}, {{"x", DT_INT64, {3}, std::nullopt}});
  EXPECT_THAT(Message(size.status()), HasSubstr("Number of int64 values != expected."));
  EXPECT_THAT(Message(size.status()), HasSubstr("Values size: 2 but output shape: [3]"));

  auto garbage = Parse({"\xff\xff\xff"}, {}, {{"x", DT_INT64, {2}, std::nullopt}});
  EXPECT_THAT(Message(garbage.status()), HasSubstr("Could not parse example input"));

  auto stride = Parse({record}, {}, {{"x", DT_INT64, {-1, 3}, Tensor::Scalar<int64_t>(0)}});
  EXPECT_THAT(Message(stride.status()), HasSubstr("not a multiple of stride"));
}

TEST_F(ParseExampleTest, StaticShapesAreTheFeaturesShapes) {
  Scope root = Scope::NewRootScope();
  auto parsed = ops::ParseExample(root, Vec<std::string>({"", ""}), {{"tags", DT_STRING}},
                                  {{"image", DT_FLOAT, {28, 28, 1}, std::nullopt},
                                   {"steps", DT_INT64, {-1, 3}, Tensor::Scalar<int64_t>(0)}});
  ASSERT_TRUE(root.status().ok()) << root.status();
  EXPECT_EQ(ShapeOf(root, (parsed.dense[0])), "[2,28,28,1]");
  EXPECT_EQ(ShapeOf(root, (parsed.dense[1])), "[2,?,3]");
  EXPECT_EQ(ShapeOf(root, (parsed.sparse[0].indices)), "[?,2]");
  auto raw = ops::DecodeRaw(root, Vec<std::string>({"ab"}), DT_UINT8);
  EXPECT_EQ(ShapeOf(root, (raw)), "[1,?]");
}

// ---- DecodeRaw, StringToNumber, DecodeCSV ----

TEST(DecodeRawTest, BytesBecomeNumbersInEitherByteOrder) {
  Scope root = Scope::NewRootScope();
  const std::string one_two("\x01\x00\x02\x00", 4);
  auto le = ops::DecodeRaw(root, Vec<std::string>({one_two, one_two}), DT_INT16);
  auto be = ops::DecodeRaw(root, Tensor::Scalar(one_two), DT_INT16, /*little_endian=*/false);
  auto u8 = ops::DecodeRaw(root, Tensor::Scalar(one_two), DT_UINT8);
  ClientSession s(root);
  auto out = s.Run({}, {le, be, u8});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int16_t>({1, 2, 1, 2}, TensorShape({2, 2})));
  EXPECT_EQ((*out)[1], Vec<int16_t>({256, 512}));
  EXPECT_EQ((*out)[2], Vec<uint8_t>({1, 0, 2, 0}));

  auto odd = s.Run({}, {ops::DecodeRaw(root, Tensor::Scalar(std::string("abcde")), DT_FLOAT)});
  EXPECT_THAT(Message(odd.status()),
              HasSubstr("Input to DecodeRaw has length 5 that is not a multiple of 4"));
  auto ragged = s.Run({}, {ops::DecodeRaw(root, Vec<std::string>({"ab", "abc"}), DT_UINT8)});
  EXPECT_THAT(Message(ragged.status()), HasSubstr("element 1 has size 3 != 2"));
}

TEST(StringToNumberTest, ConvertsOrNamesTheString) {
  Scope root = Scope::NewRootScope();
  auto f = ops::StringToNumber(root, Vec<std::string>({"1.5", " -2e3", "inf"}));
  auto i = ops::StringToNumber(root, Vec<std::string>({"42", "+7", "-9"}), DT_INT64);
  auto bad = ops::StringToNumber(root, Vec<std::string>({"12a"}), DT_INT32);
  ClientSession s(root);
  auto out = s.Run({}, {f, i});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[0], 1.5f);
  EXPECT_EQ((*out)[0].flat<float>()[1], -2000.f);
  EXPECT_TRUE(std::isinf((*out)[0].flat<float>()[2]));
  EXPECT_EQ((*out)[1], I64({42, 7, -9}));
  auto err = s.Run({}, {bad});
  EXPECT_THAT(Message(err.status()),
              HasSubstr("StringToNumberOp could not correctly convert string: 12a"));
}

TEST(DecodeCSVTest, ColumnsQuotesDefaultsAndSelection) {
  Scope root = Scope::NewRootScope();
  auto lines = Vec<std::string>({"1,\"a,\"\"b\"\"\",2.5", ",x,", "3,,NA"});
  auto cols = ops::DecodeCSV(
      root, lines,
      {Tensor::Scalar<int32_t>(-1), Tensor::Scalar(std::string("?")), Tensor::Scalar(0.5f)},
      {.na_value = "NA"});
  auto picked = ops::DecodeCSV(root, Vec<std::string>({"a;b;c"}),
                               {Tensor::Scalar(std::string()), Tensor::Scalar(std::string())},
                               {.field_delim = ';', .select_cols = {0, 2}});
  ClientSession s(root);
  auto out = s.Run({}, {cols[0], cols[1], cols[2], picked[0], picked[1]});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Vec<int32_t>({1, -1, 3}));
  EXPECT_EQ((*out)[1], Vec<std::string>({"a,\"b\"", "x", "?"}));
  EXPECT_EQ((*out)[2], Vec<float>({2.5f, 0.5f, 0.5f}));
  EXPECT_EQ((*out)[3], Vec<std::string>({"a"}));
  EXPECT_EQ((*out)[4], Vec<std::string>({"c"}));
}

TEST(DecodeCSVTest, ErrorsNameTheFieldAndRecord) {
  Scope root = Scope::NewRootScope();
  const std::vector<Tensor> required = {Tensor(DT_INT64, TensorShape({0})),
                                        Tensor::Scalar<int64_t>(0)};
  auto count = ops::DecodeCSV(root, Vec<std::string>({"1,2", "1"}), required);
  auto missing = ops::DecodeCSV(root, Vec<std::string>({",2"}), required);
  auto number = ops::DecodeCSV(root, Vec<std::string>({"1,x"}), required);
  ClientSession s(root);
  EXPECT_THAT(Message(s.Run({}, {count[0]}).status()),
              HasSubstr("Expect 2 fields but have 1 in record 1"));
  EXPECT_THAT(Message(s.Run({}, {missing[0]}).status()),
              HasSubstr("Field 0 is required but missing in record 0!"));
  EXPECT_THAT(Message(s.Run({}, {number[0]}).status()),
              HasSubstr("Field 1 in record 0 is not a valid int64: x"));
}

TEST(SparseToDenseTest, PlacesValuesOverTheDefault) {
  Scope root = Scope::NewRootScope();
  auto indices = Tensor::FromVector<int64_t>({0, 1, 2, 0}, TensorShape({2, 2}));
  auto dense = root.AddNodeOutput("SparseToDense", {{indices},
                                                    {I64({3, 2})},
                                                    {Vec<std::string>({"a", "b"})},
                                                    {Tensor::Scalar(std::string("-"))}});
  auto bad = root.AddNodeOutput("SparseToDense",
                                {{Tensor::FromVector<int64_t>({2, 0, 0, 1}, TensorShape({2, 2}))},
                                 {I64({3, 2})},
                                 {Vec<float>({1, 2})},
                                 {Tensor::Scalar(0.f)}});
  auto outside = root.AddNodeOutput("SparseToDense",
                                    {{Tensor::FromVector<int64_t>({0, 2}, TensorShape({1, 2}))},
                                     {I64({3, 2})},
                                     {Vec<float>({1})},
                                     {Tensor::Scalar(0.f)}});
  ASSERT_TRUE(root.status().ok()) << root.status();
  EXPECT_EQ(ShapeOf(root, dense), "[3,2]");
  ClientSession s(root);
  auto out = s.Run({}, {dense});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0],
            Tensor::FromVector<std::string>({"-", "a", "-", "-", "b", "-"}, TensorShape({3, 2})));
  EXPECT_THAT(Message(s.Run({}, {bad}).status()), HasSubstr("indices[1] = [0,1] is out of order"));
  EXPECT_THAT(Message(s.Run({}, {outside}).status()),
              HasSubstr("indices[0] = [0,2] is out of bounds: need 0 <= index < [3,2]"));
}

}  // namespace
}  // namespace tw
