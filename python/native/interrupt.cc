#include "python/native/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <pybind11/pybind11.h>
#include <unistd.h>

#include <csignal>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace py = pybind11;

namespace tw::python {
namespace {

class Watcher {
 public:
  static Watcher& Get() {
    static auto* watcher = new Watcher();  // lives as long as the process
    return *watcher;
  }

  // With the GIL, on the main thread. False when the program owns the wakeup fd.
  bool Install() {
    if (state_ == kUnavailable) return false;
    // Once ours, always used: a program that sets its own wakeup fd later takes Ctrl-C
    // away from blocked calls, which then end as they would have (interpreter docs say a
    // process has one wakeup fd).
    if (state_ == kInstalled) return true;
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
      state_ = kUnavailable;
      return false;
    }
    py::module_ signal = py::module_::import("signal");
    py::object old = signal.attr("set_wakeup_fd")(fds[1], py::arg("warn_on_full_buffer") = false);
    if (old.cast<int>() != -1) {  // the program's: give it back
      signal.attr("set_wakeup_fd")(old);
      close(fds[0]);
      close(fds[1]);
      state_ = kUnavailable;
      return false;
    }
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    state_ = kInstalled;
    std::thread([this] { Watch(); }).detach();
    return true;
  }

  void Add(StepCancellation* c) {
    absl::MutexLock lock(&mu_);
    calls_.insert(c);
  }
  void Remove(StepCancellation* c) {
    absl::MutexLock lock(&mu_);
    calls_.erase(c);
  }

 private:
  void Watch() {
    for (;;) {
      pollfd p{read_fd_, POLLIN, 0};
      if (poll(&p, 1, -1) < 0) continue;
      unsigned char signals[64];
      bool interrupted = false;
      for (ssize_t n; (n = read(read_fd_, signals, sizeof(signals))) > 0;) {
        for (ssize_t i = 0; i < n; ++i) interrupted |= signals[i] == SIGINT;
      }
      if (!interrupted) continue;
      absl::MutexLock lock(&mu_);
      for (StepCancellation* c : calls_) c->Cancel();
    }
  }

  enum State { kNew, kInstalled, kUnavailable };
  State state_ = kNew;  // guarded by the GIL
  int read_fd_ = -1, write_fd_ = -1;
  absl::Mutex mu_;
  std::set<StepCancellation*> calls_ ABSL_GUARDED_BY(mu_);
};

// Whether SIGINT does what it does by default, raise KeyboardInterrupt. A program with a
// handler of its own (say, one that asks for a graceful stop) keeps its steps running.
bool SigintRaisesKeyboardInterrupt() {
  static auto* getsignal = new py::object(py::module_::import("signal").attr("getsignal"));
  static auto* default_handler =
      new py::object(py::module_::import("signal").attr("default_int_handler"));
  return (*getsignal)(static_cast<int>(SIGINT)).is(*default_handler);
}

bool OnMainThread() {
  static const unsigned long main_thread =  // NOLINT(runtime/int): Python's type
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return PyThread_get_thread_ident() == main_thread;
}

}  // namespace

InterruptibleCall::InterruptibleCall(StepCancellation* cancellation) : cancellation_(cancellation) {
  if (OnMainThread() && SigintRaisesKeyboardInterrupt() && Watcher::Get().Install()) {
    Watcher::Get().Add(cancellation_);
    registered_ = true;
  }
}

InterruptibleCall::~InterruptibleCall() {
  if (registered_) Watcher::Get().Remove(cancellation_);
}

void InterruptibleCall::RaiseIfInterrupted() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

}  // namespace tw::python
