#include "src/base/request_text.h"

#include "gtest/gtest.h"

namespace tw {
namespace {

TEST(RequestTextTest, ShortTextIsQuotedWhole) {
  EXPECT_EQ(QuoteRequestText("00ab12cd"), "00ab12cd");
  EXPECT_EQ(QuoteRequestText(""), "");
  EXPECT_EQ(QuoteRequestText(std::string(kMaxQuotedRequestBytes, 'h')),
            std::string(kMaxQuotedRequestBytes, 'h'));
}

TEST(RequestTextTest, LongTextIsCutToABoundedPrefix) {
  const std::string handle(1 << 20, 'h');
  const std::string quoted = QuoteRequestText(handle);
  EXPECT_EQ(quoted, std::string(kMaxQuotedRequestBytes, 'h') + "... (1048576 bytes)");
  EXPECT_EQ(QuoteRequestText(std::string(kMaxQuotedRequestBytes + 1, 'x')),
            std::string(kMaxQuotedRequestBytes, 'x') + "... (129 bytes)");
}

TEST(RequestTextTest, UnprintableBytesAreEscaped) {
  EXPECT_EQ(QuoteRequestText(std::string("a\xff\n\"b", 5)), "a\\xff\\n\\\"b");
  // A cut inside a two-byte UTF-8 character leaves no stray byte in the message.
  std::string accents;
  for (size_t i = 0; i < kMaxQuotedRequestBytes; ++i) accents += "\xc3\xa9";
  for (char c : QuoteRequestText(accents)) EXPECT_LT(static_cast<unsigned char>(c), 0x80);
}

}  // namespace
}  // namespace tw
