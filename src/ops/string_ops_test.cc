// Tests of the string ops (string_ops.cc): StringSplit's tokens, empty delimiters and
// skip_empty, Substr in bytes and UTF-8 characters with negative positions and TF's range
// errors, StringJoin with scalars, and the shape errors.
#include "tensorweave/ops/string_ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Strings(const std::vector<std::string>& v) { return Tensor::FromVector<std::string>(v); }

std::vector<std::string> AsStrings(const Tensor& t) {
  return {t.flat<std::string>().data(), t.flat<std::string>().data() + t.num_elements()};
}
std::vector<int64_t> AsInts(const Tensor& t) {
  return {t.flat<int64_t>().data(), t.flat<int64_t>().data() + t.num_elements()};
}

StatusOr<std::vector<Tensor>> RunGraph(const Scope& root, const std::vector<Output>& fetches) {
  ClientSession session(root);
  return session.Run({}, fetches);
}

TEST(StringSplitTest, TokensAsASparseTensor) {
  Scope root = Scope::NewRootScope();
  auto split = ops::StringSplit(root, Strings({"hello world", "a  b,c", ""}),
                                Tensor::Scalar<std::string>(" ,"));
  auto got = RunGraph(root, {split.indices, split.values, split.dense_shape});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsInts((*got)[0]), ElementsAre(0, 0, 0, 1, 1, 0, 1, 1, 1, 2));
  EXPECT_THAT(AsStrings((*got)[1]), ElementsAre("hello", "world", "a", "b", "c"));
  EXPECT_THAT(AsInts((*got)[2]), ElementsAre(3, 3));
}

TEST(StringSplitTest, KeepsEmptyTokensAndSplitsBytesWithAnEmptyDelimiter) {
  Scope root = Scope::NewRootScope();
  auto kept = ops::StringSplit(root, Strings({"a,,b"}), Tensor::Scalar<std::string>(","),
                               /*skip_empty=*/false);
  auto bytes = ops::StringSplit(root, Strings({"xyz"}), Tensor::Scalar<std::string>(""));
  auto got = RunGraph(root, {kept.values, kept.dense_shape, bytes.values});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsStrings((*got)[0]), ElementsAre("a", "", "b"));
  EXPECT_THAT(AsInts((*got)[1]), ElementsAre(1, 3));
  EXPECT_THAT(AsStrings((*got)[2]), ElementsAre("x", "y", "z"));
}

TEST(StringSplitTest, ShapeErrors) {
  Scope root = Scope::NewRootScope();
  auto matrix = ops::StringSplit(root, Tensor::FromVector<std::string>({"a", "b"}, {1, 2}),
                                 Tensor::Scalar<std::string>(" "));
  auto got = RunGraph(root, {matrix.values});
  EXPECT_TRUE(IsInvalidArgument(got.status())) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("input must be a vector, got shape: [1,2]"));
}

TEST(SubstrTest, BytesWithScalarAndElementwisePositions) {
  Scope root = Scope::NewRootScope();
  Tensor words = Strings({"tensor", "weave"});
  auto scalar = ops::Substr(root, words, Tensor::Scalar<int32_t>(1), Tensor::Scalar<int32_t>(3));
  auto each = ops::Substr(root, words, Tensor::FromVector<int64_t>({0, -2}),
                          Tensor::FromVector<int64_t>({100, 2}));
  auto got = RunGraph(root, {scalar, each});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsStrings((*got)[0]), ElementsAre("ens", "eav"));
  EXPECT_THAT(AsStrings((*got)[1]), ElementsAre("tensor", "ve"));  // len clipped; from the end
}

TEST(SubstrTest, Utf8CharactersCountCharactersNotBytes) {
  Scope root = Scope::NewRootScope();
  auto out = ops::Substr(root, Strings({"h\xc3\xa9llo w\xc3\xb6rld"}), Tensor::Scalar<int32_t>(1),
                         Tensor::Scalar<int32_t>(4), ops::SubstrUnit::kUtf8Char);
  auto got = RunGraph(root, {out});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsStrings((*got)[0]), ElementsAre("\xc3\xa9llo"));
}

