// Replica device setter: places model state on ps tasks and computation on the worker.
//
//   auto setter = tw::train::ReplicaDeviceSetter(config->cluster(), {
//       .worker_device = "/job:worker/task:" + std::to_string(config->task_index())});
//   tw::Scope model = root.WithDeviceFunction(*setter);
//   auto w = tw::ops::MakeVariable(model, "w", ...);   // /job:ps/task:0
//   auto b = tw::ops::MakeVariable(model, "b", ...);   // /job:ps/task:1
//   auto y = tw::ops::MatMul(model, x, ...);           // /job:worker/task:N
//
// Ops of the types in `ps_ops` (variables, accumulators) go to a ps task chosen by the
// strategy; every other op goes to `worker_device`. A device the scope already names
// (WithDevice) overrides the parts it sets, as in TensorFlow. Ops that use a resource and ops
// built with ColocateWith run beside their resource or node whatever the setter says.
#ifndef TENSORWEAVE_TRAIN_DEVICE_SETTER_H_
#define TENSORWEAVE_TRAIN_DEVICE_SETTER_H_

#include <string>
#include <vector>

#include "tensorweave/cluster_spec.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"

namespace tw::train {

enum class PsStrategy {
  kRoundRobin,   // the i-th ps op goes to task i % ps_tasks
  kGreedyBytes,  // each variable goes to the ps task holding the fewest bytes so far
};

struct ReplicaDeviceSetterOptions {
  int ps_tasks = 0;  // 0: every op goes to worker_device
  std::string ps_job = "ps";
  std::string worker_device = "/job:worker";  // e.g. "/job:worker/task:1"
  PsStrategy strategy = PsStrategy::kRoundRobin;
  std::vector<std::string> ps_ops = {"Variable", "ConditionalAccumulator"};
  // The node of this name (CreateGlobalStep's) always goes to ps task 0, outside the strategy.
  std::string global_step_name = "global_step";
};

// A device function for Scope::WithDeviceFunction. The function keeps the strategy's state
// (copies share it); it is not thread-safe, like the Scope it serves.
StatusOr<Scope::DeviceFunction> ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options);

// The same, with ps_tasks taken from the cluster's ps job (0 when it has none).
StatusOr<Scope::DeviceFunction> ReplicaDeviceSetter(const ClusterSpec& cluster,
                                                    ReplicaDeviceSetterOptions options);

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_DEVICE_SETTER_H_
