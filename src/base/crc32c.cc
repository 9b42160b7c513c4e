#include "src/base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tw::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = MakeTable();

#if defined(__x86_64__)
// Compiled for SSE4.2 on its own (the rest of the build targets baseline x86-64) and only
// called after the run-time check below.
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t init_crc, const char* data,
                                                       size_t n) {
  uint64_t crc = init_crc ^ 0xffffffffu;
  const char* p = data;
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --n, ++p) {
    crc = _mm_crc32_u8(static_cast<uint32_t>(crc), static_cast<uint8_t>(*p));
  }
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc = _mm_crc32_u64(crc, word);
  }
  for (; n > 0; --n, ++p) {
    crc = _mm_crc32_u8(static_cast<uint32_t>(crc), static_cast<uint8_t>(*p));
  }
  return static_cast<uint32_t>(crc) ^ 0xffffffffu;
}

bool CpuHasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

namespace internal {

uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n) {
  uint32_t crc = init_crc ^ 0xffffffffu;
  const auto* p = reinterpret_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

bool HardwareAccelerated() {
#if defined(__x86_64__)
  return CpuHasSse42();
#else
  return false;
#endif
}

}  // namespace internal

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
#if defined(__x86_64__)
  if (CpuHasSse42()) return ExtendSse42(init_crc, data, n);
#endif
  return internal::ExtendPortable(init_crc, data, n);
}

}  // namespace tw::crc32c
