// How a monitored session gets a ready model and survives the loss of a task: the one
// definition of that policy. The C++ MonitoredTrainingSession uses it, and so do Python's
// SessionManager and MonitoredSession through the native module, so the two cannot drift.
//
// - Preparing (the chief): keep the model when every variable is already initialized (a ps
//   task still holds it: a restarted chief loses no steps; TensorFlow restores the
//   checkpoint over it), else restore the latest checkpoint, else initialize.
// - Waiting (other workers): ask every kModelReadyPollInterval which variables are not
//   initialized yet, log them every kModelReadyLogInterval, give up with DeadlineExceeded
//   at the deadline. TensorFlow polls every 30 s; a worker here starts as soon as the chief
//   is done.
// - Recovering: Aborted and Unavailable (a ps task restarted or is gone) are recoverable;
//   the session is remade, retrying with a backoff from kRecoveryFirstBackoff doubling up
//   to kRecoveryMaxBackoff until the recovery deadline.
#ifndef TENSORWEAVE_TRAIN_SESSION_POLICY_H_
#define TENSORWEAVE_TRAIN_SESSION_POLICY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tensorweave/status.h"

namespace tw::train {

inline constexpr absl::Duration kModelReadyPollInterval = absl::Milliseconds(200);
inline constexpr absl::Duration kModelReadyLogInterval = absl::Seconds(10);
inline constexpr absl::Duration kRecoveryFirstBackoff = absl::Milliseconds(100);
inline constexpr absl::Duration kRecoveryMaxBackoff = absl::Seconds(2);

// Errors a restarted or lost task produces; a new session gets past them.
bool IsRecoverable(absl::StatusCode code);
inline bool IsRecoverable(const Status& status) { return IsRecoverable(status.code()); }

enum class ChiefPreparation { kKeepModel, kRestoreCheckpoint, kInitialize };

// What the chief does with a new session. `model_ready`: every variable is initialized
// (false when the model cannot tell, e.g. it has no ready check). A ready model is kept
// (unlike TF, which restores over it: a chief restarted while the ps tasks kept running
// would lose every step since the checkpoint), unless the checkpoint also holds input
// positions (`restores_input`: the Saver saves iterators, which live with the restarted
// chief): only the checkpoint has a model and an input position that agree, so it is
// restored, and no example is seen twice or skipped.
ChiefPreparation ChooseChiefPreparation(bool model_ready, bool has_checkpoint,
                                        bool restores_input = false);

// One poll of a waiting worker: the names of the variables not initialized yet (none: the
// model is ready), or an error.
using ReadinessProbe = std::function<StatusOr<std::vector<std::string>>()>;

// Calls `probe` until it reports no missing variables (OK), fails with an error that is not
// recoverable (that error), or `deadline` passes: DeadlineExceeded "Session was not ready
// after waiting N secs; variables not initialized: a, b" (or "; last error: ...").
// After a recoverable failure `after_recoverable_error`, when set, runs before the next
// poll (the session may be bound to a task incarnation that is gone: remake it there).
// `waited_from` is when the caller started waiting (for the message).
Status WaitForModelReady(const ReadinessProbe& probe, absl::Time waited_from, absl::Time deadline,
                         const std::function<void()>& after_recoverable_error = {},
                         absl::Duration poll_interval = kModelReadyPollInterval);

// Calls `attempt` until it succeeds (OK) or fails with an error that is not recoverable
// (that error). A recoverable failure is retried with the backoff above until `deadline`;
// then the last error is returned, prefixed with "could not recover the training session
// within <timeout>: ".
Status RetryWhileRecoverable(const std::function<Status()>& attempt, absl::Time deadline,
                             absl::Duration timeout);

// TensorFlow's SessionManager(wait_for_checkpoint=True): `latest` (the latest checkpoint's
// path, NotFound while there is none) is asked again every `poll_interval` until it answers
// or `deadline` passes (then its last NotFound). Any other error of `latest` is returned
// at once.
StatusOr<std::string> WaitForCheckpoint(const std::function<StatusOr<std::string>()>& latest,
                                        absl::Time deadline, absl::Duration poll_interval);

}  // namespace tw::train

#endif  // TENSORWEAVE_TRAIN_SESSION_POLICY_H_
