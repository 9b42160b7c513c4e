// OrderedCode's encodings against the values TensorFlow's ordered_code_test expects.
#include "src/checkpoint/ordered_code.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tw::checkpoint {
namespace {

std::string Signed(int64_t n) {
  std::string out;
  AppendOrderedSignedNumIncreasing(n, &out);
  return out;
}

TEST(OrderedCodeTest, SignedNumbersAsTensorFlowEncodesThem) {
  const std::vector<std::pair<int64_t, std::string>> expected = {
      {0, "\x80"},
      {1, "\x81"},
      {63, "\xbf"},
      {64, std::string("\xc0@", 2)},
      {256, std::string("\xc1\x00", 2)},
      {1048576, std::string("\xf0\x10\x00\x00", 4)},
      {4294967296, std::string("\xf9\x00\x00\x00\x00", 5)},
      {36028797018963968, std::string("\xff\x80\x80\x00\x00\x00\x00\x00\x00", 9)},
      {9223372036854775807, std::string("\xff\xc0\x7f\xff\xff\xff\xff\xff\xff\xff", 10)},
      {-1, "\x7f"},
      {-64, "@"},
      {-65, std::string("?\xbf", 2)},
      {-256, std::string("?\x00", 2)},
      {-8193, std::string("\x1f\xdf\xff", 3)},
      {-9223372036854775807, std::string("\x00?\x80\x00\x00\x00\x00\x00\x00\x01", 10)},
  };
  for (const auto& [n, bytes] : expected) EXPECT_EQ(Signed(n), bytes) << n;
}

TEST(OrderedCodeTest, UnsignedNumbersAndStrings) {
  std::string out;
  AppendOrderedNumIncreasing(0, &out);
  EXPECT_EQ(out, std::string("\x00", 1));
  out.clear();
  AppendOrderedNumIncreasing(0x8000000000000001ull, &out);
  EXPECT_EQ(out, std::string("\x08\x80\x00\x00\x00\x00\x00\x00\x01", 9));
  out.clear();
  AppendOrderedString(std::string("a\x00\xff", 3), &out);
  EXPECT_EQ(out, std::string("a\x00\xff\xff\x00\x00\x01", 7));
}

TEST(OrderedCodeTest, SliceKeysBeginWithZeroAndSortBeforeNames) {
  const std::string key = EncodeSliceKey("emb", {{4, 3}, {0, -1}});
  EXPECT_EQ(key, std::string("\x00"
                             "emb\x00\x01"
                             "\x01\x02"
                             "\x84\x83\x80\x7f",
                             12));
  EXPECT_LT(key, std::string("a"));
}

}  // namespace
}  // namespace tw::checkpoint
