#include "tensorweave/train/step_timer.h"

#include <algorithm>
#include <utility>

namespace tw::train {

StatusOr<SecondOrStepTimer> SecondOrStepTimer::Create(std::optional<absl::Duration> every_secs,
                                                      std::optional<int64_t> every_steps) {
  if (!every_secs.has_value() && !every_steps.has_value()) {
    return errors::InvalidArgument("Either every_secs or every_steps should be provided.");
  }
  if (every_secs.has_value() && every_steps.has_value()) {
    return errors::InvalidArgument("Can not provide both every_secs and every_steps.");
  }
  return SecondOrStepTimer(every_secs, every_steps);
}

bool SecondOrStepTimer::ShouldTriggerForStep(int64_t step) const {
  if (!last_step_.has_value()) return true;
  if (*last_step_ == step) return false;
  if (every_secs_.has_value()) return absl::Now() >= last_time_ + *every_secs_;
  return step >= *last_step_ + *every_steps_;
}

std::optional<SecondOrStepTimer::Elapsed> SecondOrStepTimer::UpdateLastTriggeredStep(int64_t step) {
  const absl::Time now = absl::Now();
  std::optional<Elapsed> elapsed;
  if (last_step_.has_value())
    elapsed = Elapsed{.time = now - last_time_, .steps = step - *last_step_};
  last_time_ = now;
  last_step_ = step;
  return elapsed;
}

void SecondOrStepTimer::Reset() { last_step_.reset(); }

std::optional<StepRateCounter::Rate> StepRateCounter::Record(int64_t global_step) {
  ++local_steps_;
  if (!timer_.ShouldTriggerForStep(global_step)) return std::nullopt;
  const std::optional<SecondOrStepTimer::Elapsed> elapsed =
      timer_.UpdateLastTriggeredStep(global_step);
  const int64_t local_steps = std::exchange(local_steps_, 0);
  if (!elapsed.has_value()) return std::nullopt;
  const double secs = std::max(absl::ToDoubleSeconds(elapsed->time), 1e-9);
  return Rate{.global_steps_per_sec = static_cast<double>(elapsed->steps) / secs,
              .local_steps = local_steps,
              .secs = secs};
}

bool SummarySchedule::RequestSummary() {
  requested_ = first_ || timer_.ShouldTriggerForStep(next_step_);
  return requested_;
}

SummarySchedule::Actions SummarySchedule::Record(int64_t global_step) {
  const Actions actions{.session_start = first_, .summary = requested_};
  if (requested_) timer_.UpdateLastTriggeredStep(global_step);
  first_ = false;
  requested_ = false;
  next_step_ = global_step + 1;
  return actions;
}

}  // namespace tw::train
