#include "tensorweave/train/device_setter.h"

#include <algorithm>
#include <memory>

#include "src/framework/attr_value.h"
#include "tensorweave/device_name.h"

namespace tw::train {
namespace {

// What the setter remembers between nodes: the next task for round robin, the bytes given
// to each task for the greedy strategy.
struct PsLoad {
  int next_task = 0;
  std::vector<int64_t> bytes;
};

// The bytes a variable-like node will hold; unknown shapes count as one element, so greedy
// placement still spreads them.
int64_t NodeBytes(const proto::NodeDef& node) {
  DataType dtype = DT_FLOAT;
  (void)GetNodeAttr(node, "dtype", &dtype);
  PartialShape shape;
  int64_t elements = 1;
  if (GetNodeAttr(node, "shape", &shape).ok() && !shape.unknown_rank) {
    for (int64_t d : shape.dims) elements *= std::max<int64_t>(d, 1);
  }
  return elements * static_cast<int64_t>(DataTypeSize(dtype));
}

int ChooseTask(const ReplicaDeviceSetterOptions& options, const proto::NodeDef& node,
               PsLoad* load) {
  if (node.name() == options.global_step_name) return 0;
  switch (options.strategy) {
    case PsStrategy::kRoundRobin: {
      const int task = load->next_task;
      load->next_task = (load->next_task + 1) % options.ps_tasks;
      return task;
    }
    case PsStrategy::kGreedyBytes: {
      const auto least = std::min_element(load->bytes.begin(), load->bytes.end());
      *least += NodeBytes(node);
      return static_cast<int>(least - load->bytes.begin());
    }
    case PsStrategy::kCustom:
      return options.choose_task(node);
  }
  return 0;
}

}  // namespace

StatusOr<Scope::DeviceFunction> ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options) {
  if (options.ps_tasks < 0) {
    return errors::InvalidArgument("ReplicaDeviceSetter: ps_tasks must be >= 0, got ",
                                   options.ps_tasks);
  }
  if (options.strategy == PsStrategy::kCustom && !options.choose_task) {
    return errors::InvalidArgument("ReplicaDeviceSetter: the custom strategy has no choose_task");
  }
  auto parse = [](const std::string& what, const std::string& device) -> StatusOr<DeviceName> {
    auto parsed = DeviceName::Parse(device);
    if (!parsed.ok()) {
      return errors::InvalidArgument("ReplicaDeviceSetter: ", what, " '", device,
                                     "': ", parsed.status().message());
    }
    return parsed;
  };
  TW_ASSIGN_OR_RETURN(DeviceName worker, parse("worker_device", options.worker_device));
  TW_ASSIGN_OR_RETURN(DeviceName ps, parse("ps_device", options.ps_device));
  auto load = std::make_shared<PsLoad>();
  load->bytes.assign(static_cast<size_t>(options.ps_tasks), 0);
  const bool has_ps = options.ps_tasks > 0 && !options.ps_device.empty();
  return Scope::DeviceFunction(
      [options, worker, ps, has_ps, load](const proto::NodeDef& node) -> std::string {
        if (!options.merge_devices && !node.device().empty()) return node.device();
        // The scope already validated the node's own device string.
        DeviceName current = DeviceName::Parse(node.device()).value_or(DeviceName());
        DeviceName chosen = worker;
        if (has_ps && std::find(options.ps_ops.begin(), options.ps_ops.end(), node.op()) !=
                          options.ps_ops.end()) {
          chosen = ps;
          // As TensorFlow's replica_device_setter: only a node left to the ps job (no job, or
          // that job) gets a ps task and spends a turn; one pinned to another job keeps its
          // job, and a ps task number would name a task that job may not have.
          if (ps.job.has_value() && (!current.job.has_value() || current.job == ps.job)) {
            chosen.task = ChooseTask(options, node, load.get());
          }
        }
        chosen.OverrideWith(current);
        return chosen.ToString();
      });
}

StatusOr<Scope::DeviceFunction> ReplicaDeviceSetter(const ClusterSpec& cluster,
                                                    ReplicaDeviceSetterOptions options) {
  auto ps = DeviceName::Parse(options.ps_device);
  const std::string job = ps.ok() && ps->job.has_value() ? *ps->job : "";
  options.ps_tasks = cluster.CountTasks(job);
  return ReplicaDeviceSetter(options);
}

}  // namespace tw::train
