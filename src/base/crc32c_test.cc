#include "src/base/crc32c.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tw::crc32c {
namespace {

uint32_t Of(const std::string& s) { return Value(s.data(), s.size()); }

TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(Of(""), 0u);
  EXPECT_EQ(Of("123456789"), 0xE3069283u);
  EXPECT_EQ(Of("a"), 0xC1D04330u);
}

// RFC 3720, appendix B.4.
TEST(Crc32cTest, Rfc3720Vectors) {
  EXPECT_EQ(Of(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Of(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Of(ascending), 0x46DD794Eu);
  EXPECT_EQ(Of(descending), 0x113FDB5Cu);
  const unsigned char iscsi_read[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
                                        0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(Value(reinterpret_cast<const char*>(iscsi_read), sizeof(iscsi_read)), 0xD9963A56u);
}

TEST(Crc32cTest, ExtendEqualsWholeAtEverySplit) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  const uint32_t whole = Of(data);
  for (size_t split = 0; split <= data.size(); split += 37) {
    uint32_t crc = Value(data.data(), split);
    crc = Extend(crc, data.data() + split, data.size() - split);
    EXPECT_EQ(crc, whole) << "split at " << split;
  }
}

TEST(Crc32cTest, HardwareAndPortableAgreeOnEveryAlignmentAndLength) {
  std::vector<char> buf(300);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 131 + 17);
  for (size_t start = 0; start < 9; ++start) {
    for (size_t n = 0; start + n <= buf.size(); n += 13) {
      EXPECT_EQ(Value(buf.data() + start, n), internal::ExtendPortable(0, buf.data() + start, n))
          << "start " << start << " length " << n;
    }
  }
}

TEST(Crc32cTest, MaskIsReversibleAndChangesTheValue) {
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu}) {
    EXPECT_NE(Mask(crc), crc);
    EXPECT_NE(Mask(Mask(crc)), Mask(crc));
    EXPECT_EQ(Unmask(Mask(crc)), crc);
    EXPECT_EQ(Unmask(Unmask(Mask(Mask(crc)))), crc);
  }
}

}  // namespace
}  // namespace tw::crc32c
