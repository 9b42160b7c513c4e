// The error every session reports for a step that outlived its timeout, so that the
// in-process session, the master and the gRPC client say the same thing.
#ifndef TENSORWEAVE_SRC_RUNTIME_STEP_TIMEOUT_H_
#define TENSORWEAVE_SRC_RUNTIME_STEP_TIMEOUT_H_

#include "absl/time/time.h"
#include "tensorweave/status.h"

namespace tw {

// DeadlineExceeded "Timed out waiting for notification: the step did not finish within
// 40ms". The first words are TensorFlow's (its sessions' operation_timeout_in_ms and
// RunOptions.timeout_in_ms errors), which programs written for TF match; the limit follows.
inline Status StepTimedOut(absl::Duration timeout) {
  return errors::DeadlineExceeded(
      "Timed out waiting for notification: the step did not finish within ",
      absl::FormatDuration(timeout));
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RUNTIME_STEP_TIMEOUT_H_
