#include "src/io/record_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/crc32c.h"
#include "src/base/errno_status.h"
#include "src/io/record_writer.h"

namespace tw::io {
namespace {

uint64_t ReadLittleEndian(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return value;
}

// read(2) until `capacity` bytes or the end of the file.
StatusOr<size_t> ReadSome(int fd, char* out, size_t capacity, const std::string& path) {
  while (true) {
    const ssize_t n = ::read(fd, out, capacity);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "cannot read", path);
    return static_cast<size_t>(n);
  }
}

}  // namespace

RecordReader::RecordReader(std::string path, int fd, RecordReaderOptions options,
                           std::unique_ptr<Inflater> inflater)
    : path_(std::move(path)), fd_(fd), options_(options), inflater_(std::move(inflater)) {
  buffer_.resize(std::max<size_t>(options_.buffer_bytes, kRecordHeaderBytes));
  if (inflater_ != nullptr) raw_.resize(buffer_.size());
}

RecordReader::~RecordReader() { ::close(fd_); }

StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path,
                                                           RecordReaderOptions options) {
  std::unique_ptr<Inflater> inflater;
  if (options.compression != Compression::kNone) {
    TW_ASSIGN_OR_RETURN(inflater, Inflater::Create(options.compression));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  return std::unique_ptr<RecordReader>(new RecordReader(path, fd, options, std::move(inflater)));
}

StatusOr<size_t> RecordReader::Produce(char* out, size_t capacity) {
  if (inflater_ == nullptr) return ReadSome(fd_, out, capacity, path_);
  while (!inflater_->finished()) {
    if (raw_pos_ == raw_end_ && !file_ended_) {
      TW_ASSIGN_OR_RETURN(raw_end_, ReadSome(fd_, raw_.data(), raw_.size(), path_));
      raw_pos_ = 0;
      file_ended_ = raw_end_ == 0;
    }
    std::string_view in(raw_.data() + raw_pos_, raw_end_ - raw_pos_);
    auto produced = inflater_->Decompress(&in, out, capacity);
    if (!produced.ok()) {
      return errors::DataLoss(path_, ": ", produced.status().message(), " (near byte ", offset_,
                              " of the uncompressed records)");
    }
    raw_pos_ = raw_end_ - in.size();
    if (*produced > 0) return produced;
    if (file_ended_ && !inflater_->finished()) {
      return errors::DataLoss(path_, ": the ", CompressionName(options_.compression),
                              " stream ends early (the file was cut short)");
    }
  }
  return size_t{0};
}

Status RecordReader::Ensure(size_t n) {
  if (end_ - pos_ >= n) return OkStatus();
  std::memmove(buffer_.data(), buffer_.data() + pos_, end_ - pos_);
  end_ -= pos_;
  pos_ = 0;
  if (buffer_.size() < n) buffer_.resize(std::max(n, 2 * buffer_.size()));
  while (end_ < n) {
    TW_ASSIGN_OR_RETURN(size_t got, Produce(buffer_.data() + end_, buffer_.size() - end_));
    if (got == 0) break;
    end_ += got;
  }
  return OkStatus();
}

Status RecordReader::Corrupt(const std::string& what) const {
  return errors::DataLoss(path_, ": ", what, " in the record at byte offset ", offset_);
}

Status RecordReader::Next(std::string* record) {
  if (!error_.ok()) return error_;
  error_ = Ensure(kRecordHeaderBytes);
  if (!error_.ok()) return error_;
  size_t available = end_ - pos_;
  if (available == 0) return errors::OutOfRange("end of ", path_);
  if (available < kRecordHeaderBytes) {
    error_ = Corrupt("the file ends inside the length header (" + std::to_string(available) +
                     " of " + std::to_string(kRecordHeaderBytes) + " bytes)");
    return error_;
  }
  const char* header = buffer_.data() + pos_;
  const uint64_t length = ReadLittleEndian(header, 8);
  const uint32_t length_crc = static_cast<uint32_t>(ReadLittleEndian(header + 8, 4));
  if (crc32c::Unmask(length_crc) != crc32c::Value(header, 8)) {
    error_ = Corrupt("length CRC mismatch");
    return error_;
  }
  // The length is trusted only after its CRC matched; the limit keeps a record that claims
  // more than any real one from allocating it.
  constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 40;
  if (length > kMaxRecordBytes) {
    error_ = Corrupt("a record of " + std::to_string(length) + " bytes (more than 2^40)");
    return error_;
  }
  const size_t whole = kRecordHeaderBytes + length + kRecordFooterBytes;
  error_ = Ensure(whole);
  if (!error_.ok()) return error_;
  available = end_ - pos_;
  if (available < whole) {
    error_ = Corrupt("the file ends inside the data (" + std::to_string(length) +
                     " bytes and a CRC announced, " +
                     std::to_string(available - kRecordHeaderBytes) + " remain)");
    return error_;
  }
  const char* data = buffer_.data() + pos_ + kRecordHeaderBytes;
  const uint32_t data_crc = static_cast<uint32_t>(ReadLittleEndian(data + length, 4));
  if (crc32c::Unmask(data_crc) != crc32c::Value(data, length)) {
    error_ = Corrupt("data CRC mismatch (" + std::to_string(length) + " bytes)");
    return error_;
  }
  record->assign(data, length);
  pos_ += whole;
  offset_ += whole;
  return OkStatus();
}

StatusOr<std::string> RecordReader::Next() {
  std::string record;
  TW_RETURN_IF_ERROR(Next(&record));
  return record;
}

}  // namespace tw::io
