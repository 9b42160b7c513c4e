// ClusterCoordinator from Python (tf.distribute.experimental.coordinator): the C++
// coordinator (tensorweave/train/cluster_coordinator.h) over a `_native.Graph`. The Python
// layer traces each function once per worker into that graph and registers the names of
// every replica here; scheduling, the workers' threads and fault handling are C++.
//
// Graph changes happen with the GIL held (graph_binding.cc), so the nodes added since the
// last call are taken with the GIL and handed to the coordinator, which sends them to each
// worker before its next function. Waiting calls release the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "python/native/errors.h"
#include "python/native/gil.h"
#include "python/native/module.h"
#include "python/native/tensor_numpy.h"
#include "tensorweave/train/cluster_coordinator.h"

namespace py = pybind11;

namespace tw::python {
namespace {

using train::ClusterCoordinator;
using train::RemoteValue;
using train::ScheduledFunction;
using train::WorkerStep;

// (feeds, fetches, targets) of one worker's replica.
using StepNames =
    std::tuple<std::vector<std::string>, std::vector<std::string>, std::vector<std::string>>;

WorkerStep ToWorkerStep(const StepNames& names) {
  return {std::get<0>(names), std::get<1>(names), std::get<2>(names)};
}

class PyRemoteValue {
 public:
  explicit PyRemoteValue(std::shared_ptr<RemoteValue> value) : value_(std::move(value)) {}
  bool Ready() const { return value_->IsReady(); }
  int Worker() const { return value_->worker(); }
  // One numpy array per fetch; the function's error raised as TF's error class.
  py::list Fetch(int64_t timeout_ms) {
    const absl::Duration timeout =
        timeout_ms > 0 ? absl::Milliseconds(timeout_ms) : absl::InfiniteDuration();
    StatusOr<std::vector<Tensor>> out = errors::Unknown("not run");
    out = WithoutGil([&] { return value_->Fetch(timeout); });
    py::list results;
    for (Tensor& t : ValueOrThrow(std::move(out))) {
      results.append(ValueOrThrow(TensorToNumpy(std::move(t))));
    }
    return results;
  }

 private:
  std::shared_ptr<RemoteValue> value_;
};

class PyFunction {
 public:
  explicit PyFunction(std::shared_ptr<const ScheduledFunction> f) : function(std::move(f)) {}
  std::shared_ptr<const ScheduledFunction> function;
};

class PyCoordinator {
 public:
  PyCoordinator(py::object graph, std::vector<std::string> worker_targets, std::string worker_job,
                std::vector<std::string> shared_tasks, int64_t retry_ms,
                int64_t operation_timeout_ms)
      : graph_(std::move(graph)), scope_(GraphScope(graph_)) {
    train::ClusterCoordinatorOptions options;
    options.worker_targets = std::move(worker_targets);
    options.worker_job = std::move(worker_job);
    options.shared_tasks = std::move(shared_tasks);
    if (retry_ms > 0) options.worker_retry_interval = absl::Milliseconds(retry_ms);
    if (operation_timeout_ms > 0) {
      options.session.operation_timeout = absl::Milliseconds(operation_timeout_ms);
    }
    coordinator_ = ValueOrThrow(ClusterCoordinator::Create(std::move(options)));
  }

  ~PyCoordinator() {
    // Joins the workers' threads, which may wait for a step: not with the GIL.
    WithoutGil([&] { coordinator_.reset(); });
  }

  PyFunction Register(const std::string& name, const std::vector<StepNames>& per_worker) {
    auto function = std::make_shared<ScheduledFunction>();
    function->name = name;
    for (const StepNames& names : per_worker) function->per_worker.push_back(ToWorkerStep(names));
    return PyFunction(std::move(function));
  }

  // feeds: (numpy array, dtype enum), in the function's feed order.
  PyRemoteValue Schedule(const PyFunction& function,
                         const std::vector<std::pair<py::object, int>>& feeds) {
    SendNewNodes();
    std::vector<Tensor> values;
    values.reserve(feeds.size());
    for (size_t i = 0; i < feeds.size(); ++i) {
      values.push_back(ValueOrThrow(
          NumpyToTensor(feeds[i].first, static_cast<DataType>(feeds[i].second),
                        "input " + std::to_string(i) + " of '" + function.function->name + "'")));
    }
    return PyRemoteValue(
        ValueOrThrow(coordinator_->Schedule(function.function, std::move(values))));
  }

  void Join() {
    ThrowIfError(WithoutGil([&] { return coordinator_->Join(); }));
  }

  bool Done() { return ValueOrThrow(coordinator_->Done()); }

  void InitializeModel(const StepNames& report, const StepNames& initialize) {
    SendNewNodes();
    ThrowIfError(WithoutGil([&] {
      return coordinator_->InitializeModel(ToWorkerStep(report), ToWorkerStep(initialize));
    }));
  }

  py::dict Stats() const {
    const train::ClusterCoordinatorStats s = coordinator_->stats();
    py::dict d;
    d["scheduled"] = s.scheduled;
    d["completed"] = s.completed;
    d["failed"] = s.failed;
    d["rescheduled"] = s.rescheduled;
    d["worker_failures"] = s.worker_failures;
    d["worker_recoveries"] = s.worker_recoveries;
    d["completed_by_worker"] = s.completed_by_worker;
    d["worker_available"] = s.worker_available;
    return d;
  }

 private:
  // Hands the coordinator the graph's nodes added since the last call. With the GIL.
  void SendNewNodes() {
    proto::GraphDef fresh = ValueOrThrow(scope_.NodesSince(nodes_sent_));
    if (fresh.node_size() == 0) return;
    ThrowIfError(coordinator_->ExtendGraph(fresh));
    nodes_sent_ += fresh.node_size();
  }

  py::object graph_;  // keeps the graph (and its Scope) alive
  const Scope scope_;
  std::unique_ptr<ClusterCoordinator> coordinator_;
  int nodes_sent_ = 0;  // guarded by the GIL
};

}  // namespace

void BindCoordinator(py::module_& m) {
  py::class_<PyRemoteValue>(m, "RemoteValue")
      .def("ready", &PyRemoteValue::Ready)
      .def("worker", &PyRemoteValue::Worker)
      .def("fetch", &PyRemoteValue::Fetch, py::arg("timeout_ms") = 0);
  py::class_<PyFunction>(m, "ScheduledFunction");
  py::class_<PyCoordinator>(m, "ClusterCoordinator")
      .def(py::init<py::object, std::vector<std::string>, std::string, std::vector<std::string>,
                    int64_t, int64_t>(),
           py::arg("graph"), py::arg("worker_targets"), py::arg("worker_job") = "worker",
           py::arg("shared_tasks") = std::vector<std::string>{"/job:ps"}, py::arg("retry_ms") = 0,
           py::arg("operation_timeout_ms") = 0)
      .def("register", &PyCoordinator::Register, py::arg("name"), py::arg("per_worker"))
      .def("schedule", &PyCoordinator::Schedule, py::arg("function"), py::arg("feeds"))
      .def("join", &PyCoordinator::Join)
      .def("done", &PyCoordinator::Done)
      .def("initialize_model", &PyCoordinator::InitializeModel, py::arg("report"),
           py::arg("initialize"))
      .def("stats", &PyCoordinator::Stats);
}

}  // namespace tw::python
