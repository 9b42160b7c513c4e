#include "tensorweave/device_name.h"

#include <utility>
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

// The legacy device part "cpu:0" (or CPU, gpu, GPU): the only TYPE:ID form TensorFlow reads
// without "device:", so that a misspelt field ("bar:3") is refused, not taken for a device.
bool IsLegacyDeviceType(std::string_view key) {
  return key == "cpu" || key == "CPU" || key == "gpu" || key == "GPU";
}

// One step of a merge, as TensorFlow's MergeDevNames takes it: `part` of `theirs` goes into
// `merged` unless `merged` has it set to another value. The message quotes both names as
// they stand at the conflict (`merged` holds the parts merged before it), in TF's words.
template <typename T>
Status MergePart(std::string_view plural, std::optional<T> DeviceName::*part, DeviceName* merged,
                 const DeviceName& theirs) {
  const std::optional<T>& value = theirs.*part;
  if (!value.has_value()) return OkStatus();
  std::optional<T>& mine = merged->*part;
  if (mine.has_value() && *mine != *value) {
    return errors::InvalidArgument("Cannot merge devices with incompatible ", plural, ": '",
                                   merged->ToString(), "' and '", theirs.ToString(), "'");
  }
  mine = value;
  return OkStatus();
}

}  // namespace

StatusOr<DeviceName> DeviceName::Parse(std::string_view name) {
  DeviceName d;
  if (name.empty() || name == "/") return d;  // "/" is TensorFlow's empty spec too
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
    } else if (key != "device" && !IsLegacyDeviceType(key)) {
      return BadName(name, internal::StrCatAny("unknown field \"", key, "\" in part \"", part,
                                               "\"; expected job, replica, task, device, or the "
                                               "legacy cpu or gpu"));
    } else {
      // "device:TYPE:ID", "device:TYPE", or the legacy "cpu:ID" and "gpu:ID".
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
  // Merged into a copy, so that this spec stays as it was when a part conflicts.
  DeviceName merged = *this;
  TW_RETURN_IF_ERROR(MergePart("jobs", &DeviceName::job, &merged, other));
  TW_RETURN_IF_ERROR(MergePart("replicas", &DeviceName::replica, &merged, other));
  TW_RETURN_IF_ERROR(MergePart("tasks", &DeviceName::task, &merged, other));
  TW_RETURN_IF_ERROR(MergePart("types", &DeviceName::type, &merged, other));
  TW_RETURN_IF_ERROR(MergePart("ids", &DeviceName::id, &merged, other));
  *this = std::move(merged);
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
