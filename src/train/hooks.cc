#include "tensorweave/train/hooks.h"

#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_join.h"
#include "src/base/logging.h"
#include "tensorweave/train/step_timer.h"

namespace tw::train {
namespace {

class StopAtStep : public SessionRunHook {
 public:
  // Stops at `last_step` when given, else `num_steps` after the first session's step.
  StopAtStep(std::optional<int64_t> last_step, int64_t num_steps)
      : last_step_(last_step), num_steps_(num_steps) {}
  Status Begin(const HookContext& context) override {
    global_step_ = context.global_step;
    return OkStatus();
  }
  Status AfterCreateSession(ClientSession& session) override {
    session_ = &session;
    if (last_step_.has_value()) return OkStatus();
    auto now = session.Run({}, {global_step_});
    if (!now.ok()) return now.status();
    last_step_ = (*now)[0].scalar<int64_t>() + num_steps_;
    return OkStatus();
  }
  std::vector<Output> BeforeRun() override { return {global_step_}; }
  Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override {
    // The value fetched with the step may have been read before the step's increment; near
    // the end, read it again so training stops at last_step, not one step later.
    if (!last_step_.has_value()) {
      return errors::FailedPrecondition("StopAtStepHook: AfterRun before AfterCreateSession");
    }
    const int64_t last_step = *last_step_;
    int64_t step = values[0].scalar<int64_t>();
    if (step + 1 == last_step) {
      auto now = session_->Run({}, {global_step_});
      if (!now.ok()) return now.status();
      step = (*now)[0].scalar<int64_t>();
    }
    if (step >= last_step) context->RequestStop();
    return OkStatus();
  }

 private:
  std::optional<int64_t> last_step_;
  const int64_t num_steps_;
  Output global_step_;
  ClientSession* session_ = nullptr;
};

class CheckpointSaver : public SessionRunHook {
 public:
  CheckpointSaver(int64_t every_steps, absl::Duration every_secs)
      : every_steps_(every_steps), every_secs_(every_secs) {}
  Status Begin(const HookContext& context) override {
    if (context.saver == nullptr) {
      return errors::FailedPrecondition("CheckpointSaverHook needs a checkpoint_dir");
    }
    context_ = context;
    return OkStatus();
  }
  Status AfterCreateSession(ClientSession& session) override {
    session_ = &session;
    saved_this_session_ = false;
    return OkStatus();
  }
  std::vector<Output> BeforeRun() override { return {context_.global_step}; }
  Status AfterRun(const std::vector<Tensor>& values, RunContext*) override {
    if (!context_.is_chief) return OkStatus();
    step_ = values[0].scalar<int64_t>();
    const bool due_by_steps = every_steps_ > 0 && step_ >= last_saved_step_ + every_steps_;
    const bool due_by_time =
        every_secs_ > absl::ZeroDuration() && absl::Now() >= last_saved_time_ + every_secs_;
    if (!saved_this_session_ || due_by_steps || due_by_time) return Save(*session_);
    return OkStatus();
  }
  Status End(ClientSession& session) override {
    if (!context_.is_chief) return OkStatus();
    auto now = session.Run({}, {context_.global_step});
    if (!now.ok()) return now.status();
    if ((*now)[0].scalar<int64_t>() == last_saved_step_) return OkStatus();
    return Save(session);
  }

 private:
  Status Save(ClientSession& session) {
    // The step fetched with the train op may have been read before its increment: read it
    // again, so the checkpoint's name is the step its values belong to.
    auto now = session.Run({}, {context_.global_step});
    if (!now.ok()) return now.status();
    step_ = (*now)[0].scalar<int64_t>();
    auto prefix = context_.saver->Save(session, step_);
    if (!prefix.ok()) return prefix.status();
    Log().info("saved checkpoint {} at global step {}", *prefix, step_);
    last_saved_step_ = step_;
    last_saved_time_ = absl::Now();
    saved_this_session_ = true;
    return OkStatus();
  }

