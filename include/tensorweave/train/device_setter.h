// Replica device setter: places model state on ps tasks and computation on the worker.
//
//   auto setter = tw::train::ReplicaDeviceSetter(config->cluster(), {
//       .worker_device = "/job:worker/task:" + std::to_string(config->task_index())});
//   tw::Scope model = root.WithDeviceFunction(*setter);
//   auto w = tw::ops::MakeVariable(model, "w", ...);   // /job:ps/task:0
//   auto b = tw::ops::MakeVariable(model, "b", ...);   // /job:ps/task:1
//   auto y = tw::ops::MatMul(model, x, ...);           // /job:worker/task:N
//
// Ops of the types in `ps_ops` (variables, accumulators) go to `ps_device` with a ps task
// chosen by the strategy; every other op goes to `worker_device`. A device the scope already
// names (WithDevice) overrides the parts it sets, as in TensorFlow (or, without
// merge_devices, is kept whole). Ops that use a resource and ops built with ColocateWith run
// beside their resource or node whatever the setter says.
#ifndef TENSORWEAVE_TRAIN_DEVICE_SETTER_H_
#define TENSORWEAVE_TRAIN_DEVICE_SETTER_H_

#include <functional>
#include <string>
#include <vector>

#include "tensorweave/cluster_spec.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"

namespace tw::train {

enum class PsStrategy {
  kRoundRobin,   // the i-th ps op goes to task i % ps_tasks
  kGreedyBytes,  // each variable goes to the ps task holding the fewest bytes so far
  kCustom,       // ReplicaDeviceSetterOptions::choose_task decides
};

struct ReplicaDeviceSetterOptions {
  int ps_tasks = 0;  // 0: every op goes to worker_device
  // Where ps ops go, e.g. "/job:ps" or "/job:ps/device:CPU:0". The strategy adds a task
  // when it names a job that the node's own device does not contradict. "": ps ops are
  // placed like the others.
  std::string ps_device = "/job:ps";
  std::string worker_device = "/job:worker";  // e.g. "/job:worker/task:1"
  // As TensorFlow's merge_devices: when false, a node that names a device keeps exactly it.
  bool merge_devices = true;
  PsStrategy strategy = PsStrategy::kRoundRobin;
  // With kCustom: the ps task of a ps node, in [0, ps_tasks). A task outside it makes the
  // node's device name a task the cluster lacks, which placement reports.
  std::function<int(const proto::NodeDef& node)> choose_task;
  std::vector<std::string> ps_ops = {"Variable", "ConditionalAccumulator"};
  // The node of this name (CreateGlobalStep's) always goes to ps task 0, outside the strategy.
  std::string global_step_name = "global_step";
};

// A device function for Scope::WithDeviceFunction. The function keeps the strategy's state
// (copies share it); it is not thread-safe, like the Scope it serves.
StatusOr<Scope::DeviceFunction> ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options);

// The same, with ps_tasks taken from the cluster's job that ps_device names (0 when it has
// none).
StatusOr<Scope::DeviceFunction> ReplicaDeviceSetter(const ClusterSpec& cluster,
                                                    ReplicaDeviceSetterOptions options);

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_DEVICE_SETTER_H_
