// The training half of the native module: the replica device setter, optimizers, sync
// replicas and partitioned lookups of tensorweave/train, over a `_native.Graph`
// (checkpoints: saver_binding.cc).
//
// Python names variables by their handle node; the C++ objects build their nodes into the
// graph's C++ Scope, and the Python layer then imports them (Graph.import_nodes_since).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "python/native/errors.h"
#include "python/native/gil.h"
#include "python/native/graph_refs.h"
#include "python/native/module.h"
#include "tensorweave/train/device_setter.h"
#include "tensorweave/train/optimizer.h"
#include "tensorweave/train/partitioners.h"
#include "tensorweave/train/sync_replicas.h"
#include "tensorweave/train/variables.h"

namespace py = pybind11;

namespace tw::python {
namespace {

// TF's replica_device_setter as a callable on a node's (op type, name, current device).
// A Python strategy (a callable on the op) chooses the task when given.
class DeviceSetter {
 public:
  DeviceSetter(int ps_tasks, std::string ps_device, std::string worker_device, bool merge_devices,
               std::vector<std::string> ps_ops, py::object strategy)
      : strategy_(std::move(strategy)) {
    train::ReplicaDeviceSetterOptions options{.ps_tasks = ps_tasks,
                                              .ps_device = std::move(ps_device),
                                              .worker_device = std::move(worker_device),
                                              .merge_devices = merge_devices,
                                              .ps_ops = std::move(ps_ops),
                                              // TF's setter treats the global step as any
                                              // other variable.
                                              .global_step_name = ""};
    if (!strategy_.is_none()) {
      options.strategy = train::PsStrategy::kCustom;
      options.choose_task = [this](const proto::NodeDef&) {
        return strategy_(current_op_).cast<int>();
      };
    }
    function_ = ValueOrThrow(train::ReplicaDeviceSetter(options));
  }

  // The device for `op` (a Python Operation, given to the strategy), whose type, name and
  // device so far are passed.
  std::string DeviceFor(const py::object& op, const std::string& type, const std::string& name,
                        const std::string& device) {
    proto::NodeDef node;
    node.set_op(type);
    node.set_name(name);
    node.set_device(device);
    current_op_ = op;
    struct Reset {
      py::object* op;
      ~Reset() { *op = py::none(); }
    } reset{&current_op_};
    return function_(node);
  }

 private:
  py::object strategy_;
  py::object current_op_ = py::none();
  Scope::DeviceFunction function_;
};

// Python's (gradient, variable) pairs: per variable, a gradient None, ("dense", (node, i))
// or ("sparse", indices, values, dense_shape).
std::vector<train::GradAndVar> ToGradAndVars(const py::object& graph,
                                             const std::vector<py::object>& grads,
                                             const std::vector<VariableSpec>& vars) {
  if (grads.size() != vars.size()) {
    ThrowIfError(errors::InvalidArgument("apply_gradients: ", grads.size(), " gradients for ",
                                         vars.size(), " variables"));
  }
  std::vector<train::GradAndVar> pairs;
  for (size_t i = 0; i < grads.size(); ++i) {
    Gradient g;
    if (!grads[i].is_none()) {
      auto t = grads[i].cast<py::tuple>();
      if (t[0].cast<std::string>() == "dense") {
        g.dense = ToOutput(graph, t[1].cast<NodeOutput>());
      } else {
        g.sparse = IndexedSlices{.indices = ToOutput(graph, t[1].cast<NodeOutput>()),
                                 .values = ToOutput(graph, t[2].cast<NodeOutput>()),
                                 .dense_shape = ToOutput(graph, t[3].cast<NodeOutput>())};
      }
    }
    pairs.push_back({g, ToVariable(graph, vars[i])});
  }
  return pairs;
}

// The variables an optimizer made: (checkpoint name, handle node, initializer node, the node
// of the variable a slot serves ("" for others), the slot's name as requested, dtype enum,
// shape).
py::list VariablesMade(const train::ModelVariables& made) {
  py::list out;
  for (const train::ModelVariable& v : made.all()) {
    out.append(py::make_tuple(v.name, v.var.op().name(), v.initializer.name(), v.slot_of,
                              v.slot_name, static_cast<int>(v.var.dtype), v.var.shape));
  }
  return out;
}

Scope OnDevice(const py::object& graph, const std::string& device) {
  const Scope& root = GraphScope(graph);
  return device.empty() ? root : root.WithDevice(device);
}

// One of tensorweave/train/optimizer.h's optimizers; keeps its slots between calls.
class PyOptimizer {
 public:
  explicit PyOptimizer(std::unique_ptr<train::Optimizer> optimizer)
      : optimizer_(std::move(optimizer)) {}

