// SavedModel export (src/saved_model/meta_graph_export.h) for tf.saved_model's builder:
// the Python layer gathers the signatures and variables, C++ converts and writes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "python/native/errors.h"
#include "python/native/module.h"
#include "src/saved_model/graph_import.h"
#include "src/saved_model/meta_graph_export.h"
#include "src/saved_model/saved_model_reader.h"

namespace py = pybind11;

namespace tw::python {
namespace {

// (key, tensor name, dtype enum, dims or None for an unknown rank)
using TensorTuple = std::tuple<std::string, std::string, int, std::optional<std::vector<int64_t>>>;
// (key, method name, inputs, outputs)
using SignatureTuple =
    std::tuple<std::string, std::string, std::vector<TensorTuple>, std::vector<TensorTuple>>;
// (checkpoint name, Variable node, dtype enum, shape, full shape ([] when whole), row offset)
using VariableTuple =
    std::tuple<std::string, std::string, int, std::vector<int64_t>, std::vector<int64_t>, int64_t>;

std::vector<saved_model::TensorSpec> Tensors(const std::vector<TensorTuple>& tuples) {
  std::vector<saved_model::TensorSpec> out;
  for (const auto& [key, name, dtype, dims] : tuples) {
    out.push_back({.key = key,
                   .name = name,
                   .dtype = static_cast<DataType>(dtype),
                   .shape = dims ? PartialShape::Of(*dims) : PartialShape::Unknown()});
  }
  return out;
}

// The serialized TensorFlow MetaGraphDef of the serialized tensorweave GraphDef.
py::bytes ExportMetaGraph(const py::bytes& graph_def, const std::vector<std::string>& tags,
                          const std::vector<SignatureTuple>& signatures,
                          const std::vector<VariableTuple>& variables,
                          const std::vector<std::pair<std::string, std::string>>& assets,
                          const std::string& main_op, bool clear_devices) {
  proto::GraphDef graph;
  if (!graph.ParseFromString(std::string(graph_def))) {
    ThrowIfError(errors::InvalidArgument("export_meta_graph: not a serialized GraphDef"));
  }
  saved_model::MetaGraphSpec spec{.tags = tags, .main_op = main_op, .clear_devices = clear_devices};
  for (const auto& [key, method, inputs, outputs] : signatures) {
    spec.signatures.push_back({.key = key,
                               .method_name = method,
                               .inputs = Tensors(inputs),
                               .outputs = Tensors(outputs)});
  }
  for (const auto& [tensor, filename] : assets) {
    spec.assets.push_back({.tensor = tensor, .filename = filename});
  }
  for (const auto& [name, node, dtype, shape, full_shape, offset] : variables) {
    spec.variables.push_back({.checkpoint_name = name,
                              .node = node,
                              .dtype = static_cast<DataType>(dtype),
                              .shape = shape,
                              .full_shape = full_shape,
                              .row_offset = offset});
  }
  return py::bytes(ValueOrThrow(saved_model::ExportMetaGraph(graph, spec)).SerializeAsString());
}

void WriteSavedModel(const std::string& dir, const std::vector<py::bytes>& meta_graphs,
                     bool as_text) {
  std::vector<tfproto::MetaGraphDef> metas;
  for (const py::bytes& bytes : meta_graphs) {
    if (!metas.emplace_back().ParseFromString(std::string(bytes))) {
      ThrowIfError(errors::InvalidArgument("write_saved_model: not a serialized MetaGraphDef"));
    }
  }
  ThrowIfError(saved_model::WriteSavedModel(dir, metas, as_text));
}

py::tuple TensorInfoTuple(const tfproto::TensorInfo& info) {
  py::object dims = py::none();
  if (!info.tensor_shape().unknown_rank()) {
    std::vector<int64_t> d;
    for (const auto& dim : info.tensor_shape().dim()) d.push_back(dim.size());
    dims = py::cast(d);
  }
  return py::make_tuple(info.name(), static_cast<int>(info.dtype()), dims);
}

// The MetaGraphDef of `tags` in `export_dir`, its graph converted to tensorweave's:
// {"graph_def": serialized tw GraphDef, "tags", "signatures": {key: (method, {key:
// (name, dtype, dims | None)}, {...})}, "saver": (filename tensor, restore op) | None,
// "load_steps": [([(tensor, string fed)], node to run)] (saved_model::LoadSteps)}.
py::dict ReadSavedModel(const std::string& export_dir, const std::vector<std::string>& tags) {
  tfproto::MetaGraphDef meta = ValueOrThrow(saved_model::ReadMetaGraph(export_dir, tags));
  proto::GraphDef graph = ValueOrThrow(saved_model::ImportGraph(meta.graph_def()));
  py::dict out;
  out["graph_def"] = py::bytes(graph.SerializeAsString());
  out["tags"] = std::vector<std::string>(meta.meta_info_def().tags().begin(),
                                         meta.meta_info_def().tags().end());
  py::dict signatures;
  for (const auto& [key, sig] : meta.signature_def()) {
    py::dict inputs, outputs;
    for (const auto& [k, info] : sig.inputs()) inputs[py::str(k)] = TensorInfoTuple(info);
    for (const auto& [k, info] : sig.outputs()) outputs[py::str(k)] = TensorInfoTuple(info);
    signatures[py::str(key)] = py::make_tuple(sig.method_name(), inputs, outputs);
  }
  out["signatures"] = signatures;
  out["saver"] = meta.has_saver_def()
                     ? py::object(py::make_tuple(meta.saver_def().filename_tensor_name(),
                                                 meta.saver_def().restore_op_name()))
                     : py::object(py::none());
  py::list steps;  // saved_model::LoadSteps: (feeds, target) runs
  for (const saved_model::LoadStep& step : saved_model::LoadSteps(meta, export_dir)) {
    steps.append(py::make_tuple(step.feeds, step.target));
  }
  out["load_steps"] = steps;
  return out;
}

}  // namespace

void BindSavedModel(py::module_& m) {
  m.def("export_meta_graph", &ExportMetaGraph, py::arg("graph_def"), py::arg("tags"),
        py::arg("signatures"), py::arg("variables"), py::arg("assets"), py::arg("main_op"),
        py::arg("clear_devices"));
  m.def("read_saved_model", &ReadSavedModel, py::arg("export_dir"), py::arg("tags"));
  m.def("write_saved_model", &WriteSavedModel, py::arg("export_dir"), py::arg("meta_graphs"),
        py::arg("as_text"));
}

}  // namespace tw::python
