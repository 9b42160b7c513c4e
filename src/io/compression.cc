#include "src/io/compression.h"

#include <zlib.h>

#include <limits>

namespace tw::io {
namespace {

// zlib's windowBits: 15 is the 32 KiB window TensorFlow uses; +16 asks for a gzip header
// and trailer instead of zlib's.
int WindowBits(Compression compression) { return compression == Compression::kGzip ? 31 : 15; }

std::string ZlibMessage(const z_stream& z, int code) {
  return z.msg != nullptr ? std::string(z.msg) : "zlib error " + std::to_string(code);
}

// zlib counts in uInt: larger pieces are fed in slices.
constexpr size_t kMaxPiece = std::numeric_limits<uInt>::max() / 2;

}  // namespace

StatusOr<Compression> ParseCompression(std::string_view name) {
  if (name.empty() || name == "NONE") return Compression::kNone;
  if (name == "ZLIB") return Compression::kZlib;
  if (name == "GZIP") return Compression::kGzip;
  return errors::InvalidArgument("compression_type must be \"\", \"ZLIB\" or \"GZIP\", got \"",
                                 std::string(name), "\"");
}

std::string CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kZlib:
      return "ZLIB";
    case Compression::kGzip:
      return "GZIP";
    case Compression::kNone:
      break;
  }
  return "";
}

struct Deflater::Stream {
  z_stream z{};
};

Deflater::Deflater(std::unique_ptr<Stream> stream) : stream_(std::move(stream)) {}
Deflater::~Deflater() { deflateEnd(&stream_->z); }

StatusOr<std::unique_ptr<Deflater>> Deflater::Create(Compression compression) {
  auto stream = std::make_unique<Stream>();
  const int code = deflateInit2(&stream->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
                                WindowBits(compression), 8, Z_DEFAULT_STRATEGY);
  if (code != Z_OK) {
    return errors::Internal("cannot start ", CompressionName(compression),
                            " compression: ", ZlibMessage(stream->z, code));
  }
  return std::unique_ptr<Deflater>(new Deflater(std::move(stream)));
}

Status Deflater::Compress(std::string_view in, Mode mode, std::string* out) {
  z_stream& z = stream_->z;
  const int flush = mode == Mode::kFinish      ? Z_FINISH
                    : mode == Mode::kSyncFlush ? Z_SYNC_FLUSH
                                               : Z_NO_FLUSH;
  do {
    const size_t piece = std::min(in.size(), kMaxPiece);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(piece);
    in.remove_prefix(piece);
    const int piece_flush = in.empty() ? flush : Z_NO_FLUSH;
    // Runs until zlib has taken all input and, for a flush, had room left over (its sign
    // that the flush is complete).
    while (true) {
      const size_t before = out->size();
      const size_t room = std::max<size_t>(deflateBound(&z, z.avail_in), 1 << 16);
      out->resize(before + room);
      z.next_out = reinterpret_cast<Bytef*>(out->data() + before);
      z.avail_out = static_cast<uInt>(room);
      const int code = deflate(&z, piece_flush);
      out->resize(before + room - z.avail_out);
      if (code == Z_STREAM_END) break;
      if (code != Z_OK && code != Z_BUF_ERROR) {
        return errors::Internal("compression failed: ", ZlibMessage(z, code));
      }
      if (z.avail_in == 0 && z.avail_out != 0) break;
    }
  } while (!in.empty());
  return OkStatus();
}

struct Inflater::Stream {
  z_stream z{};
  Compression compression;
};

Inflater::Inflater(std::unique_ptr<Stream> stream) : stream_(std::move(stream)) {}
Inflater::~Inflater() { inflateEnd(&stream_->z); }

StatusOr<std::unique_ptr<Inflater>> Inflater::Create(Compression compression) {
  auto stream = std::make_unique<Stream>();
  stream->compression = compression;
  const int code = inflateInit2(&stream->z, WindowBits(compression));
  if (code != Z_OK) {
    return errors::Internal("cannot start ", CompressionName(compression),
                            " decompression: ", ZlibMessage(stream->z, code));
  }
  return std::unique_ptr<Inflater>(new Inflater(std::move(stream)));
}

StatusOr<size_t> Inflater::Decompress(std::string_view* in, char* out, size_t capacity) {
  if (finished_ || capacity == 0) return size_t{0};
  z_stream& z = stream_->z;
  const size_t piece = std::min(in->size(), kMaxPiece);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in->data()));
  z.avail_in = static_cast<uInt>(piece);
  z.next_out = reinterpret_cast<Bytef*>(out);
  z.avail_out = static_cast<uInt>(std::min(capacity, kMaxPiece));
  const uInt out_before = z.avail_out;
  const int code = inflate(&z, Z_NO_FLUSH);
  in->remove_prefix(piece - z.avail_in);
  const size_t produced = out_before - z.avail_out;
  if (code == Z_STREAM_END) {
    finished_ = true;
  } else if (code != Z_OK && !(code == Z_BUF_ERROR && produced == 0)) {
    return errors::DataLoss("not a valid ", CompressionName(stream_->compression),
                            " stream: ", ZlibMessage(z, code));
  }
  return produced;
}

}  // namespace tw::io
