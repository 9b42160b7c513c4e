#include "tensorweave/train/step_timer.h"

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

}  // namespace tw::train
