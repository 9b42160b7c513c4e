#include "src/summary/record_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "src/base/crc32c.h"
#include "src/base/errno_status.h"

namespace tw::summary {
namespace {

void AppendLittleEndian(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

std::string FrameRecord(std::string_view data) {
  std::string out;
  out.reserve(kRecordHeaderBytes + data.size() + kRecordFooterBytes);
  AppendLittleEndian(&out, data.size(), 8);
  AppendLittleEndian(&out, crc32c::Mask(crc32c::Value(out.data(), 8)), 4);
  out.append(data);
  AppendLittleEndian(&out, crc32c::Mask(crc32c::Value(data.data(), data.size())), 4);
  return out;
}

StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "cannot create", path);
  return std::unique_ptr<RecordWriter>(new RecordWriter(path, fd));
}

RecordWriter::~RecordWriter() { (void)Close(); }

Status RecordWriter::Write(std::string_view data) {
  if (fd_ < 0) return errors::FailedPrecondition("record file ", path_, " is closed");
  buffer_ += FrameRecord(data);
  if (buffer_.size() >= kFlushBytes) return Flush();
  return OkStatus();
}

Status RecordWriter::Flush() {
  if (fd_ < 0) return errors::FailedPrecondition("record file ", path_, " is closed");
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      // What reached the file stays; the rest is dropped so that a later Flush does not
      // write a torn record's tail after it.
      buffer_.clear();
      return ErrnoStatus(err, "cannot write", path_);
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
  return OkStatus();
}

Status RecordWriter::Close() {
  if (fd_ < 0) return OkStatus();
  Status status = Flush();
  if (::close(fd_) != 0 && status.ok()) status = ErrnoStatus(errno, "cannot close", path_);
  fd_ = -1;
  return status;
}

}  // namespace tw::summary
