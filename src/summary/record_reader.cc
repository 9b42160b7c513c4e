#include "src/summary/record_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "src/base/crc32c.h"
#include "src/base/errno_status.h"
#include "src/summary/record_writer.h"

namespace tw::summary {
namespace {

uint64_t ReadLittleEndian(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return value;
}

}  // namespace

StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  std::string contents;
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "cannot read", path);
    }
    if (n == 0) break;
    contents.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return std::unique_ptr<RecordReader>(new RecordReader(path, std::move(contents)));
}

Status RecordReader::Corrupt(const std::string& what) const {
  return errors::DataLoss(path_, ": ", what, " in the record at byte offset ", offset_);
}

StatusOr<std::string> RecordReader::Next() {
  if (!error_.ok()) return error_;
  const uint64_t remaining = contents_.size() - offset_;
  if (remaining == 0) return errors::OutOfRange("end of ", path_);
  if (remaining < kRecordHeaderBytes) {
    error_ = Corrupt("the file ends inside the length header (" + std::to_string(remaining) +
                     " of " + std::to_string(kRecordHeaderBytes) + " bytes)");
    return error_;
  }
  const char* header = contents_.data() + offset_;
  const uint64_t length = ReadLittleEndian(header, 8);
  const uint32_t length_crc = static_cast<uint32_t>(ReadLittleEndian(header + 8, 4));
  if (crc32c::Unmask(length_crc) != crc32c::Value(header, 8)) {
    error_ = Corrupt("length CRC mismatch");
    return error_;
  }
  if (length > remaining - kRecordHeaderBytes ||
      remaining - kRecordHeaderBytes - length < kRecordFooterBytes) {
    error_ = Corrupt("the file ends inside the data (" + std::to_string(length) +
                     " bytes and a CRC announced, " +
                     std::to_string(remaining - kRecordHeaderBytes) + " remain)");
    return error_;
  }
  const char* data = header + kRecordHeaderBytes;
  const uint32_t data_crc = static_cast<uint32_t>(ReadLittleEndian(data + length, 4));
  if (crc32c::Unmask(data_crc) != crc32c::Value(data, length)) {
    error_ = Corrupt("data CRC mismatch (" + std::to_string(length) + " bytes)");
    return error_;
  }
  offset_ += kRecordHeaderBytes + length + kRecordFooterBytes;
  return std::string(data, length);
}

}  // namespace tw::summary
