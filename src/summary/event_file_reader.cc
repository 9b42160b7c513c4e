#include "src/summary/event_file_reader.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "src/base/errno_status.h"

namespace tw::summary {

StatusOr<std::unique_ptr<EventFileReader>> EventFileReader::Open(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<io::RecordReader> records, io::RecordReader::Open(path));
  return std::unique_ptr<EventFileReader>(new EventFileReader(std::move(records)));
}

StatusOr<proto::Event> EventFileReader::Next() {
  const uint64_t offset = records_->offset();
  TW_ASSIGN_OR_RETURN(std::string record, records_->Next());
  proto::Event event;
  if (!event.ParseFromString(record)) {
    return errors::DataLoss(records_->path(), ": the record at byte offset ", offset, " (",
                            record.size(), " bytes) is not an Event");
  }
  return event;
}

StatusOr<std::vector<std::string>> ListEventFiles(const std::string& logdir) {
  std::error_code error;
  std::filesystem::directory_iterator it(logdir, error);
  if (error) return ErrnoStatus(error.value(), "cannot list", logdir);
  std::vector<std::string> files;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.find("tfevents") != std::string::npos && entry.is_regular_file(error)) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tw::summary
