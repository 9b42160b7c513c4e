#include "src/cluster/device_name_utils.h"

#include "absl/strings/str_cat.h"

namespace tw {

bool IsSpecification(const DeviceName& less_specific, const DeviceName& more_specific) {
  return less_specific.IsSatisfiedBy(more_specific);
}

bool IsCompleteSpecification(const DeviceName& pattern, const DeviceName& name) {
  return name.IsFullySpecified() && pattern.IsSatisfiedBy(name);
}

bool IsSameAddressSpace(const DeviceName& a, const DeviceName& b) {
  return a.job && a.replica && a.task && a.job == b.job && a.replica == b.replica &&
         a.task == b.task;
}

bool IsSameAddressSpace(std::string_view a, std::string_view b) {
  StatusOr<DeviceName> x = DeviceName::Parse(a);
  StatusOr<DeviceName> y = DeviceName::Parse(b);
  return x.ok() && y.ok() && IsSameAddressSpace(*x, *y);
}

std::optional<std::string> GetTaskName(const DeviceName& name) {
  if (!name.job || !name.replica || !name.task) return std::nullopt;
  return absl::StrCat("/job:", *name.job, "/replica:", *name.replica, "/task:", *name.task);
}

std::optional<TaskAndDevice> SplitDeviceName(std::string_view name) {
  StatusOr<DeviceName> parsed = DeviceName::Parse(name);
  if (!parsed.ok() || !parsed->type || !parsed->id) return std::nullopt;
  DeviceName task = *parsed;
  task.type.reset();
  task.id.reset();
  return TaskAndDevice{task.ToString(), absl::StrCat(*parsed->type, ":", *parsed->id)};
}

std::string LocalDeviceName(std::string_view type, int id) {
  return absl::StrCat("/device:", std::string(type), ":", id);
}

StatusOr<std::string> LocalDeviceName(std::string_view full_name) {
  TW_ASSIGN_OR_RETURN(DeviceName parsed, DeviceName::Parse(full_name));
  if (!parsed.type || !parsed.id) {
    return errors::InvalidArgument("Device name \"", full_name,
                                   "\" has no local name: it sets no device type or id");
  }
  return LocalDeviceName(*parsed.type, *parsed.id);
}

StatusOr<DeviceName> ParseLocalDeviceName(std::string_view name) {
  auto refuse = [name] {
    return errors::InvalidArgument("Invalid local device name \"", name,
                                   "\": it must be TYPE:ID, such as CPU:0");
  };
  // Exactly one ':' and no '/': the parse below would take "job:ps" or "CPU:0/task:1".
  if (name.find('/') != std::string_view::npos || name.find(':') != name.rfind(':')) {
    return refuse();
  }
  StatusOr<DeviceName> parsed = DeviceName::Parse(absl::StrCat("/device:", std::string(name)));
  if (!parsed.ok() || !parsed->type || !parsed->id) return refuse();
  return parsed;
}

StatusOr<std::string> CanonicalDeviceName(std::string_view name, std::string_view basename) {
  StatusOr<DeviceName> base = DeviceName::Parse(basename);
  if (!base.ok()) {
    return errors::InvalidArgument("Could not parse basename \"", basename,
                                   "\" into a device specification: ", base.status().message());
  }
  if (!base->IsFullySpecified()) {
    return errors::InvalidArgument("Basename \"", basename, "\" should be fully specified");
  }
  StatusOr<DeviceName> parsed = ParseLocalDeviceName(name);
  if (!parsed.ok()) parsed = DeviceName::Parse(name);
  if (!parsed.ok()) {
    return errors::InvalidArgument("Could not parse \"", name,
                                   "\" into a device specification: ", parsed.status().message());
  }
  DeviceName completed = *base;
  completed.OverrideWith(*parsed);
  return completed.ToString();
}

}  // namespace tw