  // Builds the update ops on `device` (the updates themselves run beside their variables).
  // Returns (the train op's name, VariablesMade).
  py::tuple ApplyGradients(const py::object& graph, const std::vector<py::object>& grads,
                           const std::vector<VariableSpec>& vars,
                           const std::optional<VariableSpec>& global_step,
                           const std::string& device) {
    std::vector<train::GradAndVar> pairs = ToGradAndVars(graph, grads, vars);
    std::optional<ops::Variable> step;
    if (global_step) step = ToVariable(graph, *global_step);
    train::ModelVariables slots;
    Operation op =
        ValueOrThrow(optimizer_->ApplyGradients(OnDevice(graph, device), pairs, &slots, step));
    return py::make_tuple(op.name(), VariablesMade(slots));
  }

  // The learning rate of the updates built next: output `ref` ("node", index) of `graph`.
  void SetLearningRate(const py::object& graph, const std::pair<std::string, int>& ref) {
    optimizer_->SetLearningRate(Output(GraphNode(graph, ref.first), ref.second));
  }

  std::string name() const { return optimizer_->name(); }
  train::Optimizer* get() { return optimizer_.get(); }

 private:
  std::unique_ptr<train::Optimizer> optimizer_;
};

// tensorweave/train/sync_replicas.h's SyncReplicas: its nodes by name, its chief loop.
class PySyncReplicas {
 public:
  PySyncReplicas(const py::object& graph, PyOptimizer& optimizer,
                 const std::vector<py::object>& grads, const std::vector<VariableSpec>& vars,
                 const VariableSpec& global_step, int replicas_to_aggregate, int total_num_replicas,
                 const std::string& device) {
    train::ModelVariables made;
    sync_ = ValueOrThrow(train::SyncReplicas::Create(
        OnDevice(graph, device), optimizer.get(), ToGradAndVars(graph, grads, vars), &made,
        ToVariable(graph, global_step),
        {.replicas_to_aggregate = replicas_to_aggregate,
         .total_num_replicas = total_num_replicas}));
    made_ = VariablesMade(made);
  }

  py::dict Nodes() const {
    py::dict d;
    d["train_op"] = sync_->train_op().name();
    d["chief_update_op"] = sync_->chief_update_op().name();
    d["init_local_step"] = sync_->init_local_step_op().name();
    d["init_tokens"] = sync_->init_tokens_op().name();
    d["num_init_tokens"] = sync_->num_init_tokens().op().name() + ":0";
    d["close_tokens"] = sync_->close_tokens_op().name();
    d["local_step"] = sync_->local_step().op().name();
    return d;
  }
  const py::list& made() const { return made_; }

  void StartChiefLoop(const std::string& target, std::vector<std::string> device_filters) {
    WithoutGil([&] {
      sync_->StartChiefLoop({.target = target, .device_filters = std::move(device_filters)});
    });
  }
  void Stop() {
    WithoutGil([&] { sync_->Stop(); });
  }

