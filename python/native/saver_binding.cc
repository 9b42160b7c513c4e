// Checkpoints from Python: tensorweave/train/saver.h's Saver over a `_native.Graph`, the
// checkpoint directory's state file, and its latest checkpoint.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "python/native/errors.h"
#include "python/native/graph_refs.h"
#include "python/native/module.h"
#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_state.h"
#include "tensorweave/train/saver.h"

namespace py = pybind11;

namespace tw::python {
namespace {

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

void BindSaver(py::module_& m) {
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
}

}  // namespace tw::python
