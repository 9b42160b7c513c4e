// The monitored session's policy (tensorweave/train/session_policy.h) for Python's
// SessionManager and MonitoredSession: the waits and retries run here, in C++, calling
// back into Python for each poll or attempt. And the hooks' SecondOrStepTimer
// (tensorweave/train/step_timer.h), which Python's hooks use as tf.train.SecondOrStepTimer,
// with the step-rate counter and the summary schedule built on it.
//
// A Python exception from a callback becomes a Status for the policy (an OpError keeps its
// code, so the policy can tell a recoverable one; anything else, KeyboardInterrupt
// included, is Cancelled and ends the wait). When the policy returns that very Status, the
// original exception is raised again, unchanged; a Status the policy made (a deadline, a
// recovery that timed out) is raised as the tensorweave.errors class of its code.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/native/errors.h"
#include "python/native/gil.h"
#include "python/native/module.h"
#include "tensorweave/train/checkpoint_directory.h"
#include "tensorweave/train/session_policy.h"
#include "tensorweave/train/step_timer.h"

namespace py = pybind11;

namespace tw::python {
namespace {

// Calls Python callables for the policy, keeping the last exception they raised.
class PythonCallbacks {
 public:
  // Needs no GIL: takes it for the call.
  template <typename F>
  Status Call(F&& f) {
    py::gil_scoped_acquire gil;
    try {
      std::forward<F>(f)();
      return OkStatus();
    } catch (py::error_already_set& e) {
      raised_ = StatusOf(e);
      type_ = e.type();
      value_ = e.value();
      trace_ = e.trace();
      return raised_;
    }
  }

  // With the GIL, once the policy returned `status`: raises it (see the file comment).
  void ThrowIfError(const Status& status) {
    if (status.ok()) return;
    if (type_ && status == raised_) {
      PyErr_Restore(type_.release().ptr(), value_.release().ptr(), trace_.release().ptr());
      throw py::error_already_set();
    }
    python::ThrowIfError(status);
  }

 private:
  static Status StatusOf(const py::error_already_set& e) {
    py::object errors = py::module_::import("tensorweave.errors");
    if (e.matches(errors.attr("OpError"))) {
      const int code = e.value().attr("error_code").cast<int>();
      const std::string message = py::str(e.value()).cast<std::string>();
      return Status(static_cast<absl::StatusCode>(code), message);
    }
    return errors::Cancelled("a Python exception: ", e.what());
  }