TEST(SubstrTest, PositionOutOfRangeNamesTheString) {
  Scope root = Scope::NewRootScope();
  auto past = ops::Substr(root, Strings({"ok", "abc"}), Tensor::FromVector<int32_t>({0, 4}),
                          Tensor::FromVector<int32_t>({1, 1}));
  auto got = RunGraph(root, {past});
  EXPECT_TRUE(IsInvalidArgument(got.status())) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("pos 4 out of range for string b'abc' at index 1"));
  Scope other = Scope::NewRootScope();
  auto mismatched = ops::Substr(other, Strings({"a"}), Tensor::Scalar<int32_t>(0),
                                Tensor::FromVector<int32_t>({1, 1}));
  got = RunGraph(other, {mismatched});
  EXPECT_THAT(got.status().message(), HasSubstr("pos and len should have the same shape"));
}

TEST(StringJoinTest, ElementwiseWithScalarsBroadcast) {
  Scope root = Scope::NewRootScope();
  auto joined = ops::StringJoin(
      root, {Strings({"a", "b"}), Tensor::Scalar<std::string>("x"), Strings({"1", "2"})}, "-");
  auto got = RunGraph(root, {joined});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsStrings((*got)[0]), ElementsAre("a-x-1", "b-x-2"));
  Scope other = Scope::NewRootScope();
  auto bad = ops::StringJoin(other, {Strings({"a", "b"}), Strings({"c"})});
  EXPECT_TRUE(IsInvalidArgument(RunGraph(other, {bad}).status()));
}

// TensorFlow's own expectations (its string_to_hash_bucket_op_test): FarmHash's
// Fingerprint64 of "a".."d" is 12917804110809363939, 11795596070477164822,
// 11430444447143000872 and 4470636696479570465.
TEST(StringToHashBucketFastTest, TensorFlowsBuckets) {
  Scope root = Scope::NewRootScope();
  auto ten = ops::StringToHashBucketFast(root, Strings({"a", "b", "c", "d"}), 10);
  auto one = ops::StringToHashBucketFast(root, Strings({"a", "b", "c"}), 1);
  auto huge = ops::StringToHashBucketFast(root, Strings({"a", "d"}), int64_t{1} << 62);
  auto got = RunGraph(root, {ten, one, huge});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsInts((*got)[0]), ElementsAre(9, 2, 2, 5));
  EXPECT_THAT(AsInts((*got)[1]), ElementsAre(0, 0, 0));
  EXPECT_THAT(AsInts((*got)[2]), ElementsAre(int64_t(12917804110809363939ull % (1ull << 62)),
                                             int64_t(4470636696479570465ull % (1ull << 62))));
}

TEST(StringToHashBucketFastTest, RefusesNoBuckets) {
  Scope root = Scope::NewRootScope();
  auto bad = ops::StringToHashBucketFast(root, Strings({"a"}), 0);
  Status s = root.status().ok() ? RunGraph(root, {bad}).status() : root.status();
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("num_buckets"));
}

TEST(AsStringTest, TensorFlowsFormats) {
  Scope root = Scope::NewRootScope();
  auto ints = ops::AsString(root, Tensor::FromVector<int64_t>({0, -42, 123456789012}));
  auto padded = ops::AsString(root, Tensor::FromVector<int32_t>({7}), {.width = 3, .fill = "0"});
  auto floats = ops::AsString(root, Tensor::FromVector<float>({1.5f}));
  auto short_floats = ops::AsString(root, Tensor::FromVector<double>({0.25}), {.shortest = true});
  auto sci =
      ops::AsString(root, Tensor::FromVector<double>({1500}), {.precision = 2, .scientific = true});
  auto bools = ops::AsString(root, Tensor::FromVector<bool>({true, false}));
  auto got = RunGraph(root, {ints, padded, floats, short_floats, sci, bools});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsStrings((*got)[0]), ElementsAre("0", "-42", "123456789012"));
  EXPECT_THAT(AsStrings((*got)[1]), ElementsAre("007"));
  EXPECT_THAT(AsStrings((*got)[2]), ElementsAre("1.500000"));
  EXPECT_THAT(AsStrings((*got)[3]), ElementsAre("0.25"));
  EXPECT_THAT(AsStrings((*got)[4]), ElementsAre("1.50e+03"));
  EXPECT_THAT(AsStrings((*got)[5]), ElementsAre("true", "false"));
  Scope bad = Scope::NewRootScope();
  auto fill = ops::AsString(bad, Tensor::FromVector<int32_t>({7}), {.width = 3, .fill = "x"});
  Status s = bad.status().ok() ? RunGraph(bad, {fill}).status() : bad.status();
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("Fill argument not supported"));
}

