#include "src/checkpoint/ordered_code.h"

#include <bit>

namespace tw::checkpoint {
namespace {

// Header bits of the first two bytes of a SignedNumIncreasing encoding of each length: one
// bit per byte of length (ones, then the zero that ends them), spilling into byte two.
constexpr uint8_t kHeaderBits[11][2] = {{0, 0},    {0x80, 0},    {0xc0, 0},   {0xe0, 0},
                                        {0xf0, 0}, {0xf8, 0},    {0xfc, 0},   {0xfe, 0},
                                        {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};

// Bytes of the encoding of a number whose magnitude (n, or ~n when negative) has `bits`
// significant bits: each byte carries 7 bits, less the sign bit.
int SignedLength(int bits) { return bits / 7 + 1; }

}  // namespace

void AppendOrderedNumIncreasing(uint64_t n, std::string* out) {
  char bytes[8];
  int count = 0;
  for (uint64_t v = n; v != 0; v >>= 8) bytes[7 - count++] = static_cast<char>(v & 0xff);
  out->push_back(static_cast<char>(count));
  out->append(bytes + 8 - count, count);
}

void AppendOrderedString(std::string_view s, std::string* out) {
  for (char c : s) {
    out->push_back(c);
    if (c == '\x00') out->push_back('\xff');
    if (c == '\xff') out->push_back('\x00');
  }
  out->append("\x00\x01", 2);
}

void AppendOrderedSignedNumIncreasing(int64_t n, std::string* out) {
  const uint64_t magnitude = static_cast<uint64_t>(n < 0 ? ~n : n);
  const int length = SignedLength(64 - std::countl_zero(magnitude));
  // n big-endian, sign-extended to 10 bytes; its last `length` bytes get the header.
  uint8_t bytes[10];
  for (int i = 0; i < 10; ++i) {
    const int shift = 8 * (9 - i);
    bytes[i] = shift >= 64 ? (n < 0 ? 0xff : 0x00)
                           : static_cast<uint8_t>(static_cast<uint64_t>(n) >> shift);
  }
  uint8_t* first = bytes + 10 - length;
  first[0] ^= kHeaderBits[length][0];
  if (length > 1) first[1] ^= kHeaderBits[length][1];
  out->append(reinterpret_cast<const char*>(first), length);
}

std::string EncodeSliceKey(std::string_view name, const std::vector<SliceExtent>& slice) {
  std::string key;
  AppendOrderedNumIncreasing(0, &key);
  AppendOrderedString(name, &key);
  AppendOrderedNumIncreasing(slice.size(), &key);
  for (const SliceExtent& e : slice) {
    AppendOrderedSignedNumIncreasing(e.start, &key);
    AppendOrderedSignedNumIncreasing(e.length, &key);
  }
  return key;
}

}  // namespace tw::checkpoint