 private:
  std::unique_ptr<train::SyncReplicas> sync_;
  py::list made_;
};

std::unique_ptr<PyOptimizer> MakeOptimizer(const std::string& kind, const py::dict& params,
                                           bool use_locking) {
  auto get = [&params](const char* key) {
    if (!params.contains(key)) {
      ThrowIfError(errors::InvalidArgument("optimizer parameter ", key, " is missing"));
    }
    return params[key].cast<double>();
  };
  train::OptimizerOptions o{.use_locking = use_locking};
  std::unique_ptr<train::Optimizer> made;
  auto f = [](double v) { return static_cast<float>(v); };
  if (kind == "GradientDescent") {
    made = train::GradientDescentOptimizer(f(get("learning_rate")), o);
  } else if (kind == "Momentum") {
    made = train::MomentumOptimizer(f(get("learning_rate")), f(get("momentum")),
                                    get("use_nesterov") != 0, o);
  } else if (kind == "Adagrad") {
    made = train::AdagradOptimizer(f(get("learning_rate")), f(get("initial_accumulator_value")), o);
  } else if (kind == "Adam") {
    made = train::AdamOptimizer(f(get("learning_rate")), f(get("beta1")), f(get("beta2")),
                                f(get("epsilon")), o);
  } else if (kind == "RMSProp") {
    made = train::RMSPropOptimizer(f(get("learning_rate")), f(get("decay")), f(get("momentum")),
                                   f(get("epsilon")), o);
  } else if (kind == "Ftrl") {
    made = train::FtrlOptimizer(
        f(get("learning_rate")),
        {.learning_rate_power = f(get("learning_rate_power")),
         .initial_accumulator_value = f(get("initial_accumulator_value")),
         .l1_regularization_strength = f(get("l1_regularization_strength")),
         .l2_regularization_strength = f(get("l2_regularization_strength")),
         .l2_shrinkage_regularization_strength = f(get("l2_shrinkage_regularization_strength"))},
        o);
  } else {
    ThrowIfError(errors::InvalidArgument("no optimizer called ", kind));
  }
  return std::make_unique<PyOptimizer>(std::move(made));
}

// PartitionedVariable::Lookup of `ids` over `parts` (with their row offsets in a variable of
// `full_shape`), by strategy "div" or "mod", built on `device`. Returns the rows' output.
NodeOutput PartitionedLookup(const py::object& graph, const std::vector<VariableSpec>& parts,
                             const std::vector<int64_t>& row_offsets,
                             const std::vector<int64_t>& full_shape, const NodeOutput& ids,
                             const std::string& strategy, const std::string& device) {
  if (strategy != "div" && strategy != "mod") {
    ThrowIfError(errors::InvalidArgument("Unrecognized partition strategy: ", strategy,
                                         ". Must be one of: mod, div"));
  }
  train::PartitionedVariable table{.dtype = static_cast<DataType>(std::get<1>(parts.at(0))),
                                   .shape = full_shape,
                                   .row_offsets = row_offsets};
  for (const VariableSpec& part : parts) table.parts.push_back(ToVariable(graph, part));
  const Scope& root = GraphScope(graph);
  Output rows = table.Lookup(OnDevice(graph, device), ToOutput(graph, ids),
                             strategy == "div" ? train::PartitionedVariable::Strategy::kDiv
                                               : train::PartitionedVariable::Strategy::kMod);
  ThrowIfError(root.status());
  return {rows.op().name(), rows.index()};
}

// A partitioner's answer for Python: TF's errors are ValueError (a bad argument or shape)
// and NotImplementedError (an axis other than 0).
std::vector<int64_t> PartitionsOrThrow(StatusOr<std::vector<int64_t>> partitions) {
  if (partitions.ok()) return *std::move(partitions);
  const std::string message(partitions.status().message());
  if (absl::IsUnimplemented(partitions.status())) {
    PyErr_SetString(PyExc_NotImplementedError, message.c_str());
    throw py::error_already_set();
  }
  throw py::value_error(message);
}

TensorShape ShapeOrThrow(const std::vector<int64_t>& dims) {
  StatusOr<TensorShape> shape = TensorShape::Create(dims);
  if (!shape.ok()) throw py::value_error(std::string(shape.status().message()));
  return *std::move(shape);
}

DataType DataTypeOrThrow(const std::string& name) {
  StatusOr<DataType> dtype = DataTypeFromName(name);
  if (!dtype.ok()) throw py::value_error(std::string(dtype.status().message()));
  return *dtype;
}

void BindPartitioners(py::module_& m) {
  m.def(
      "fixed_size_partitions",
      [](const std::vector<int64_t>& shape, int64_t num_shards, int axis) {
        return PartitionsOrThrow(train::FixedSizePartitions(ShapeOrThrow(shape), num_shards, axis));
      },
      py::arg("shape"), py::arg("num_shards"), py::arg("axis"));
  m.def(
      "min_max_variable_partitions",
      [](const std::vector<int64_t>& shape, const std::string& dtype, int64_t max_partitions,
         int64_t min_slice_size, int axis, int64_t bytes_per_string_element) {
        return PartitionsOrThrow(train::MinMaxVariablePartitions(
            ShapeOrThrow(shape), DataTypeOrThrow(dtype), max_partitions, min_slice_size, axis,
            bytes_per_string_element));
      },
      py::arg("shape"), py::arg("dtype"), py::arg("max_partitions"), py::arg("min_slice_size"),
      py::arg("axis"), py::arg("bytes_per_string_element"));
  m.def(
      "variable_axis_size_partitions",
      [](const std::vector<int64_t>& shape, const std::string& dtype, int64_t max_shard_bytes,
         int axis, int64_t bytes_per_string_element, int64_t max_shards) {
        return PartitionsOrThrow(train::VariableAxisSizePartitions(
            ShapeOrThrow(shape), DataTypeOrThrow(dtype), max_shard_bytes, axis,
            bytes_per_string_element, max_shards));
      },
      py::arg("shape"), py::arg("dtype"), py::arg("max_shard_bytes"), py::arg("axis"),
      py::arg("bytes_per_string_element"), py::arg("max_shards"));
}

}  // namespace

void BindTrain(py::module_& m) {
  py::class_<DeviceSetter>(m, "ReplicaDeviceSetter")
      .def(py::init<int, std::string, std::string, bool, std::vector<std::string>, py::object>(),
           py::arg("ps_tasks"), py::arg("ps_device"), py::arg("worker_device"),
           py::arg("merge_devices"), py::arg("ps_ops"), py::arg("strategy"))
      .def("device_for", &DeviceSetter::DeviceFor, py::arg("op"), py::arg("type"), py::arg("name"),
           py::arg("device"));
  py::class_<PyOptimizer>(m, "Optimizer")
      .def(py::init(&MakeOptimizer), py::arg("kind"), py::arg("params"), py::arg("use_locking"))
      .def_property_readonly("name", &PyOptimizer::name)
      .def("set_learning_rate", &PyOptimizer::SetLearningRate, py::arg("graph"), py::arg("ref"))
      .def("apply_gradients", &PyOptimizer::ApplyGradients, py::arg("graph"), py::arg("grads"),
           py::arg("vars"), py::arg("global_step"), py::arg("device"));
  py::class_<PySyncReplicas>(m, "SyncReplicas")
      .def(py::init<const py::object&, PyOptimizer&, const std::vector<py::object>&,
                    const std::vector<VariableSpec>&, const VariableSpec&, int, int,
                    const std::string&>(),
           py::arg("graph"), py::arg("optimizer"), py::arg("grads"), py::arg("vars"),
           py::arg("global_step"), py::arg("replicas_to_aggregate"), py::arg("total_num_replicas"),
           py::arg("device"))
      .def("nodes", &PySyncReplicas::Nodes)
      .def("made", &PySyncReplicas::made)
      .def("start_chief_loop", &PySyncReplicas::StartChiefLoop, py::arg("target"),
           py::arg("device_filters"))
      .def("stop", &PySyncReplicas::Stop);
  BindPartitioners(m);
  m.def("partitioned_lookup", &PartitionedLookup, py::arg("graph"), py::arg("parts"),
        py::arg("row_offsets"), py::arg("full_shape"), py::arg("ids"), py::arg("strategy"),
        py::arg("device"));
}

}  // namespace tw::python
