#include "src/base/json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

TEST(JsonTest, ParsesValidJson) {
  auto v = ParseJsonStrict(R"({"a": [1, "x"], "b": {"c": null}})", "input");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)["a"][1], "x");
  EXPECT_TRUE((*v)["b"]["c"].is_null());
}

TEST(JsonTest, SyntaxErrorNamesInputAndPosition) {
  auto v = ParseJsonStrict("{\"a\": [1, 2}", "TF_CONFIG");
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(IsInvalidArgument(v.status()));
  EXPECT_THAT(v.status().message(), HasSubstr("TF_CONFIG is not valid JSON"));
  EXPECT_THAT(v.status().message(), HasSubstr("line 1, column 12"));
}

TEST(JsonTest, DuplicateKeysAreRejectedWithTheirPlace) {
  auto top = ParseJsonStrict(R"({"task": {}, "task": {}})", "TF_CONFIG");
  ASSERT_FALSE(top.ok());
  EXPECT_THAT(top.status().message(), HasSubstr("duplicate key \"task\" at the top level"));
  auto nested = ParseJsonStrict(R"({"cluster": {"ps": [], "ps": []}})", "TF_CONFIG");
  ASSERT_FALSE(nested.ok());
  EXPECT_THAT(nested.status().message(), HasSubstr("duplicate key \"ps\" in \"cluster\""));
  // The same key in sibling objects is fine.
  EXPECT_TRUE(ParseJsonStrict(R"({"a": {"x": 1}, "b": {"x": 2}})", "in").ok());
}

TEST(JsonTest, EmptyAndTrailingGarbageAreErrors) {
  EXPECT_FALSE(ParseJsonStrict("", "in").ok());
  EXPECT_FALSE(ParseJsonStrict("{} x", "in").ok());
  EXPECT_FALSE(ParseJsonStrict("{'a': 1}", "in").ok());
}

TEST(JsonTest, DumpNeverThrowsOnInvalidUtf8) {
  nlohmann::json v = std::string("bad \xff byte");
  EXPECT_THAT(DumpJson(v), HasSubstr("bad"));
  EXPECT_EQ(JsonTypeName(nlohmann::json::array()), "array");
  EXPECT_EQ(JsonTypeName(nlohmann::json(3)), "number");
}

}  // namespace
}  // namespace tw
