// Checkpoints from Python: tensorweave/train/saver.h's Saver over a `_native.Graph`, a
// checkpoint directory's bookkeeping (CheckpointDirectory), its state file, and its latest
// checkpoint. The Python Saver runs the steps in its own session and hands the values
// across; which values, which files and every check are the C++ Saver's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "python/native/errors.h"
#include "python/native/gil.h"
#include "python/native/graph_refs.h"
#include "python/native/module.h"
#include "python/native/tensor_numpy.h"
#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_reader.h"
#include "src/checkpoint/checkpoint_state.h"
#include "tensorweave/train/saver.h"

namespace py = pybind11;

namespace tw::python {
namespace {

using SaveableSpec = std::tuple<std::string, VariableSpec, std::vector<int64_t>, int64_t, bool>;

std::vector<std::string> OutputNames(const std::vector<Output>& outputs) {
  std::vector<std::string> names;
  for (const Output& o : outputs) names.push_back(o.name());
  return names;
}

// A Saver over variables given as (checkpoint name, (handle node, dtype, shape), full
// shape, row offset, is an iterator); its nodes are built at construction. `checkpoint_dir` is
// needed (and named by the nodes) only when the variables' tasks write the files.
class PySaver {
 public:
  PySaver(const py::object& graph, const std::vector<SaveableSpec>& vars,
          const std::string& checkpoint_dir, int max_to_keep, bool write_on_variable_tasks,
          bool tensorflow_format) {
    std::vector<train::SaveableVariable> saveables;
    for (const auto& [name, spec, full_shape, offset, iterator] : vars) {
      saveables.push_back(
          {.name = name,
           .var = ToVariable(graph, spec),
           .full_shape = full_shape,
           .row_offset = offset,
           .kind = iterator ? train::SaveableKind::kIterator : train::SaveableKind::kVariable});
    }
    saver_ = ValueOrThrow(train::Saver::Create(
        GraphScope(graph), std::move(saveables),
        {.checkpoint_dir = checkpoint_dir,
         .max_to_keep = max_to_keep,
         .write_on_variable_tasks = write_on_variable_tasks,
         .format = tensorflow_format ? train::CheckpointFormat::kTensorFlow
                                     : train::CheckpointFormat::kTensorweave}));
  }

  // In this process: the tensors to fetch, then write_values; read_values, then feed them
  // to the restore inputs and run the restore op.
  std::vector<std::string> ValueNames() const { return OutputNames(saver_->value_outputs()); }
  std::vector<std::string> RestoreInputNames() const {
    return OutputNames(saver_->restore_inputs());
  }
  std::string RestoreOpName() const { return saver_->restore_op().name(); }

  void WriteValues(const std::string& prefix, const py::list& arrays) {
    const std::vector<Output>& outputs = saver_->value_outputs();
    if (arrays.size() != outputs.size()) {
      ThrowIfError(errors::InvalidArgument("Saver.write_values: ", arrays.size(), " values for ",
                                           outputs.size(), " variables"));
    }
    std::vector<Tensor> values;
    values.reserve(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      values.push_back(
          ValueOrThrow(NumpyToTensor(arrays[i], outputs[i].type(), outputs[i].name())));
    }
    ThrowIfError(WithoutGil([&] { return saver_->WriteValues(prefix, values); }));
  }

  py::list ReadValues(const std::string& prefix) {
    std::vector<Tensor> values =
        ValueOrThrow(WithoutGil([&] { return saver_->ReadValues(prefix); }));
    py::list out;
    for (Tensor& t : values) out.append(ValueOrThrow(TensorToNumpy(std::move(t))));
    return out;
  }

  // On the variables' tasks: (prefix placeholder tensor name, save op name, restore op name).
  py::tuple Nodes() const {
    return py::make_tuple(saver_->prefix_placeholder().name(), saver_->save_op().name(),
                          saver_->restore_op().name());
  }

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

std::unique_ptr<train::CheckpointDirectory> MakeDirectory(const std::string& dir, int max_to_keep) {
  return ValueOrThrow(train::CheckpointDirectory::Create(dir, {.max_to_keep = max_to_keep}));
}

}  // namespace

void BindSaver(py::module_& m) {
  py::class_<PySaver>(m, "Saver")
      .def(py::init<const py::object&, const std::vector<SaveableSpec>&, const std::string&, int,
                    bool, bool>(),
           py::arg("graph"), py::arg("vars"), py::arg("checkpoint_dir"), py::arg("max_to_keep"),
           py::arg("write_on_variable_tasks"), py::arg("tensorflow_format"))
      .def("value_names", &PySaver::ValueNames)
      .def("restore_input_names", &PySaver::RestoreInputNames)
      .def("restore_op_name", &PySaver::RestoreOpName)
      .def("write_values", &PySaver::WriteValues, py::arg("prefix"), py::arg("values"))
      .def("read_values", &PySaver::ReadValues, py::arg("prefix"))
      .def("nodes", &PySaver::Nodes);
  py::class_<train::CheckpointDirectory>(m, "CheckpointDirectory")
      .def(py::init(&MakeDirectory), py::arg("directory"), py::arg("max_to_keep"))
      .def(
          "begin_save",
          [](train::CheckpointDirectory& d, std::optional<int64_t> step, const std::string& base) {
            return ValueOrThrow(d.BeginSave(step, base));
          },
          py::arg("global_step"), py::arg("basename"))
      .def(
          "finish_save",
          [](train::CheckpointDirectory& d, const std::string& prefix) {
            ThrowIfError(d.FinishSave(prefix));
          },
          py::arg("prefix"))
      .def(
          "begin_restore",
          [](const train::CheckpointDirectory& d, const std::string& prefix) {
            return ValueOrThrow(d.BeginRestore(prefix));
          },
          py::arg("prefix"))
      .def_property_readonly("directory", &train::CheckpointDirectory::dir);
  m.def(
      "latest_checkpoint",
      [](const std::string& dir) -> py::object {
        auto latest = train::LatestCheckpoint(dir);
        if (IsNotFound(latest.status())) return py::none();
        return py::str(ValueOrThrow(std::move(latest)));
      },
      py::arg("checkpoint_dir"));
  m.def("checkpoint_state", &CheckpointState, py::arg("checkpoint_dir"));
  // tf.train.list_variables and load_variable: a checkpoint's names with their full
  // shapes, and one whole tensor, read (and checksummed) by the C++ CheckpointReader.
  m.def(
      "checkpoint_variables",
      [](const std::string& prefix) {
        auto reader = ValueOrThrow(checkpoint::CheckpointReader::Open(prefix));
        std::vector<std::pair<std::string, std::vector<int64_t>>> out;
        for (const std::string& name : reader->Names()) {
          auto info = ValueOrThrow(reader->Find(name));
          const auto& dims = info.full_shape.dims();
          out.emplace_back(name, std::vector<int64_t>(dims.begin(), dims.end()));
        }
        return out;
      },
      py::arg("prefix"));
  m.def(
      "checkpoint_tensor",
      [](const std::string& prefix, const std::string& name) {
        auto reader = ValueOrThrow(checkpoint::CheckpointReader::Open(prefix));
        auto info = ValueOrThrow(reader->Find(name));
        const int64_t rows = info.full_shape.rank() == 0 ? 1 : info.full_shape.dim(0);
        return ValueOrThrow(TensorToNumpy(ValueOrThrow(reader->ReadRows(name, 0, rows))));
      },
      py::arg("prefix"), py::arg("name"));
}

}  // namespace tw::python
