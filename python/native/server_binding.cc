// Servers and cluster configuration from Python: Server over the C++ Server, ClusterSpec, and
// RunConfig's resolution of TF_CONFIG, given to Python as the JSON that `tw cluster` prints.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "python/native/errors.h"
#include "python/native/gil.h"
#include "python/native/module.h"
#include "tensorweave/cluster_spec.h"
#include "tensorweave/run_config.h"
#include "tensorweave/server.h"

namespace py = pybind11;

namespace tw::python {
namespace {

class PyServer {
 public:
  explicit PyServer(std::unique_ptr<Server> server) : server_(std::move(server)) {}

  static PyServer Create(const std::string& cluster_json, const std::string& job, int task,
                         const std::string& bind_host, int num_threads, bool shared_memory,
                         bool chunk_sockets, int64_t buffer_pool_mb,
                         std::vector<std::string> allowed_directories,
                         int64_t default_operation_timeout_ms, int metrics_port) {
    ClusterSpec cluster = ValueOrThrow(ClusterSpec::FromJson(cluster_json));
    ServerOptions options{.bind_host = bind_host,
                          .num_threads = num_threads,
                          .allowed_directories = std::move(allowed_directories),
                          .shared_memory = shared_memory,
                          .chunk_sockets = chunk_sockets,
                          .buffer_pool_mb = buffer_pool_mb,
                          .metrics_port = metrics_port};
    if (default_operation_timeout_ms > 0) {
      options.default_operation_timeout = absl::Milliseconds(default_operation_timeout_ms);
    }
    return PyServer(ValueOrThrow(Server::Create(cluster, job, task, options)));
  }

  void Start() { ThrowIfError(server_->Start()); }
  void Stop() {
    WithoutGil([&] { server_->Stop(); });
  }
  // Waits, without the GIL, for the server to stop; Ctrl-C raises KeyboardInterrupt (the
  // server keeps serving, as TensorFlow's does). The waiting thread holds the server.
  void Join() {
    auto joined = std::make_shared<absl::Notification>();
    std::thread([server = server_, joined] {
      server->Join();
      joined->Notify();
    }).detach();
    for (;;) {
      const bool done = WithoutGil(
          [&] { return joined->WaitForNotificationWithTimeout(absl::Milliseconds(100)); });
      if (done) return;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
  }
  void StopCluster(double timeout_secs) {
    ThrowIfError(WithoutGil([&] { return server_->StopCluster(absl::Seconds(timeout_secs)); }));
  }
  std::string target() const { return server_->target(); }
  std::string metrics_address() const { return server_->metrics_address(); }

 private:
  std::shared_ptr<Server> server_;
};

// RunConfig::ResolveFromEnvironment with no flags (the one reader of TF_CONFIG) as the JSON
// object RunConfig::ToJson writes. InvalidArgumentError naming the field at fault.
std::string ResolveRunConfig() {
  return ValueOrThrow(RunConfig::ResolveFromEnvironment({})).ToJson();
}

py::dict RuntimeSettingsFromEnvironment() {
  RuntimeSettings s = RuntimeSettings::FromEnvironment();
  py::dict d;
  d["num_threads"] = s.num_threads;
  d["shared_memory"] = s.shared_memory;
  d["chunk_sockets"] = s.chunk_sockets;
  d["buffer_pool_mb"] = s.buffer_pool_mb;
  d["allowed_directories"] = s.allowed_directories;
  d["metrics_port"] = s.metrics_port;
  d["restart_count"] = s.restart_count;
  return d;
}

// A value of a ClusterSpec lookup, or ValueError with the C++ message: TF's Python
// ClusterSpec raises ValueError for a bad cluster, an unknown job or an unknown task.
template <typename T>
T ValueOrValueError(StatusOr<T> value) {
  if (!value.ok()) throw py::value_error(std::string(value.status().message()));
  return *std::move(value);
}

// The C++ ClusterSpec for Python's tf.train.ClusterSpec: validation and lookups are C++'s.
void BindClusterSpec(py::module_& m) {
  py::class_<ClusterSpec>(m, "ClusterSpec")
      .def(py::init([](const std::string& json) {
             return ValueOrValueError(ClusterSpec::FromJson(json));
           }),
           py::arg("cluster_json"))
      .def("jobs", &ClusterSpec::jobs)
      .def("num_tasks", [](const ClusterSpec& c,
                           const std::string& job) { return ValueOrValueError(c.num_tasks(job)); })
      .def("task_indices",
           [](const ClusterSpec& c, const std::string& job) {
             return ValueOrValueError(c.task_indices(job));
           })
      .def("task_address", [](const ClusterSpec& c, const std::string& job,
                              int task) { return ValueOrValueError(c.task_address(job, task)); })
      .def("job_tasks",
           [](const ClusterSpec& c, const std::string& job) {
             // TF's job_tasks gives None for the indices a sparse job leaves out.
             py::list out;
             for (const std::string& address : ValueOrValueError(c.job_tasks(job))) {
               out.append(address.empty() ? py::object(py::none()) : py::str(address));
             }
             return out;
           })
      .def("to_json", &ClusterSpec::ToJson, py::arg("always_objects") = false)
      .def("__eq__", [](const ClusterSpec& a, const ClusterSpec& b) { return a == b; });
}

}  // namespace

void BindServer(py::module_& m) {
  BindClusterSpec(m);
  py::class_<PyServer>(m, "Server")
      .def_static("create", &PyServer::Create, py::arg("cluster_json"), py::arg("job"),
                  py::arg("task"), py::arg("bind_host") = "0.0.0.0", py::arg("num_threads") = 0,
                  py::arg("shared_memory") = true, py::arg("chunk_sockets") = true,
                  py::arg("buffer_pool_mb") = -1,
                  py::arg("allowed_directories") = std::vector<std::string>{},
                  py::arg("default_operation_timeout_ms") = 0, py::arg("metrics_port") = -1)
      .def("start", &PyServer::Start)
      .def("stop", &PyServer::Stop)
      .def("join", &PyServer::Join)
      .def("stop_cluster", &PyServer::StopCluster, py::arg("timeout_secs") = 10.0)
      .def_property_readonly("target", &PyServer::target)
      .def_property_readonly("metrics_address", &PyServer::metrics_address);
  m.def("resolve_run_config", &ResolveRunConfig);
  m.def("runtime_settings", &RuntimeSettingsFromEnvironment);
}

}  // namespace tw::python
