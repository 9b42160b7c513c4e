// The questions TensorFlow's DeviceNameUtils answers about device names, over DeviceName
// (include/tensorweave/device_name.h): is one spec a refinement of another, do two devices
// share a process, what are a device's task and local names. The semantics are TF's, so
// the cases of its device_name_utils_test hold here; where TF CHECK-fails on a bad name,
// these return false, nullopt or InvalidArgument instead.
//
// Pure functions; thread-safe.
#ifndef TENSORWEAVE_SRC_CLUSTER_DEVICE_NAME_UTILS_H_
#define TENSORWEAVE_SRC_CLUSTER_DEVICE_NAME_UTILS_H_

#include <optional>
#include <string>
#include <string_view>

#include "tensorweave/device_name.h"
#include "tensorweave/status.h"

namespace tw {

// True when every part `less_specific` sets is set in `more_specific` to the same value:
// "/job:work/replica:1/gpu:*" is a specification of "/job:work/replica:1/task:2/gpu:3",
// but "/cpu:*" is not one of "/job:*/replica:1/task:2" (which sets no type), nor is a full
// name one of "/gpu:*". The same test as less_specific.IsSatisfiedBy(more_specific).
bool IsSpecification(const DeviceName& less_specific, const DeviceName& more_specific);

// True when `name` is fully specified and matches every part `pattern` sets. (TF requires
// a complete `name` and aborts otherwise; an incomplete one is false here.)
bool IsCompleteSpecification(const DeviceName& pattern, const DeviceName& name);

// True when both set the same job, replica and task: the devices live in one process. A
// part unset on either side never matches.
bool IsSameAddressSpace(const DeviceName& a, const DeviceName& b);
// The same for two names; false when either does not parse.
bool IsSameAddressSpace(std::string_view a, std::string_view b);

// "/job:J/replica:R/task:T" of a name that sets its job, replica and task; nullopt when one
// of them is unset.
std::optional<std::string> GetTaskName(const DeviceName& name);

// A device name cut into its task part and its local "TYPE:ID".
struct TaskAndDevice {
  std::string task;    // the job, replica and task parts that are set, in canonical order
  std::string device;  // "CPU:1"
};
// "/job:foo/cpu:1/task:2/replica:1" -> {"/job:foo/replica:1/task:2", "CPU:1"};
// "/gpu:3" -> {"", "GPU:3"}. nullopt when `name` does not parse or sets no device type or
// no device id.
std::optional<TaskAndDevice> SplitDeviceName(std::string_view name);

// The name of a device within its task: "/device:<type>:<id>".
std::string LocalDeviceName(std::string_view type, int id);
// The local name of a full name: "/device:CPU:3" of "/job:foo/replica:1/task:2/cpu:3".
// InvalidArgument when `full_name` does not parse or sets no device type or id.
StatusOr<std::string> LocalDeviceName(std::string_view full_name);

// Parses a bare local name "TYPE:ID" ("CPU:10", "myspecialdevice:13"): type and id both
// set. InvalidArgument naming the name for anything else ("abc", "abc:", "cpu:abc",
// "CPU:*", "/device:CPU:0").
StatusOr<DeviceName> ParseLocalDeviceName(std::string_view name);

// The canonical full name of `name` (a full or partial spec, or a local "TYPE:ID"), each
// part it leaves unset taken from `basename`, which must be fully specified:
// ("CPU:1", "/job:foo/replica:10/task:0/device:CPU:0") ->
// "/job:foo/replica:10/task:0/device:CPU:1". InvalidArgument when either does not parse or
// `basename` is not fully specified.
StatusOr<std::string> CanonicalDeviceName(std::string_view name, std::string_view basename);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CLUSTER_DEVICE_NAME_UTILS_H_