  const int64_t every_steps_;
  const absl::Duration every_secs_;
  HookContext context_;
  ClientSession* session_ = nullptr;
  bool saved_this_session_ = false;
  int64_t step_ = -1;
  int64_t last_saved_step_ = -1;
  absl::Time last_saved_time_ = absl::Now();
};

// TensorFlow's tag for the global step rate: the global step's name and "/sec".
constexpr char kStepRateTag[] = "global_step/sec";

// As TensorFlow's StepCounterHook: the rate is measured over global steps, between the
// steps the timer triggers at (every `every_steps` global steps): StepRateCounter.
class StepCounter : public SessionRunHook {
 public:
  StepCounter(int64_t every_steps, int64_t examples_per_step,
              std::shared_ptr<EventFileWriter> writer)
      : counter_(SecondOrStepTimer::EverySteps(every_steps)),
        examples_per_step_(examples_per_step),
        writer_(std::move(writer)) {}
  Status Begin(const HookContext& context) override {
    global_step_ = context.global_step;
    return OkStatus();
  }
  std::vector<Output> BeforeRun() override { return {global_step_}; }
  Status AfterRun(const std::vector<Tensor>& values, RunContext*) override {
    // The value fetched with the step is from before its increment.
    const int64_t step = values[0].scalar<int64_t>() + 1;
    const std::optional<StepRateCounter::Rate> rate = counter_.Record(step);
    if (!rate.has_value()) return OkStatus();
    if (examples_per_step_ > 0) {
      const double local_rate = static_cast<double>(rate->local_steps) / rate->secs;
      Log().info("global step {}: {:.1f} global steps/s, {:.0f} examples/s on this worker", step,
                 rate->global_steps_per_sec, local_rate * static_cast<double>(examples_per_step_));
    } else {
      Log().info("global step {}: {:.1f} global steps/s", step, rate->global_steps_per_sec);
    }
    if (writer_ == nullptr) return OkStatus();
    return writer_->AddScalar(kStepRateTag, static_cast<float>(rate->global_steps_per_sec), step);
  }

 private:
  StepRateCounter counter_;
  const int64_t examples_per_step_;
  const std::shared_ptr<EventFileWriter> writer_;
  Output global_step_;
};

class SummarySaver : public SessionRunHook {
 public:
  SummarySaver(Output summary, int64_t every_steps, std::shared_ptr<EventFileWriter> writer)
      : summary_(std::move(summary)),
        schedule_(SecondOrStepTimer::EverySteps(every_steps)),
        writer_(std::move(writer)) {}
  Status Begin(const HookContext& context) override {
    if (!summary_.op().valid()) {
      return errors::InvalidArgument("SummarySaverHook: the summary tensor is not set");
    }
    if (summary_.type() != DT_STRING) {
      return errors::InvalidArgument("SummarySaverHook: the summary tensor ", summary_.name(),
                                     " is ", DataTypeName(summary_.type()),
                                     ", not a string (a serialized Summary)");
    }
    if (writer_ == nullptr) return errors::InvalidArgument("SummarySaverHook: the writer is null");
    global_step_ = context.global_step;
    return OkStatus();
  }
  Status AfterCreateSession(ClientSession& session) override {
    session_ = &session;
    return OkStatus();
  }
  std::vector<Output> BeforeRun() override {
    // The summary is fetched with the training step, so its values are the step's own.
    if (schedule_.RequestSummary()) return {global_step_, summary_};
    return {global_step_};
  }
  Status AfterRun(const std::vector<Tensor>& values, RunContext*) override {
    int64_t step = values[0].scalar<int64_t>() + 1;
    if (schedule_.NeedsExactStep()) {
      if (session_ == nullptr) {
        return errors::FailedPrecondition("SummarySaverHook: AfterRun before AfterCreateSession");
      }
      auto now = session_->Run({}, {global_step_});
      if (!now.ok()) return now.status();
      step = (*now)[0].scalar<int64_t>();
    }
    if (values.size() > 1 && values[1].num_elements() != 1) {
      return errors::InvalidArgument("SummarySaverHook: the summary tensor ", summary_.name(),
                                     " has shape ", values[1].shape().DebugString(),
                                     ", not one serialized Summary");
    }
    const SummarySchedule::Actions actions = schedule_.Record(step);
    if (actions.session_start) {
      TW_RETURN_IF_ERROR(writer_->AddSessionLog(proto::SessionLog::START, step));
    }
    if (actions.summary) {
      TW_RETURN_IF_ERROR(writer_->AddSummary(values[1].scalar<std::string>(), step));
    }
    return OkStatus();
  }
  Status End(ClientSession&) override { return writer_->Flush(); }