  Status raised_;
  py::object type_, value_, trace_;
};

absl::Time DeadlineIn(double secs) {
  return std::isfinite(secs) ? absl::Now() + absl::Seconds(secs) : absl::InfiniteFuture();
}

// probe() -> names of the variables not initialized yet; remake() after a recoverable
// error. Returns None once the model is ready.
void WaitForModelReady(const py::function& probe, const py::object& remake, double max_wait_secs,
                       double poll_secs) {
  PythonCallbacks callbacks;
  const absl::Time start = absl::Now();
  const absl::Time deadline = DeadlineIn(max_wait_secs);
  Status status = WithoutGil([&] {
    return train::WaitForModelReady(
        [&]() -> StatusOr<std::vector<std::string>> {
          std::vector<std::string> missing;
          TW_RETURN_IF_ERROR(
              callbacks.Call([&] { missing = probe().cast<std::vector<std::string>>(); }));
          return missing;
        },
        start, deadline,
        [&] {
          if (!remake.is_none()) (void)callbacks.Call([&] { remake(); });
        },
        absl::Seconds(poll_secs));
  });
  callbacks.ThrowIfError(status);
}

// attempt() until it returns without a recoverable OpError, for at most timeout_secs.
void RetryWhileRecoverable(const py::function& attempt, double timeout_secs) {
  PythonCallbacks callbacks;
  const absl::Duration timeout =
      std::isfinite(timeout_secs) ? absl::Seconds(timeout_secs) : absl::InfiniteDuration();
  Status status = WithoutGil([&] {
    return train::RetryWhileRecoverable([&] { return callbacks.Call([&] { attempt(); }); },
                                        DeadlineIn(timeout_secs), timeout);
  });
  callbacks.ThrowIfError(status);
}

// The latest checkpoint of `checkpoint_dir`, waiting up to `max_wait_secs` for one and
// looking again every `poll_secs`; None when none came. Ctrl-C ends the wait.
py::object WaitForCheckpoint(const std::string& checkpoint_dir, double max_wait_secs,
                             double poll_secs) {
  PythonCallbacks callbacks;
  StatusOr<std::string> path = WithoutGil([&] {
    return train::WaitForCheckpoint(
        [&]() -> StatusOr<std::string> {
          TW_RETURN_IF_ERROR(callbacks.Call([] {
            if (PyErr_CheckSignals() != 0) throw py::error_already_set();
          }));
          return train::LatestCheckpoint(checkpoint_dir);
        },
        DeadlineIn(max_wait_secs), absl::Seconds(poll_secs));
  });
  if (IsNotFound(path.status())) return py::none();
  callbacks.ThrowIfError(path.status());
  return py::str(*path);
}

const char* ChiefPreparationName(bool model_ready, bool has_checkpoint, bool restores_input) {
  switch (train::ChooseChiefPreparation(model_ready, has_checkpoint, restores_input)) {
    case train::ChiefPreparation::kKeepModel:
      return "keep";
    case train::ChiefPreparation::kRestoreCheckpoint:
      return "restore";
    case train::ChiefPreparation::kInitialize:
      break;
  }
  return "initialize";
}

// TF's constructor: ValueError unless exactly one cadence is given.
train::SecondOrStepTimer MakeTimer(std::optional<double> every_secs,
                                   std::optional<int64_t> every_steps) {
  std::optional<absl::Duration> secs;
  if (every_secs.has_value()) secs = absl::Seconds(*every_secs);
  StatusOr<train::SecondOrStepTimer> timer = train::SecondOrStepTimer::Create(secs, every_steps);
  if (!timer.ok()) throw py::value_error(std::string(timer.status().message()));
  return *std::move(timer);
}

// (seconds, steps) since the previous trigger, or (None, None), as TF's.
py::tuple UpdateLastTriggeredStep(train::SecondOrStepTimer& timer, int64_t step) {
  const auto elapsed = timer.UpdateLastTriggeredStep(step);
  if (!elapsed.has_value()) return py::make_tuple(py::none(), py::none());
  return py::make_tuple(absl::ToDoubleSeconds(elapsed->time), elapsed->steps);
}

}  // namespace

void BindSessionPolicy(py::module_& m) {
  m.attr("MODEL_READY_POLL_SECS") = absl::ToDoubleSeconds(train::kModelReadyPollInterval);
  m.def(
      "is_recoverable_error_code",
      [](int code) { return train::IsRecoverable(static_cast<absl::StatusCode>(code)); },
      py::arg("code"));
  m.def("chief_preparation", &ChiefPreparationName, py::arg("model_ready"),
        py::arg("has_checkpoint"), py::arg("restores_input") = false);
  m.def("wait_for_model_ready", &WaitForModelReady, py::arg("probe"), py::arg("remake"),
        py::arg("max_wait_secs"), py::arg("poll_secs"));
  m.def("retry_while_recoverable", &RetryWhileRecoverable, py::arg("attempt"),
        py::arg("timeout_secs"));
  m.def("wait_for_checkpoint", &WaitForCheckpoint, py::arg("checkpoint_dir"),
        py::arg("max_wait_secs"), py::arg("poll_secs"));
  py::class_<train::SecondOrStepTimer>(m, "SecondOrStepTimer")
      .def(py::init(&MakeTimer), py::arg("every_secs") = py::none(),
           py::arg("every_steps") = py::none())
      .def("should_trigger_for_step", &train::SecondOrStepTimer::ShouldTriggerForStep,
           py::arg("step"))
      .def("update_last_triggered_step", &UpdateLastTriggeredStep, py::arg("step"))
      .def("last_triggered_step", &train::SecondOrStepTimer::last_triggered_step)
      .def("reset", &train::SecondOrStepTimer::Reset);
  // What Python's StepCounterHook and SummarySaverHook decide, decided here.
  py::class_<train::StepRateCounter>(m, "StepRateCounter")
      .def(py::init([](std::optional<double> every_secs, std::optional<int64_t> every_steps) {
             return train::StepRateCounter(MakeTimer(every_secs, every_steps));
           }),
           py::arg("every_secs") = py::none(), py::arg("every_steps") = py::none())
      // Global steps per second when the timer triggers at `global_step`, else None.
      .def(
          "record",
          [](train::StepRateCounter& counter, int64_t global_step) -> std::optional<double> {
            const auto rate = counter.Record(global_step);
            if (!rate.has_value()) return std::nullopt;
            return rate->global_steps_per_sec;
          },
          py::arg("global_step"));
  py::class_<train::SummarySchedule>(m, "SummarySchedule")
      .def(py::init([](std::optional<double> every_secs, std::optional<int64_t> every_steps) {
             return train::SummarySchedule(MakeTimer(every_secs, every_steps));
           }),
           py::arg("every_secs") = py::none(), py::arg("every_steps") = py::none())
      .def("request_summary", &train::SummarySchedule::RequestSummary)
      .def("needs_exact_step", &train::SummarySchedule::NeedsExactStep)
      // (write SessionLog START, write the summary) at `global_step`.
      .def(
          "record",
          [](train::SummarySchedule& schedule, int64_t global_step) {
            const auto actions = schedule.Record(global_step);
            return py::make_tuple(actions.session_start, actions.summary);
          },
          py::arg("global_step"));
}

}  // namespace tw::python
