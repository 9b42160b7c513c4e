// DeviceBase: what a kernel may use of the device it runs on. The CPU device in
// src/runtime implements it; framework code depends only on this interface.
#ifndef TENSORWEAVE_SRC_FRAMEWORK_DEVICE_BASE_H_
#define TENSORWEAVE_SRC_FRAMEWORK_DEVICE_BASE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "src/framework/file_access.h"
#include "src/framework/resource_mgr.h"
#include "tensorweave/device_name.h"

namespace tw {

// Thread-safe: every method may be called from any thread.
class DeviceBase {
 public:
  virtual ~DeviceBase() = default;

  // Full name, "/job:localhost/replica:0/task:0/device:CPU:0".
  virtual const std::string& name() const = 0;
  virtual const DeviceName& parsed_name() const = 0;
  // "CPU"; kernels are registered per device type.
  virtual const std::string& device_type() const = 0;
  // Random per process start; distinguishes a restarted task's device from its former self.
  virtual uint64_t incarnation() const = 0;
  // Variables, queues and other state on this device.
  virtual ResourceMgr* resource_manager() = 0;
  // Runs `fn` on the device's compute pool. `fn` must not block waiting for other work.
  virtual void Schedule(std::function<void()> fn) = 0;
  // Number of threads in the compute pool.
  virtual int NumThreads() const = 0;
  // The directories kernels on this device may read and write files in (checkpoints); set
  // by whoever created the device, never by a graph (src/framework/file_access.h).
  virtual const FileAccessPolicy& file_access() const = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_FRAMEWORK_DEVICE_BASE_H_
