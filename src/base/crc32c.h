// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78): the checksum of
// checkpoint files. Same values as RFC 3720 (iSCSI), LevelDB and TensorFlow's crc32c.
//
//   uint32_t crc = crc32c::Value(data, n);
//   crc = crc32c::Extend(crc, more, m);         // == Value(data ++ more)
//   uint32_t stored = crc32c::Mask(crc);        // what goes into a file
//
// Debian 12 ships no C/C++ crc32c library (no libcrc32c-dev; its abseil 20220623 predates
// absl/crc), so this is our own: the SSE4.2 crc32 instruction when the CPU has it (checked
// once at run time, so the binary still runs on CPUs without it), else a byte-wise table.
// Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_BASE_CRC32C_H_
#define TENSORWEAVE_SRC_BASE_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace tw::crc32c {

// The CRC32C of `init_crc`'s data followed by data[0, n). Extend(0, ...) starts afresh.
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// A CRC computed over data that itself contains CRCs is weak (LevelDB's observation), so
// stored CRCs are masked: rotated and offset. Unmask(Mask(c)) == c.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

namespace internal {
// The portable implementation, exposed so tests can compare it with the hardware one.
uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n);
// True when Extend uses the SSE4.2 instruction on this CPU.
bool HardwareAccelerated();
}  // namespace internal

}  // namespace tw::crc32c

#endif  // TENSORWEAVE_SRC_BASE_CRC32C_H_
