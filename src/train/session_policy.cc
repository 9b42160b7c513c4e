#include "tensorweave/train/session_policy.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/base/logging.h"

namespace tw::train {

bool IsRecoverable(absl::StatusCode code) {
  return code == absl::StatusCode::kAborted || code == absl::StatusCode::kUnavailable;
}

ChiefPreparation ChooseChiefPreparation(bool model_ready, bool has_checkpoint,
                                        bool restores_input) {
  if (model_ready && !(has_checkpoint && restores_input)) return ChiefPreparation::kKeepModel;
  return has_checkpoint ? ChiefPreparation::kRestoreCheckpoint : ChiefPreparation::kInitialize;
}

Status WaitForModelReady(const ReadinessProbe& probe, absl::Time waited_from, absl::Time deadline,
                         const std::function<void()>& after_recoverable_error,
                         absl::Duration poll_interval) {
  absl::Time next_log = absl::Now() + kModelReadyLogInterval;
  while (true) {
    StatusOr<std::vector<std::string>> missing = probe();
    if (missing.ok() && missing->empty()) return OkStatus();
    if (!missing.ok() && !IsRecoverable(missing.status())) return missing.status();
    const std::string waiting_for =
        missing.ok() ? "variables not initialized: " + absl::StrJoin(*missing, ", ")
                     : "last error: " + std::string(missing.status().message());
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      const int64_t secs = absl::ToInt64Seconds(deadline - waited_from);
      return errors::DeadlineExceeded("Session was not ready after waiting ", secs, " secs; ",
                                      waiting_for);
    }
    if (now >= next_log) {
      Log().info("waiting for the chief to prepare the model: {}", waiting_for);
      next_log = now + kModelReadyLogInterval;
    }
    absl::SleepFor(std::min(poll_interval, deadline - now));
    if (!missing.ok() && after_recoverable_error) after_recoverable_error();
  }
}

Status RetryWhileRecoverable(const std::function<Status()>& attempt, absl::Time deadline,
                             absl::Duration timeout) {
  absl::Duration backoff = kRecoveryFirstBackoff;
  Status last = attempt();
  while (!last.ok() && IsRecoverable(last) && absl::Now() < deadline) {
    absl::SleepFor(std::min(backoff, std::max(deadline - absl::Now(), absl::ZeroDuration())));
    backoff = std::min(backoff * 2, kRecoveryMaxBackoff);
    last = attempt();
  }
  if (last.ok() || !IsRecoverable(last)) return last;
  return errors::Annotate(last, absl::StrCat("could not recover the training session within ",
                                             absl::FormatDuration(timeout), ": "));
}

StatusOr<std::string> WaitForCheckpoint(const std::function<StatusOr<std::string>()>& latest,
                                        absl::Time deadline, absl::Duration poll_interval) {
  while (true) {
    StatusOr<std::string> path = latest();
    if (!IsNotFound(path.status())) return path;
    const absl::Time now = absl::Now();
    if (now >= deadline) return path;
    absl::SleepFor(std::min(poll_interval, deadline - now));
  }
}

}  // namespace tw::train
