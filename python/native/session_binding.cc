// Sessions from Python: a ClientSession on a `_native.Graph`, run by tensor and node names.
// The GIL is released while a step runs; on the main thread Ctrl-C cancels the step
// (interrupt.h), which leaves the session usable, and raises KeyboardInterrupt.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "python/native/errors.h"
#include "python/native/interrupt.h"
#include "python/native/module.h"
#include "python/native/tensor_numpy.h"
#include "tensorweave/session.h"

namespace py = pybind11;

namespace tw::python {
namespace {

// "node:3" -> the graph's Output; "node" -> output 0.
Output OutputOf(const py::handle& graph, const std::string& name) {
  const size_t colon = name.rfind(':');
  int index = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(absl::string_view(name).substr(colon + 1), &index)) {
    return Output(GraphOperation(graph, name), 0);
  }
  return Output(GraphOperation(graph, name.substr(0, colon)), index);
}

class PySession {
 public:
  PySession(py::object graph, const std::string& target, int num_threads,
            std::vector<std::string> device_filters, bool isolate_session,
            int64_t operation_timeout_ms)
      : graph_(std::move(graph)),
        session_(std::make_unique<ClientSession>(
            GraphScope(graph_),
            SessionOptions{.target = target,
                           .num_threads = num_threads,
                           .device_filters = std::move(device_filters),
                           .isolate_session = isolate_session,
                           .operation_timeout = operation_timeout_ms > 0
                                                    ? absl::Milliseconds(operation_timeout_ms)
                                                    : absl::InfiniteDuration()})) {}

  // feeds: (tensor name, numpy array, dtype enum); fetches: tensor names; targets: node
  // names. Returns one numpy array per fetch (0-d for scalars).
  py::list Run(const std::vector<std::tuple<std::string, py::object, int>>& feeds,
               const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
               int64_t timeout_ms) {
    ClientSession::FeedList feed_list;
    feed_list.reserve(feeds.size());
    for (const auto& [name, value, dtype] : feeds) {
      Tensor t = ValueOrThrow(
          NumpyToTensor(value, static_cast<DataType>(dtype), "the value fed to " + name));
      feed_list.emplace_back(OutputOf(graph_, name), std::move(t));
    }
    std::vector<Output> fetch_list;
    fetch_list.reserve(fetches.size());
    for (const std::string& f : fetches) fetch_list.push_back(OutputOf(graph_, f));
    std::vector<Operation> target_list;
    target_list.reserve(targets.size());
    for (const std::string& t : targets) target_list.push_back(GraphOperation(graph_, t));

    StepCancellation cancellation;
    RunOptions options{.cancellation = &cancellation};
    if (timeout_ms > 0) options.timeout = absl::Milliseconds(timeout_ms);
    StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
    {
      InterruptibleCall call(&cancellation);
      call.RaiseIfInterrupted();  // a Ctrl-C from before the call was registered
      {
        py::gil_scoped_release release;
        out = session_->Run(feed_list, fetch_list, target_list, options);
      }
      if (cancellation.IsCancelled()) call.RaiseIfInterrupted();
    }
    ThrowIfError(out.status());
    py::list results;
    for (Tensor& t : *out) results.append(ValueOrThrow(TensorToNumpy(std::move(t))));
    return results;
  }

  // (name, device_type) of each device steps can use.
  std::vector<std::pair<std::string, std::string>> ListDevices() {
    StatusOr<std::vector<DeviceAttributes>> devices = errors::Unknown("not run");
    {
      py::gil_scoped_release release;
      devices = session_->ListDevices();
    }
    std::vector<std::pair<std::string, std::string>> out;
    for (const DeviceAttributes& d : ValueOrThrow(std::move(devices))) {
      out.emplace_back(d.name, d.device_type);
    }
    return out;
  }

  void Close() {
    Status s;
    {
      py::gil_scoped_release release;
      s = session_->Close();
    }
    ThrowIfError(s);
  }

 private:
  py::object graph_;  // keeps the graph (and its Scope) alive as long as the session
  std::unique_ptr<ClientSession> session_;
};

}  // namespace

void BindSession(py::module_& m) {
  py::class_<PySession>(m, "Session")
      .def(py::init<py::object, const std::string&, int, std::vector<std::string>, bool, int64_t>(),
           py::arg("graph"), py::arg("target"), py::arg("num_threads") = 0,
           py::arg("device_filters") = std::vector<std::string>{},
           py::arg("isolate_session") = false, py::arg("operation_timeout_ms") = 0)
      .def("list_devices", &PySession::ListDevices)
      .def("run", &PySession::Run, py::arg("feeds"), py::arg("fetches"), py::arg("targets"),
           py::arg("timeout_ms") = 0)
      .def("close", &PySession::Close);
  m.def(
      "reset",
      [](const std::string& target, const std::vector<std::string>& containers) {
        Status s;
        {
          py::gil_scoped_release release;
          s = ResetContainers({.target = target}, containers);
        }
        ThrowIfError(s);
      },
      py::arg("target"), py::arg("containers"));
}

}  // namespace tw::python
