// CpuDevice: the CPU of this process as a device, with its resource manager and compute
// thread pool (Eigen's ThreadPool).
#ifndef TENSORWEAVE_SRC_RUNTIME_CPU_DEVICE_H_
#define TENSORWEAVE_SRC_RUNTIME_CPU_DEVICE_H_

#include <memory>
#include <string>

#include "src/framework/device_base.h"

namespace tw {

// The most compute threads a device takes: far more than any machine's cores, few enough
// that a mistyped count (100000) is refused instead of starting that many threads.
inline constexpr int kMaxComputeThreads = 1024;

struct CpuDeviceOptions {
  // Threads of the compute pool, 0 to kMaxComputeThreads; 0 means one per core (or
  // TW_NUM_THREADS when set).
  int num_threads = 0;
  // Where kernels may read and write files. Default: nowhere, so a device whose creator
  // did not think about it (a server's) cannot be made to touch files by a remote graph;
  // in-process sessions pass FileAccessPolicy::Unrestricted().
  FileAccessPolicy file_access;
};

// Thread-safe. Owned by whoever created it (a session or a server); kernels hold raw
// pointers that must not outlive it.
class CpuDevice final : public DeviceBase {
 public:
  // `name` must be fully specified with device type CPU and options.num_threads within
  // 0..kMaxComputeThreads; InvalidArgument naming num_threads or the name otherwise.
  static StatusOr<std::unique_ptr<CpuDevice>> Create(const DeviceName& name,
                                                     const CpuDeviceOptions& options = {});
  ~CpuDevice() override;

  const std::string& name() const override { return name_; }
  const DeviceName& parsed_name() const override { return parsed_name_; }
  const std::string& device_type() const override { return device_type_; }
  uint64_t incarnation() const override { return incarnation_; }
  ResourceMgr* resource_manager() override { return &resource_mgr_; }
  void Schedule(std::function<void()> fn) override;
  int NumThreads() const override;
  const FileAccessPolicy& file_access() const override { return file_access_; }

 private:
  CpuDevice(const DeviceName& name, int threads, FileAccessPolicy file_access);

  const DeviceName parsed_name_;
  const std::string name_;
  const std::string device_type_ = "CPU";
  const uint64_t incarnation_;
  const FileAccessPolicy file_access_;
  ResourceMgr resource_mgr_;
  struct Pool;  // Eigen::ThreadPool, kept out of this header
  std::unique_ptr<Pool> pool_;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RUNTIME_CPU_DEVICE_H_