// TensorFlow's sparse_cross_op_test: the hashes it checks "to prevent unintentional
// hashing changes", for the default hash key and the next one, 0 and 100 buckets.
TEST(SparseCrossTest, TensorFlowsHashedCrosses) {
  Scope root = Scope::NewRootScope();
  auto one = [&](const std::string& value) {
    return ops::SparseOutput{ops::Const(root, Tensor::FromVector<int64_t>({0, 0}, {1, 2})),
                             ops::Const(root, Strings({value})),
                             ops::Const(root, Tensor::FromVector<int64_t>({1, 1}))};
  };
  std::vector<ops::SparseOutput> inputs = {one("batch1-FC1-F1"), one("batch1-FC2-F1"),
                                           one("batch1-FC3-F1")};
  auto none = ops::SparseCrossHashed(root, inputs, {}, 0);
  auto key = ops::SparseCrossHashed(root, inputs, {}, 0, ops::kDefaultCrossHashKey + 1);
  auto hundred = ops::SparseCrossHashed(root, inputs, {}, 100);
  auto both = ops::SparseCrossHashed(root, inputs, {}, 100, ops::kDefaultCrossHashKey + 1);
  auto got = RunGraph(
      root, {none.values, key.values, hundred.values, both.values, both.indices, both.dense_shape});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsInts((*got)[0]), ElementsAre(1971693436396284976));
  EXPECT_THAT(AsInts((*got)[1]), ElementsAre(4847552627144134031));
  EXPECT_THAT(AsInts((*got)[2]), ElementsAre(83));
  EXPECT_THAT(AsInts((*got)[3]), ElementsAre(31));
  EXPECT_THAT(AsInts((*got)[4]), ElementsAre(0, 0));
  EXPECT_THAT(AsInts((*got)[5]), ElementsAre(1, 1));
}

// Sparse inputs first, then dense; every combination per example, the last input fastest;
// an example with no value in some input has no cross.
TEST(SparseCrossTest, CombinationsPerExample) {
  Scope root = Scope::NewRootScope();
  // Example 0 has "a"; example 1 has "b" and "c"; example 2 has none.
  ops::SparseOutput sparse{
      ops::Const(root, Tensor::FromVector<int64_t>({0, 0, 1, 0, 1, 1}, {3, 2})),
      ops::Const(root, Strings({"a", "b", "c"})),
      ops::Const(root, Tensor::FromVector<int64_t>({3, 2}))};
  auto dense = ops::Const(root, Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}, {3, 2}));
  auto crossed = ops::SparseCrossHashed(root, {sparse}, {dense}, 1000);
  auto got = RunGraph(root, {crossed.indices, crossed.values, crossed.dense_shape});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(AsInts((*got)[0]), ElementsAre(0, 0, 0, 1, 1, 0, 1, 1, 1, 2, 1, 3));
  EXPECT_THAT(AsInts((*got)[2]), ElementsAre(3, 4));
  std::vector<int64_t> values = AsInts((*got)[1]);
  ASSERT_EQ(values.size(), 6u);
  for (int64_t v : values) EXPECT_TRUE(v >= 0 && v < 1000) << v;
  // ("b", 3) and ("c", 3) differ, as do ("b", 3) and ("b", 4).
  EXPECT_NE(values[2], values[4]);
  EXPECT_NE(values[2], values[3]);

  Scope bad = Scope::NewRootScope();
  auto other = ops::Const(bad, Tensor::FromVector<int64_t>({1, 2}, {2, 1}));
  auto three = ops::Const(bad, Tensor::FromVector<int64_t>({1, 2, 3}, {3, 1}));
  auto mismatch = ops::SparseCrossHashed(bad, {}, {other, three}, 10);
  Status s = RunGraph(bad, {mismatch.values}).status();
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("Expected batch size 2 got 3"));
}

}  // namespace
}  // namespace tw
