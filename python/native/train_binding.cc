// The training half of the native module: the replica device setter, optimizers and the
// Saver of tensorweave/train, over a `_native.Graph`.
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
#include "python/native/module.h"
#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_state.h"
#include "tensorweave/train/device_setter.h"
#include "tensorweave/train/optimizer.h"
#include "tensorweave/train/saver.h"
#include "tensorweave/train/variables.h"

namespace py = pybind11;

namespace tw::python {
namespace {

using NodeOutput = std::pair<std::string, int>;
// A variable as Python names it: (handle node, dtype enum, shape).
using VariableSpec = std::tuple<std::string, int, std::vector<int64_t>>;

ops::Variable ToVariable(const py::handle& graph, const VariableSpec& spec) {
  const auto& [node, dtype, shape] = spec;
  return ops::Variable{.handle = Output(GraphNode(graph, node), 0),
                       .dtype = static_cast<DataType>(dtype),
                       .shape = shape};
}

Output ToOutput(const py::handle& graph, const NodeOutput& o) {
  return Output(GraphNode(graph, o.first), o.second);
}

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

// One of tensorweave/train/optimizer.h's optimizers; keeps its slots between calls.
class PyOptimizer {
 public:
  explicit PyOptimizer(std::unique_ptr<train::Optimizer> optimizer)
      : optimizer_(std::move(optimizer)) {}

  // grads: per variable, None, ("dense", (node, i)) or ("sparse", indices, values,
  // dense_shape). Builds the update ops under `name` on `device` (the updates themselves
  // run beside their variables). Returns (the train op's name, the slots made: (checkpoint
  // name, handle node, initializer node, variable node it belongs to)).
  py::tuple ApplyGradients(const py::object& graph, const std::vector<py::object>& grads,
                           const std::vector<VariableSpec>& vars,
                           const std::optional<VariableSpec>& global_step,
                           const std::string& device) {
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
    std::optional<ops::Variable> step;
    if (global_step) step = ToVariable(graph, *global_step);
    train::ModelVariables slots;
    const Scope& root = GraphScope(graph);
    Operation op = ValueOrThrow(optimizer_->ApplyGradients(
        device.empty() ? root : root.WithDevice(device), pairs, &slots, step));
    py::list made;
    for (const train::ModelVariable& v : slots.all()) {
      made.append(py::make_tuple(v.name, v.var.op().name(), v.initializer.name()));
    }
    return py::make_tuple(op.name(), made);
  }

  std::string name() const { return optimizer_->name(); }

 private:
  std::unique_ptr<train::Optimizer> optimizer_;
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
  const Scope scope = device.empty() ? root : root.WithDevice(device);
  Output rows = table.Lookup(scope, ToOutput(graph, ids),
                             strategy == "div" ? train::PartitionedVariable::Strategy::kDiv
                                               : train::PartitionedVariable::Strategy::kMod);
  ThrowIfError(root.status());
  return {rows.op().name(), rows.index()};
}

// A Saver over variables given as (checkpoint name, handle node, dtype, shape, full shape,
// row offset); its nodes are built at construction for one checkpoint directory.
class PySaver {
 public:
  PySaver(
      const py::object& graph,
      const std::vector<std::tuple<std::string, VariableSpec, std::vector<int64_t>, int64_t>>& vars,
      const std::string& checkpoint_dir, int max_to_keep) {
    std::vector<train::SaveableVariable> saveables;
    for (const auto& [name, spec, full_shape, offset] : vars) {
      saveables.push_back({.name = name,
                           .var = ToVariable(graph, spec),
                           .full_shape = full_shape,
                           .row_offset = offset});
    }
    saver_ = ValueOrThrow(
        train::Saver::Create(GraphScope(graph), std::move(saveables),
                             {.checkpoint_dir = checkpoint_dir, .max_to_keep = max_to_keep}));
  }

  std::string BeginSave(std::optional<int64_t> step, const std::string& basename) {
    return ValueOrThrow(saver_->BeginSave(step, basename));
  }
  void FinishSave(const std::string& prefix) { ThrowIfError(saver_->FinishSave(prefix)); }
  std::string BeginRestore(const std::string& prefix) {
    return ValueOrThrow(saver_->BeginRestore(prefix));
  }
  // (prefix placeholder tensor name, save op name, restore op name).
  py::tuple Nodes() const {
    return py::make_tuple(saver_->prefix_placeholder().op().name() + ":0", saver_->save_op().name(),
                          saver_->restore_op().name());
  }
  const std::string& directory() const { return saver_->checkpoint_dir(); }

 private:
  std::unique_ptr<train::Saver> saver_;
};

// The directory's state file as (latest, all), or None when there is none.
py::object CheckpointState(const std::string& dir) {
  auto canonical = checkpoint::CanonicalDirectory(dir);
  if (!canonical.ok()) return py::none();
  auto state = checkpoint::ReadCheckpointState(*canonical);
  if (IsNotFound(state.status())) return py::none();
  ThrowIfError(state.status());
  return py::make_tuple(state->model_checkpoint_path, state->all_model_checkpoint_paths);
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
      .def("apply_gradients", &PyOptimizer::ApplyGradients, py::arg("graph"), py::arg("grads"),
           py::arg("vars"), py::arg("global_step"), py::arg("device"));
  py::class_<PySaver>(m, "Saver")
      .def(py::init<const py::object&,
                    const std::vector<
                        std::tuple<std::string, VariableSpec, std::vector<int64_t>, int64_t>>&,
                    const std::string&, int>(),
           py::arg("graph"), py::arg("vars"), py::arg("checkpoint_dir"), py::arg("max_to_keep"))
      .def("begin_save", &PySaver::BeginSave, py::arg("global_step"), py::arg("basename"))
      .def("finish_save", &PySaver::FinishSave, py::arg("prefix"))
      .def("begin_restore", &PySaver::BeginRestore, py::arg("prefix"))
      .def("nodes", &PySaver::Nodes)
      .def_property_readonly("directory", &PySaver::directory);
  m.def(
      "latest_checkpoint",
      [](const std::string& dir) -> py::object {
        auto latest = train::LatestCheckpoint(dir);
        if (IsNotFound(latest.status())) return py::none();
        return py::str(ValueOrThrow(std::move(latest)));
      },
      py::arg("checkpoint_dir"));
  m.def("checkpoint_state", &CheckpointState, py::arg("checkpoint_dir"));
  m.def("partitioned_lookup", &PartitionedLookup, py::arg("graph"), py::arg("parts"),
        py::arg("row_offsets"), py::arg("full_shape"), py::arg("ids"), py::arg("strategy"),
        py::arg("device"));
}

}  // namespace tw::python