 private:
  const Output summary_;
  SummarySchedule schedule_;
  const std::shared_ptr<EventFileWriter> writer_;
  Output global_step_;
  ClientSession* session_ = nullptr;
};

std::string ScalarString(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT:
      return std::to_string(t.flat<float>()[0]);
    case DT_DOUBLE:
      return std::to_string(t.flat<double>()[0]);
    case DT_INT32:
      return std::to_string(t.flat<int32_t>()[0]);
    case DT_INT64:
      return std::to_string(t.flat<int64_t>()[0]);
    default:
      return t.DebugString();
  }
}

class Logging : public SessionRunHook {
 public:
  Logging(std::map<std::string, Output> tensors, int64_t every_steps)
      : tensors_(std::move(tensors)), every_steps_(every_steps) {}
  std::vector<Output> BeforeRun() override {
    if (local_steps_ % every_steps_ != 0) return {};
    std::vector<Output> out;
    for (const auto& [name, output] : tensors_) out.push_back(output);
    return out;
  }
  Status AfterRun(const std::vector<Tensor>& values, RunContext*) override {
    if (local_steps_++ % every_steps_ != 0) return OkStatus();
    std::vector<std::string> parts;
    size_t i = 0;
    for (const auto& [name, output] : tensors_) {
      parts.push_back(
          name + " = " +
          (values[i].num_elements() == 1 ? ScalarString(values[i]) : values[i].DebugString()));
      ++i;
    }
    Log().info("{}", absl::StrJoin(parts, ", "));
    return OkStatus();
  }

 private:
  const std::map<std::string, Output> tensors_;
  const int64_t every_steps_;
  int64_t local_steps_ = 0;
};

class NanTensor : public SessionRunHook {
 public:
  NanTensor(Output loss, bool fail) : loss_(std::move(loss)), fail_(fail) {}
  std::vector<Output> BeforeRun() override { return {loss_}; }
  Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override {
    const Tensor& loss = values[0];
    const double v = loss.dtype() == DT_DOUBLE ? loss.flat<double>()[0] : loss.flat<float>()[0];
    if (std::isfinite(v)) return OkStatus();
    if (fail_) {
      return errors::InvalidArgument("NaN loss during training: ", loss_.name(), " = ", v);
    }
    Log().warn("NaN loss during training ({} = {}); stopping", loss_.name(), v);
    context->RequestStop();
    return OkStatus();
  }

 private:
  const Output loss_;
  const bool fail_;
};

}  // namespace

std::unique_ptr<SessionRunHook> StopAtStepHook(int64_t last_step) {
  return std::make_unique<StopAtStep>(last_step, 0);
}
std::unique_ptr<SessionRunHook> StopAtStepHookForSteps(int64_t num_steps) {
  return std::make_unique<StopAtStep>(std::nullopt, num_steps);
}
std::unique_ptr<SessionRunHook> CheckpointSaverHook(int64_t every_steps,
                                                    absl::Duration every_secs) {
  return std::make_unique<CheckpointSaver>(every_steps, every_secs);
}
std::unique_ptr<SessionRunHook> StepCounterHook(int64_t every_steps, int64_t examples_per_step,
                                                std::shared_ptr<EventFileWriter> writer) {
  return std::make_unique<StepCounter>(std::max<int64_t>(every_steps, 1), examples_per_step,
                                       std::move(writer));
}
std::unique_ptr<SessionRunHook> SummarySaverHook(Output summary, int64_t every_steps,
                                                 std::shared_ptr<EventFileWriter> writer) {
  return std::make_unique<SummarySaver>(std::move(summary), std::max<int64_t>(every_steps, 1),
                                        std::move(writer));
}
std::unique_ptr<SessionRunHook> LoggingHook(std::map<std::string, Output> tensors,
                                            int64_t every_steps) {
  return std::make_unique<Logging>(std::move(tensors), std::max<int64_t>(every_steps, 1));
}
std::unique_ptr<SessionRunHook> NanTensorHook(Output loss, bool fail_on_nan) {
  return std::make_unique<NanTensor>(std::move(loss), fail_on_nan);
}

}  // namespace tw::train
