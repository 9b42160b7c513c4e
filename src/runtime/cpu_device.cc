#include "src/runtime/cpu_device.h"

#include <algorithm>
#include <random>
#include <thread>

#define EIGEN_USE_THREADS
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace tw {

struct CpuDevice::Pool {
  explicit Pool(int threads) : pool(threads) {}
  Eigen::ThreadPool pool;
};

namespace {

uint64_t NewIncarnation() {
  std::random_device rd;
  uint64_t v = 0;
  while (v == 0) v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return v;
}

// One per core: the device does not know how many tasks share the machine (the options
// say, from ServerOptions.num_threads or SessionOptions.num_threads).
int DefaultThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace

StatusOr<std::unique_ptr<CpuDevice>> CpuDevice::Create(const DeviceName& name,
                                                       const CpuDeviceOptions& options) {
  if (!name.IsFullySpecified() || *name.type != "CPU") {
    return errors::InvalidArgument(
        "a CPU device needs a full name like "
        "/job:localhost/replica:0/task:0/device:CPU:0, got \"",
        name.ToString(), "\"");
  }
  // A negative count is a mistake, not a request for the default.
  if (options.num_threads < 0 || options.num_threads > kMaxComputeThreads) {
    return errors::InvalidArgument("num_threads must be from 0 (one per core) to ",
                                   kMaxComputeThreads, ", got ", options.num_threads);
  }
  int threads = options.num_threads;
  if (threads == 0) threads = DefaultThreads();
  return std::unique_ptr<CpuDevice>(new CpuDevice(name, threads, options.file_access));
}

CpuDevice::CpuDevice(const DeviceName& name, int threads, FileAccessPolicy file_access)
    : parsed_name_(name),
      name_(name.ToString()),
      incarnation_(NewIncarnation()),
      file_access_(std::move(file_access)),
      resource_mgr_(*name.job),
      pool_(std::make_unique<Pool>(threads)) {}

CpuDevice::~CpuDevice() {
  // Resources' own threads stop running work on the pool first (a tf.data pipeline left
  // mid-way, its map functions running); then the pool's threads are joined before the
  // resources they may use go away.
  resource_mgr_.StopWorkOnDevice();
  pool_.reset();
  resource_mgr_.Clear({});
}

void CpuDevice::Schedule(std::function<void()> fn) { pool_->pool.Schedule(std::move(fn)); }

int CpuDevice::NumThreads() const { return pool_->pool.NumThreads(); }

}  // namespace tw
