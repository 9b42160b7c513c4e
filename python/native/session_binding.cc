// Sessions from Python: a Session on a `_native.Graph`, run by tensor and node names.
//
// Graph changes happen with the GIL held (graph_binding.cc), so each run takes its snapshot
// of the nodes not yet sent while it holds the GIL, and sends and runs without it: a graph
// built by one thread while another runs is never read half-built. The GIL is released
// while a step runs; on the main thread Ctrl-C cancels the step (interrupt.h), which leaves
// the session usable, and raises KeyboardInterrupt.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "python/native/errors.h"
#include "python/native/gil.h"
#include "python/native/interrupt.h"
#include "python/native/module.h"
#include "python/native/tensor_numpy.h"
#include "tensorweave/session.h"

namespace py = pybind11;

namespace tw::python {
namespace {

class PySession {
 public:
  PySession(py::object graph, const std::string& target, int num_threads,
            std::vector<std::string> device_filters, bool isolate_session,
            int64_t operation_timeout_ms)
      : graph_(std::move(graph)), scope_(GraphScope(graph_)) {
    SessionOptions options{.target = target,
                           .num_threads = num_threads,
                           .device_filters = std::move(device_filters),
                           .isolate_session = isolate_session};
    if (operation_timeout_ms > 0)
      options.operation_timeout = absl::Milliseconds(operation_timeout_ms);
    // As ClientSession: a session that cannot be made fails its first use.
    auto session = Session::Create(options);
    if (session.ok()) {
      session_ = *std::move(session);
    } else {
      create_status_ = session.status();
    }
  }

  // feeds: (tensor name, numpy array, dtype enum); fetches: tensor names; targets: node
  // names. Returns one numpy array per fetch (0-d for scalars).
  py::list Run(const std::vector<std::tuple<std::string, py::object, int>>& feeds,
               const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
               int64_t timeout_ms) {
    ThrowIfError(create_status_);
    std::vector<std::pair<std::string, Tensor>> feed_list;
    feed_list.reserve(feeds.size());
    for (const auto& [name, value, dtype] : feeds) {
      feed_list.emplace_back(name, ValueOrThrow(NumpyToTensor(value, static_cast<DataType>(dtype),
                                                              "the value fed to " + name)));
    }
    const int first = nodes_sent_.load();
    proto::GraphDef fresh = ValueOrThrow(scope_.NodesSince(first));

    StepCancellation cancellation;
    RunOptions options{.cancellation = &cancellation};
    if (timeout_ms > 0) options.timeout = absl::Milliseconds(timeout_ms);
    std::vector<Tensor> outputs;
    Status status;
    {
      InterruptibleCall call(&cancellation);
      call.RaiseIfInterrupted();  // a Ctrl-C from before the call was registered
      status = WithoutGil([&] {
        Status sent = SendNodes(first, fresh, &cancellation);
        return sent.ok() ? session_->Run(options, feed_list, fetches, targets, &outputs) : sent;
      });
      if (cancellation.IsCancelled()) call.RaiseIfInterrupted();
    }
    ThrowIfError(status);
    py::list results;
    for (Tensor& t : outputs) results.append(ValueOrThrow(TensorToNumpy(std::move(t))));
    return results;
  }

  // (name, device_type) of each device steps can use.
  std::vector<std::pair<std::string, std::string>> ListDevices() {
    ThrowIfError(create_status_);
    StatusOr<std::vector<DeviceAttributes>> devices = errors::Unknown("not run");
    devices = WithoutGil([&] { return session_->ListDevices(); });
    std::vector<std::pair<std::string, std::string>> out;
    for (const DeviceAttributes& d : ValueOrThrow(std::move(devices))) {
      out.emplace_back(d.name, d.device_type);
    }
    return out;
  }

  void Close() {
    if (session_ == nullptr) return;
    ThrowIfError(WithoutGil([&] { return session_->Close(); }));
  }

 private:
  // Sends the nodes of `fresh` (the graph's nodes from index `first` on) that no other run
  // has sent yet. Without the GIL.
  Status SendNodes(int first, const proto::GraphDef& fresh, StepCancellation* cancellation) {
    absl::MutexLock lock(&extend_mu_);
    const int sent = nodes_sent_.load();
    const int end = first + fresh.node_size();
    if (end <= sent) return OkStatus();
    proto::GraphDef part;
    for (int i = sent - first; i < fresh.node_size(); ++i) *part.add_node() = fresh.node(i);
    TW_RETURN_IF_ERROR(session_->Extend(part, cancellation));
    nodes_sent_.store(end);
    return OkStatus();
  }

  py::object graph_;  // keeps the graph (and its Scope) alive as long as the session
  const Scope scope_;
  Status create_status_;
  std::unique_ptr<Session> session_;
  absl::Mutex extend_mu_;           // orders the sends
  std::atomic<int> nodes_sent_{0};  // the graph's first nodes, sent already
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
        ThrowIfError(WithoutGil([&] { return ResetContainers({.target = target}, containers); }));
      },
      py::arg("target"), py::arg("containers"));
}

}  // namespace tw::python
