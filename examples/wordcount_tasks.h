// The word count's three roles (examples/wordcount.cc says how they work together) and
// what they share about talking and stopping.
#ifndef TENSORWEAVE_EXAMPLES_WORDCOUNT_TASKS_H_
#define TENSORWEAVE_EXAMPLES_WORDCOUNT_TASKS_H_

#include <stdio.h>

#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tensorweave/tensorweave.h"

namespace tw::examples {

struct WordcountArgs {
  std::string list_file;
  bool verbose = false;
};

int RunFiles(Server* server, const WordcountArgs& args);
int RunReduce(Server* server, const RunConfig& config);
int RunMap(Server* server, const RunConfig& config, const WordcountArgs& args);

// Whole lines, one write each, so that tw launch never sees half of one.
inline void Say(const std::string& line) {
  std::string text = line + "\n";
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
}
inline void Complain(const std::string& line) {
  std::string text = line + "\n";
  fwrite(text.data(), 1, text.size(), stderr);
  fflush(stderr);
}

// Runs Join() on a thread of its own, so a task can both wait for the cluster to stop it
// and ask whether that has happened. The destructor stops the server if nobody did.
class StopWatch {
 public:
  explicit StopWatch(Server* server)
      : server_(server), thread_([this] {
          server_->Join();
          stopped_.Notify();
        }) {}
  ~StopWatch() {
    server_->Stop();
    thread_.join();
  }
  StopWatch(const StopWatch&) = delete;
  StopWatch& operator=(const StopWatch&) = delete;

  void Wait() { stopped_.WaitForNotification(); }
  // True once stopped; waits up to `timeout` for it.
  bool WaitFor(absl::Duration timeout) { return stopped_.WaitForNotificationWithTimeout(timeout); }
  bool stopped() const { return stopped_.HasBeenNotified(); }

 private:
  Server* server_;
  absl::Notification stopped_;
  std::thread thread_;
};

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_WORDCOUNT_TASKS_H_
