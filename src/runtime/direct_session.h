// DirectSession: a Session that runs graphs in this process on one device.
#ifndef TENSORWEAVE_SRC_RUNTIME_DIRECT_SESSION_H_
#define TENSORWEAVE_SRC_RUNTIME_DIRECT_SESSION_H_

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "src/framework/device_base.h"
#include "src/runtime/executor.h"
#include "tensorweave/session.h"

namespace tw {

class DirectSession final : public Session {
 public:
  // Runs on `device`, which must outlive the session; resources on it are shared with
  // every other session on the same device. `owned` (if any) is that device, owned here.
  DirectSession(DeviceBase* device, std::unique_ptr<DeviceBase> owned);
  ~DirectSession() override;
  // The device the session runs on (its resources, for tests).
  DeviceBase* device() const { return device_; }

  using Session::Extend;
  using Session::Run;
  Status Extend(const proto::GraphDef& graph) override;
  Status Run(const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs) override;
  Status Close() override;
  StatusOr<std::vector<DeviceAttributes>> ListDevices() override;

 private:
  // A pruned, validated graph with its kernels, for one (feeds, fetches, targets).
  struct Executable {
    std::unique_ptr<Executor> executor;
    std::vector<std::string> feed_names;
    std::vector<DataType> feed_types;
    std::vector<std::optional<PartialShape>> feed_shapes;  // from Placeholder shape attrs
  };

  StatusOr<std::shared_ptr<const Executable>> GetExecutable(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches, const std::vector<std::string>& targets);
  StatusOr<std::shared_ptr<const Executable>> BuildExecutable(
      const proto::GraphDef& graph, const std::vector<std::string>& feeds,
      const std::vector<std::string>& fetches, const std::vector<std::string>& targets);
  Status CheckFeeds(const Executable& e,
                    const std::vector<std::pair<std::string, Tensor>>& feeds) const;

  DeviceBase* const device_;
  const std::unique_ptr<DeviceBase> owned_device_;
  const DeviceName device_name_;
  const std::string handle_;  // unique in the process
  std::atomic<int64_t> next_step_id_{1};

  absl::Mutex mu_;
  proto::GraphDef graph_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> node_names_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const Executable>> executables_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::set<std::shared_ptr<CancellationManager>> active_steps_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RUNTIME_DIRECT_SESSION_H_
