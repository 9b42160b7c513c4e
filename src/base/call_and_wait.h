// Calling an asynchronous API and waiting for it: for the places that need a call's result
// before they go on (the master registering a graph, a fuzzer driving a service).
//
//   Status s = CallAndWait([&](auto done) { worker->RegisterGraphAsync(&req, &resp, done); });
//
// `start` is called once with a callback taking a Status; CallAndWait returns that Status
// once the callback has run (on any thread). Blocks the calling thread: never use it on a
// thread the call itself needs to complete.
#ifndef TENSORWEAVE_SRC_BASE_CALL_AND_WAIT_H_
#define TENSORWEAVE_SRC_BASE_CALL_AND_WAIT_H_

#include <functional>
#include <utility>

#include "absl/synchronization/notification.h"
#include "tensorweave/status.h"

namespace tw {

template <typename Start>
Status CallAndWait(Start&& start) {
  absl::Notification done;
  Status result;
  std::forward<Start>(start)(std::function<void(const Status&)>([&](const Status& s) {
    result = s;
    done.Notify();
  }));
  done.WaitForNotification();
  return result;
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_BASE_CALL_AND_WAIT_H_
