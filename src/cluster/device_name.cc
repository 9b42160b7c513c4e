#include "tensorweave/device_name.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "src/base/strings.h"
#include "src/cluster/host_port.h"

namespace tw {
namespace {

Status BadName(std::string_view name, std::string_view reason) {
  return errors::InvalidArgument("Invalid device name \"", name, "\": ", reason);
}

// Parses N or * (unset) for replica, task and device ids.
Status ParseIndex(std::string_view name, std::string_view part, std::string_view text,
                  std::optional<int>* out) {
  if (text == "*") {
    out->reset();
    return OkStatus();
  }
  std::optional<int> value = ParseNonNegativeInt(text);
  if (!value) {
    return BadName(name, internal::StrCatAny(part, " \"", text, "\" must be an integer >= 0 or *"));
  }
  *out = value;
  return OkStatus();
}

bool IsValidDeviceType(std::string_view type) {
  if (type.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(type[0]))) return false;
  for (char c : type) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string CanonicalType(std::string_view type) {
  std::string upper = absl::AsciiStrToUpper(ToAbsl(type));
  if (upper == "CPU" || upper == "GPU") return upper;
  return std::string(type);
}

template <typename T>
Status MergePart(std::string_view part, std::optional<T>* mine, const std::optional<T>& theirs) {
  if (!theirs.has_value()) return OkStatus();
  if (mine->has_value() && **mine != *theirs) {
    return errors::InvalidArgument("conflicting device ", part, "s: ", **mine, " and ", *theirs);
  }
  return OkStatus();
}

}  // namespace

StatusOr<DeviceName> DeviceName::Parse(std::string_view name) {
  DeviceName d;
  if (name.empty()) return d;
  if (name[0] != '/') return BadName(name, "it must start with '/'");
  const std::vector<std::string_view> parts = Split(name.substr(1), '/');
  bool seen_job = false, seen_replica = false, seen_task = false, seen_device = false;
  auto once = [&](bool* seen, std::string_view part) -> Status {
    if (*seen) return BadName(name, internal::StrCatAny(part, " is given twice"));
    *seen = true;
    return OkStatus();
  };
  for (std::string_view part : parts) {
    if (part.empty()) return BadName(name, "it has an empty part");
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos) {
      return BadName(name, internal::StrCatAny("part \"", part, "\" has no ':'"));
    }
    const std::string_view key = part.substr(0, colon);
    const std::string_view value = part.substr(colon + 1);
    if (key == "job") {
      TW_RETURN_IF_ERROR(once(&seen_job, "job"));
      if (value == "*") continue;
      if (!IsValidJobName(value)) {
        return BadName(
            name, internal::StrCatAny("job name \"", value, "\" must match [A-Za-z][A-Za-z0-9_]*"));
      }
      d.job = std::string(value);
    } else if (key == "replica") {
      TW_RETURN_IF_ERROR(once(&seen_replica, "replica"));
      TW_RETURN_IF_ERROR(ParseIndex(name, "replica", value, &d.replica));
    } else if (key == "task") {
      TW_RETURN_IF_ERROR(once(&seen_task, "task"));
      TW_RETURN_IF_ERROR(ParseIndex(name, "task", value, &d.task));
    } else {
      // "device:TYPE:ID", "device:TYPE", or the legacy "TYPE:ID" (cpu:0, gpu:1).
      TW_RETURN_IF_ERROR(once(&seen_device, "device"));
      std::string_view type = key, id = value;
      bool has_id = true;
      if (key == "device") {
        const size_t c = value.find(':');
        type = value.substr(0, c);
        if (c == std::string_view::npos) {
          has_id = false;
        } else {
          id = value.substr(c + 1);
        }
      }
      if (type == "*") {
        d.type.reset();
      } else if (!IsValidDeviceType(type)) {
        return BadName(name, internal::StrCatAny("device type \"", type,
                                                 "\" must match [A-Za-z][A-Za-z0-9_]*"));
      } else {
        d.type = CanonicalType(type);
      }
      if (has_id) TW_RETURN_IF_ERROR(ParseIndex(name, "device id", id, &d.id));
    }
  }
  return d;
}

DeviceName DeviceName::Full(std::string_view job, int replica, int task, std::string_view type,
                            int id) {
  DeviceName d;
  d.job = std::string(job);
  d.replica = replica;
  d.task = task;
  d.type = CanonicalType(type);
  d.id = id;
  return d;
}

std::string DeviceName::TaskName(std::string_view job, int task) {
  return absl::StrCat("/job:", std::string(job), "/replica:0/task:", task);
}

std::string DeviceName::TaskOf(std::string_view device) {
  const size_t pos = device.find("/device:");
  return std::string(pos == std::string_view::npos ? device : device.substr(0, pos));
}

bool DeviceName::IsFullySpecified() const { return job && replica && task && type && id; }

std::string DeviceName::ToString() const {
  std::string out;
  if (job) absl::StrAppend(&out, "/job:", *job);
  if (replica) absl::StrAppend(&out, "/replica:", *replica);
  if (task) absl::StrAppend(&out, "/task:", *task);
  if (type || id) {
    absl::StrAppend(&out, "/device:", type ? *type : std::string("*"), ":",
                    id ? std::to_string(*id) : std::string("*"));
  }
  return out;
}

Status DeviceName::MergeFrom(const DeviceName& other) {
  TW_RETURN_IF_ERROR(MergePart("job", &job, other.job));
  TW_RETURN_IF_ERROR(MergePart("replica", &replica, other.replica));
  TW_RETURN_IF_ERROR(MergePart("task", &task, other.task));
  TW_RETURN_IF_ERROR(MergePart("type", &type, other.type));
  TW_RETURN_IF_ERROR(MergePart("id", &id, other.id));
  OverrideWith(other);
  return OkStatus();
}

void DeviceName::OverrideWith(const DeviceName& other) {
  if (other.job) job = other.job;
  if (other.replica) replica = other.replica;
  if (other.task) task = other.task;
  if (other.type) type = other.type;
  if (other.id) id = other.id;
}

bool DeviceName::IsSatisfiedBy(const DeviceName& device) const {
  auto ok = [](const auto& mine, const auto& theirs) { return !mine || mine == theirs; };
  return ok(job, device.job) && ok(replica, device.replica) && ok(task, device.task) &&
         ok(type, device.type) && ok(id, device.id);
}

}  // namespace tw
