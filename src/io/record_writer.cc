#include "src/io/record_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "src/base/crc32c.h"
#include "src/base/errno_status.h"

namespace tw::io {
namespace {

void AppendLittleEndian(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

void AppendFramedRecord(std::string_view data, std::string* out) {
  const size_t start = out->size();
  AppendLittleEndian(out, data.size(), 8);
  AppendLittleEndian(out, crc32c::Mask(crc32c::Value(out->data() + start, 8)), 4);
  out->append(data);
  AppendLittleEndian(out, crc32c::Mask(crc32c::Value(data.data(), data.size())), 4);
}

std::string FrameRecord(std::string_view data) {
  std::string out;
  out.reserve(kRecordHeaderBytes + data.size() + kRecordFooterBytes);
  AppendFramedRecord(data, &out);
  return out;
}

StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Create(const std::string& path,
                                                             RecordWriterOptions options) {
  std::unique_ptr<Deflater> deflater;
  if (options.compression != Compression::kNone) {
    TW_ASSIGN_OR_RETURN(deflater, Deflater::Create(options.compression));
  }
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options.truncate ? O_TRUNC : O_EXCL);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return ErrnoStatus(errno, "cannot create", path);
  return std::unique_ptr<RecordWriter>(new RecordWriter(path, fd, std::move(deflater)));
}

RecordWriter::~RecordWriter() { (void)Close(); }

Status RecordWriter::Write(std::string_view data) {
  if (fd_ < 0) return errors::FailedPrecondition("record file ", path_, " is closed");
  TW_RETURN_IF_ERROR(error_);
  AppendFramedRecord(data, &buffer_);
  if (buffer_.size() >= kFlushBytes) return WriteBuffer(Deflater::Mode::kNoFlush);
  return OkStatus();
}

Status RecordWriter::Flush() {
  if (fd_ < 0) return errors::FailedPrecondition("record file ", path_, " is closed");
  return WriteBuffer(Deflater::Mode::kSyncFlush);
}

Status RecordWriter::WriteBuffer(Deflater::Mode mode) {
  TW_RETURN_IF_ERROR(error_);
  if (deflater_ == nullptr) {
    // What reached the file stays; the rest is dropped so that a later Flush does not
    // write a torn record's tail after it.
    Status status = WriteAll(buffer_);
    buffer_.clear();
    return status;
  }
  compressed_.clear();
  Status status = deflater_->Compress(buffer_, mode, &compressed_);
  buffer_.clear();
  if (status.ok()) status = WriteAll(compressed_);
  // A compressed stream with a hole in it cannot be continued.
  if (!status.ok()) error_ = errors::FailedPrecondition(path_, ": ", status.message());
  return status;
}

Status RecordWriter::WriteAll(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "cannot write", path_);
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

Status RecordWriter::Close() {
  if (fd_ < 0) return OkStatus();
  Status status =
      WriteBuffer(deflater_ != nullptr ? Deflater::Mode::kFinish : Deflater::Mode::kNoFlush);
  if (::close(fd_) != 0 && status.ok()) status = ErrnoStatus(errno, "cannot close", path_);
  fd_ = -1;
  deflater_.reset();
  return status;
}

}  // namespace tw::io
