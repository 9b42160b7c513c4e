// DeviceName: a full or partial device specification such as
// "/job:ps/replica:0/task:1/device:CPU:0", "/job:ps", "/task:1", "/device:CPU:*" or the
// legacy "/cpu:0". Unset parts match anything.
//
// A value type; thread-compatible.
#ifndef TENSORWEAVE_DEVICE_NAME_H_
#define TENSORWEAVE_DEVICE_NAME_H_

#include <optional>
#include <string>
#include <string_view>

#include "tensorweave/status.h"

namespace tw {

struct DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // "CPU", "GPU", ...; cpu and gpu are upper-cased
  std::optional<int> id;

  // Parses a specification. "" is the empty spec (matches every device). Each part may
  // appear once: job:NAME, replica:N, task:N, device:TYPE:ID (ID may be *), or the legacy
  // TYPE:ID ("cpu:0"). N may be * (unset). InvalidArgument names the name and the part.
  static StatusOr<DeviceName> Parse(std::string_view name);

  // "/job:<job>/replica:<replica>/task:<task>/device:<type>:<id>".
  static DeviceName Full(std::string_view job, int replica, int task, std::string_view type,
                         int id);

  // "/job:<job>/replica:0/task:<task>": the name a task goes by in the master, the workers
  // and their caches ("/job:ps/replica:0/task:3").
  static std::string TaskName(std::string_view job, int task);

  // The task part of a device name, everything before "/device:"
  // ("/job:ps/replica:0/task:0" of "/job:ps/replica:0/task:0/device:CPU:0"); a name without
  // a device part is returned unchanged. A string operation: `device` is not validated.
  static std::string TaskOf(std::string_view device);

  // True when every part is set.
  bool IsFullySpecified() const;

  // The canonical string of the parts that are set, in the order job, replica, task,
  // device ("/job:ps/task:1", "/device:CPU:*"); "" when no part is set.
  std::string ToString() const;

  // Sets each part of `other` that is set; InvalidArgument naming the part when both have
  // it set to different values (this is left unchanged then).
  Status MergeFrom(const DeviceName& other);

  // Like MergeFrom, but parts set in `other` win over this spec's (for nested scopes).
  void OverrideWith(const DeviceName& other);

  // True when every part set in this spec equals the same part of `device`.
  bool IsSatisfiedBy(const DeviceName& device) const;

  friend bool operator==(const DeviceName& a, const DeviceName& b) = default;
};

}  // namespace tw

#endif  // TENSORWEAVE_DEVICE_NAME_H_
