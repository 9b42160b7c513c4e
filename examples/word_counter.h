// Word counting exactly as `LC_ALL=C wc -w` (GNU coreutils 9.1, Debian 12) counts, for the
// word-count example's map tasks. This is the benchmark's hot path.
//
// coreutils' C-locale rule, byte by byte (verified against the installed wc for all 256
// byte values, see word_counter_test.cc):
//   - separators: ' ', '\t', '\n', '\v', '\f', '\r' end a word;
//   - word bytes: the printable non-space ASCII bytes 0x21-0x7e start or continue one;
//   - every other byte (NUL and the other control bytes, 0x7f, and 0x80-0xff, none of which
//     is printable in the C locale) is neutral: it neither starts nor ends a word.
// So "a\0b" is one word, "\0" alone is none, and "x \x80 y" is two.
#ifndef TENSORWEAVE_EXAMPLES_WORD_COUNTER_H_
#define TENSORWEAVE_EXAMPLES_WORD_COUNTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tensorweave/status.h"

namespace tw::examples {

// Counts words in a stream given in pieces: the state between pieces is whether the last
// byte that was not neutral was a word byte. A value type; thread-compatible.
class WordCounter {
 public:
  // Adds the words that start in `data[0, size)`.
  void Add(const char* data, size_t size);
  int64_t words() const { return words_; }
  void Reset() { *this = WordCounter(); }

 private:
  // Scalar path for a piece that may hold neutral bytes.
  void AddScalar(const unsigned char* p, size_t size);

  int64_t words_ = 0;
  bool in_word_ = false;
};

// The words of `data`, counted in one piece.
int64_t CountWords(const char* data, size_t size);

struct FileCount {
  int64_t words = 0;
  int64_t bytes = 0;
};

// Reads files with one reusable buffer and counts their words. Not thread-safe: one per
// thread.
class FileWordCounter {
 public:
  // `buffer_size` bytes are read at a time (tests use small buffers to cross boundaries).
  explicit FileWordCounter(size_t buffer_size = size_t{1} << 20);

  // The words and bytes of the file at `path`, read as bytes. Errors name the path and the
  // reason the system gave ("cannot read PATH: No such file or directory"): NotFound when
  // it does not exist, PermissionDenied, and FailedPrecondition for other failures of
  // open() or read() (a directory gives "Is a directory").
  StatusOr<FileCount> Count(const std::string& path);

 private:
  size_t buffer_size_;
  std::unique_ptr<char[]> buffer_;
};

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_WORD_COUNTER_H_
