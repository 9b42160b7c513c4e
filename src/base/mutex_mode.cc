// abseil's mutex deadlock detection in optimized builds: off.
//
// The abseil this project builds against has deadlock detection on by default. It records
// every acquisition of a Mutex in a process-wide lock graph, and every Mutex destruction
// removes its node under a global lock; steps create and destroy several mutexes each (the
// step's state, its cancellation manager, its rendezvous), so on a small step this costs
// more than the step's graph work. Debug builds (the sanitizer build of `make test`) keep it
// on, where it finds lock-order inversions.
#include "absl/synchronization/mutex.h"

namespace tw {
namespace {

#ifdef NDEBUG
[[maybe_unused]] const bool kDeadlockDetectionOff = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();
#endif

}  // namespace
}  // namespace tw
