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
#include <utility>

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

// What TensorFlow's StepCounterHook measures, for the C++ hook and, bound, for Python's
// tf.train.StepCounterHook: the global steps per second between the steps its timer
// triggers at (the first trigger starts the clock), and the local steps run meanwhile.
class StepRateCounter {
 public:
  explicit StepRateCounter(SecondOrStepTimer timer) : timer_(std::move(timer)) {}

  struct Rate {
    double global_steps_per_sec = 0;
    int64_t local_steps = 0;  // steps this hook saw since the previous rate
    double secs = 0;          // the time they took (at least 1 ns)
  };
  // After each step, with the global step it led to: the rate when the timer triggers.
  std::optional<Rate> Record(int64_t global_step);

 private:
  SecondOrStepTimer timer_;
  int64_t local_steps_ = 0;
};

// When TensorFlow's SummarySaverHook writes, for the C++ hook and, bound, for Python's: the
// summary is fetched with the first step and with each step the timer triggers for (asked
// about the step expected next); the first step is preceded by a SessionLog START; a written
// step is the global step read again after the step ran.
class SummarySchedule {
 public:
  explicit SummarySchedule(SecondOrStepTimer timer) : timer_(std::move(timer)) {}

  // Before a step: whether to fetch the summary with it.
  bool RequestSummary();
  // After the step: whether what is written needs the global step read again (the value
  // fetched with the step may be from before its increment).
  bool NeedsExactStep() const { return first_ || requested_; }

  struct Actions {
    bool session_start = false;  // write SessionLog START at the step
    bool summary = false;        // write the fetched summary at the step
  };
  // After the step, with its global step (read again when NeedsExactStep).
  Actions Record(int64_t global_step);

 private:
  SecondOrStepTimer timer_;
  bool first_ = true;
  bool requested_ = false;
  int64_t next_step_ = 0;
};

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_STEP_TIMER_H_
