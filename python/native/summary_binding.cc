// Event files from Python: tensorweave/summary.h's EventFileWriter, which
// tf.summary.FileWriter (python/tensorweave/summary/writer.py) wraps. The file I/O runs
// without the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/native/errors.h"
#include "python/native/module.h"
#include "tensorweave/protobuf/summary.pb.h"
#include "tensorweave/summary.h"

namespace py = pybind11;

namespace tw::python {
namespace {

// Runs `fn` (returning a Status) without the GIL, then raises its error with the GIL held.
template <typename Fn>
void Unlocked(Fn&& fn) {
  Status s;
  {
    py::gil_scoped_release release;
    s = fn();
  }
  ThrowIfError(s);
}

class PyEventFileWriter {
 public:
  PyEventFileWriter(const std::string& logdir, int max_queue, double flush_secs,
                    const std::string& filename_suffix) {
    if (max_queue < 1) {
      ThrowIfError(errors::InvalidArgument("max_queue must be at least 1, got ", max_queue));
    }
    if (!(flush_secs >= 0)) {
      ThrowIfError(errors::InvalidArgument("flush_secs must be >= 0, got ", flush_secs));
    }
    writer_ =
        ValueOrThrow(EventFileWriter::Create(logdir, {.filename_suffix = filename_suffix,
                                                      .max_queue = max_queue,
                                                      .flush_secs = absl::Seconds(flush_secs)}));
  }

  void AddSummary(const std::string& serialized, int64_t step) {
    Unlocked([&] { return writer_->AddSummary(serialized, step); });
  }
  void AddScalar(const std::string& tag, float value, int64_t step) {
    Unlocked([&] { return writer_->AddScalar(tag, value, step); });
  }
  void AddGraph(const std::string& serialized_graph_def, int64_t step) {
    proto::GraphDef graph;
    if (!graph.ParseFromString(serialized_graph_def)) {
      ThrowIfError(errors::InvalidArgument("add_graph: the ", serialized_graph_def.size(),
                                           " bytes given are not a serialized GraphDef"));
    }
    Unlocked([&] { return writer_->AddGraph(graph, step); });
  }
  void AddSessionLog(int status, int64_t step) {
    if (!proto::SessionLog::SessionStatus_IsValid(status)) {
      ThrowIfError(errors::InvalidArgument("add_session_log: unknown SessionLog status ", status));
    }
    Unlocked([&] {
      return writer_->AddSessionLog(static_cast<proto::SessionLog::SessionStatus>(status), step);
    });
  }
  void Flush() {
    Unlocked([&] { return writer_->Flush(); });
  }
  void Close() {
    Unlocked([&] { return writer_->Close(); });
  }
  const std::string& path() const { return writer_->path(); }

 private:
  std::unique_ptr<EventFileWriter> writer_;
};

}  // namespace

void BindSummary(py::module_& m) {
  // A serialized Summary of (tag, simple_value) pairs: tf.Summary's SerializeToString.
  m.def(
      "scalar_summary",
      [](const std::vector<std::pair<std::string, float>>& values) {
        proto::Summary summary;
        for (const auto& [tag, value] : values) {
          proto::Summary::Value* v = summary.add_value();
          v->set_tag(tag);
          v->set_simple_value(value);
        }
        return py::bytes(summary.SerializeAsString());
      },
      py::arg("values"));
  py::class_<PyEventFileWriter>(m, "EventFileWriter")
      .def(py::init<const std::string&, int, double, const std::string&>(), py::arg("logdir"),
           py::arg("max_queue"), py::arg("flush_secs"), py::arg("filename_suffix"))
      .def("add_summary", &PyEventFileWriter::AddSummary, py::arg("serialized"), py::arg("step"))
      .def("add_scalar", &PyEventFileWriter::AddScalar, py::arg("tag"), py::arg("value"),
           py::arg("step"))
      .def("add_graph", &PyEventFileWriter::AddGraph, py::arg("graph_def"), py::arg("step"))
      .def("add_session_log", &PyEventFileWriter::AddSessionLog, py::arg("status"), py::arg("step"))
      .def("flush", &PyEventFileWriter::Flush)
      .def("close", &PyEventFileWriter::Close)
      .def_property_readonly("path", &PyEventFileWriter::path);
}

}  // namespace tw::python
