// The compressions of TFRecord files: none, ZLIB (a zlib stream) and GZIP (a gzip stream),
// over Debian's zlib, with TensorFlow's names ("", "ZLIB", "GZIP") and defaults (the
// default level, a 32 KiB window).
//
// Deflater and Inflater are owned by one user; not thread-safe.
#ifndef TENSORWEAVE_SRC_IO_COMPRESSION_H_
#define TENSORWEAVE_SRC_IO_COMPRESSION_H_

#include <memory>
#include <string>
#include <string_view>

#include "tensorweave/status.h"

namespace tw::io {

enum class Compression { kNone, kZlib, kGzip };

// "" or "NONE", "ZLIB", "GZIP" (TensorFlow's compression_type strings); InvalidArgument
// naming the value otherwise.
StatusOr<Compression> ParseCompression(std::string_view name);
std::string CompressionName(Compression compression);

// Compresses a stream given in pieces.
class Deflater {
 public:
  enum class Mode { kNoFlush, kSyncFlush, kFinish };
  // `compression` is kZlib or kGzip. Internal when zlib cannot start (out of memory).
  static StatusOr<std::unique_ptr<Deflater>> Create(Compression compression);
  ~Deflater();
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  // Compresses `in`, appending output to `out`. kSyncFlush ends the output on a byte
  // boundary so everything given so far can be read back; kFinish ends the stream.
  Status Compress(std::string_view in, Mode mode, std::string* out);

 private:
  struct Stream;
  explicit Deflater(std::unique_ptr<Stream> stream);
  std::unique_ptr<Stream> stream_;
};

// Decompresses a stream given in pieces.
class Inflater {
 public:
  static StatusOr<std::unique_ptr<Inflater>> Create(Compression compression);
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Decompresses from `*in` (advancing it past what was consumed) into out[0, capacity);
  // returns the bytes produced. DataLoss when the input is not a valid stream. Once the
  // stream has ended, finished() is true and the rest of the input is left alone.
  StatusOr<size_t> Decompress(std::string_view* in, char* out, size_t capacity);
  bool finished() const { return finished_; }

 private:
  struct Stream;
  explicit Inflater(std::unique_ptr<Stream> stream);
  std::unique_ptr<Stream> stream_;
  bool finished_ = false;
};

}  // namespace tw::io

#endif  // TENSORWEAVE_SRC_IO_COMPRESSION_H_
