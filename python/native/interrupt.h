// Ctrl-C for calls that block Python's main thread in the runtime (a step, a wait for the
// cluster): while an InterruptibleCall lives, SIGINT cancels its StepCancellation.
//
// How: the first such call on the main thread gives Python's signal module a wakeup fd
// (signal.set_wakeup_fd, the interpreter's mechanism for telling C code about signals),
// unless the program set one of its own; a thread of this module waits on it and cancels
// the registered calls. Python's own SIGINT handling is untouched: once the call has
// returned, PyErr_CheckSignals raises KeyboardInterrupt. Calls on other threads are not
// interrupted (Python delivers signals to the main thread only), nor are any when the
// program owns the wakeup fd or has a SIGINT handler of its own (it decides what Ctrl-C
// does; its steps run on).
#ifndef TENSORWEAVE_PYTHON_NATIVE_INTERRUPT_H_
#define TENSORWEAVE_PYTHON_NATIVE_INTERRUPT_H_

#include "tensorweave/session.h"

namespace tw::python {

class InterruptibleCall {
 public:
  // Needs the GIL.
  explicit InterruptibleCall(StepCancellation* cancellation);
  ~InterruptibleCall();
  InterruptibleCall(const InterruptibleCall&) = delete;
  InterruptibleCall& operator=(const InterruptibleCall&) = delete;

  // With the GIL, after the call returned: raises KeyboardInterrupt (throws
  // error_already_set) when a signal handler raised.
  void RaiseIfInterrupted();

 private:
  StepCancellation* cancellation_;
  bool registered_ = false;
};

}  // namespace tw::python

#endif  // TENSORWEAVE_PYTHON_NATIVE_INTERRUPT_H_
