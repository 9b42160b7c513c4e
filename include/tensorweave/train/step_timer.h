// When a periodic hook acts: TensorFlow's SecondOrStepTimer, the one definition for the C++
// hooks (tensorweave/train/hooks.h) and, bound, for Python's (tf.train.SecondOrStepTimer).
//
// The timer triggers for the first step it is asked about, then for a step at least
// `every_steps` steps after the last triggered one, or at least `every_secs` after it in
// time; never twice for the same step.
#ifndef TENSORWEAVE_TRAIN_STEP_TIMER_H_
#define TENSORWEAVE_TRAIN_STEP_TIMER_H_

#include <cstdint>
#include <optional>

#include "absl/time/time.h"
#include "tensorweave/status.h"

namespace tw::train {

class SecondOrStepTimer {
 public:
  // Exactly one of the two, as TensorFlow: InvalidArgument "Either every_secs or every_steps
  // should be provided." or "Can not provide both every_secs and every_steps.".
  static StatusOr<SecondOrStepTimer> Create(std::optional<absl::Duration> every_secs,
                                            std::optional<int64_t> every_steps);
  static SecondOrStepTimer EverySteps(int64_t every_steps) {
    return SecondOrStepTimer(std::nullopt, every_steps);
  }
  static SecondOrStepTimer EverySecs(absl::Duration every_secs) {
    return SecondOrStepTimer(every_secs, std::nullopt);
  }

  bool ShouldTriggerForStep(int64_t step) const;

  // Time and steps since the previous trigger (none for the first).
  struct Elapsed {
    absl::Duration time;
    int64_t steps = 0;
  };
  // Records that the timer triggered at `step`, now.
  std::optional<Elapsed> UpdateLastTriggeredStep(int64_t step);

  std::optional<int64_t> last_triggered_step() const { return last_step_; }
  // Forgets the last trigger: the next step asked about triggers.
  void Reset();

 private:
  SecondOrStepTimer(std::optional<absl::Duration> every_secs, std::optional<int64_t> every_steps)
      : every_secs_(every_secs), every_steps_(every_steps) {}

  std::optional<absl::Duration> every_secs_;
  std::optional<int64_t> every_steps_;
  std::optional<int64_t> last_step_;
  absl::Time last_time_;
};

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_STEP_TIMER_H_
