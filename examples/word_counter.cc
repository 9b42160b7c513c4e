#include "examples/word_counter.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tw::examples {
namespace {

enum ByteClass : unsigned char { kNeutral = 0, kSeparator = 1, kWordByte = 2 };

constexpr std::array<unsigned char, 256> MakeClassTable() {
  std::array<unsigned char, 256> table{};
  for (int b = 0; b < 256; ++b) {
    if (b == ' ' || (b >= '\t' && b <= '\r')) {
      table[b] = kSeparator;
    } else if (b > ' ' && b < 0x7f) {
      table[b] = kWordByte;
    } else {
      table[b] = kNeutral;
    }
  }
  return table;
}
constexpr std::array<unsigned char, 256> kClass = MakeClassTable();

#if defined(__SSE2__)
constexpr size_t kBlock = 64;

// Bit i of *word / *separator is set when byte i of the 64 bytes at p is a word byte / a
// separator. Signed compares: bytes 0x80-0xff are negative, so they land in neither set.
inline void Classify64(const unsigned char* p, uint64_t* word, uint64_t* separator) {
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i del = _mm_set1_epi8(0x7f);
  const __m128i below_tab = _mm_set1_epi8(0x08);
  const __m128i above_cr = _mm_set1_epi8(0x0e);
  uint64_t w = 0, s = 0;
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i is_word = _mm_and_si128(_mm_cmpgt_epi8(v, space), _mm_cmplt_epi8(v, del));
    const __m128i is_sep =
        _mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(v, below_tab), _mm_cmplt_epi8(v, above_cr)),
                     _mm_cmpeq_epi8(v, space));
    w |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(is_word))) << (16 * k);
    s |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(is_sep))) << (16 * k);
  }
  *word = w;
  *separator = s;
}
#endif

Status CannotRead(const std::string& path, int error) {
  const std::string message =
      "cannot read " + path + ": " + std::error_code(error, std::generic_category()).message();
  switch (error) {
    case ENOENT:
      return errors::NotFound(message);
    case EACCES:
      return errors::PermissionDenied(message);
    default:
      return errors::FailedPrecondition(message);
  }
}

}  // namespace

void WordCounter::AddScalar(const unsigned char* p, size_t size) {
  int64_t words = words_;
  bool in_word = in_word_;
  for (size_t i = 0; i < size; ++i) {
    switch (kClass[p[i]]) {
      case kSeparator:
        in_word = false;
        break;
      case kWordByte:
        words += in_word ? 0 : 1;
        in_word = true;
        break;
      default:  // neutral: the state is kept
        break;
    }
  }
  words_ = words;
  in_word_ = in_word;
}

void WordCounter::Add(const char* data, size_t size) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
#if defined(__SSE2__)
  // Text is mostly word bytes and separators. In a block without neutral bytes a word
  // starts at every word byte whose predecessor is a separator (or, for the first byte,
  // when the previous block did not end inside a word): one shift, one popcount.
  // Blocks with a neutral byte (UTF-8, control bytes) take the scalar path.
  uint64_t carry = in_word_ ? 1 : 0;
  int64_t words = words_;
  size_t i = 0;
  for (; i + kBlock <= size; i += kBlock) {
    uint64_t word, separator;
    Classify64(p + i, &word, &separator);
    if ((word | separator) == ~uint64_t{0}) {
      words += std::popcount(word & ~((word << 1) | carry));
      carry = word >> 63;
    } else {
      words_ = words;
      in_word_ = carry != 0;
      AddScalar(p + i, kBlock);
      words = words_;
      carry = in_word_ ? 1 : 0;
    }
  }
  words_ = words;
  in_word_ = carry != 0;
  AddScalar(p + i, size - i);
#else
  AddScalar(p, size);
#endif
}

int64_t CountWords(const char* data, size_t size) {
  WordCounter counter;
  counter.Add(data, size);
  return counter.words();
}

FileWordCounter::FileWordCounter(size_t buffer_size)
    : buffer_size_(buffer_size == 0 ? 1 : buffer_size), buffer_(new char[buffer_size_]) {}

StatusOr<FileCount> FileWordCounter::Count(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CannotRead(path, errno);
  WordCounter counter;
  FileCount result;
  // Read to end of file like wc, rather than trusting the size fstat gives.
  while (true) {
    const ssize_t n = read(fd, buffer_.get(), buffer_size_);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      return CannotRead(path, error);
    }
    if (n == 0) break;
    counter.Add(buffer_.get(), static_cast<size_t>(n));
    result.bytes += n;
  }
  close(fd);
  result.words = counter.words();
  return result;
}

}  // namespace tw::examples
