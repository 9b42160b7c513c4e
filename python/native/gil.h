// Running C++ without the GIL, safely for daemon threads.
//
// pybind11's gil_scoped_release takes the GIL back in its destructor. A daemon thread
// whose blocking call (a step waiting on a queue) returns while the interpreter finalizes
// is ended there by CPython with pthread_exit, and that unwinding out of a noexcept
// destructor aborts the whole process ("terminate called without an active exception")
// after the program itself had finished. WithoutGil takes the GIL back in ordinary code:
// a thread that comes back while the interpreter finalizes is parked until the process
// exits, never touching Python again. (The finalizing thread itself, the main thread,
// takes the GIL back as usual: a server stopped by finalization goes on.)
#ifndef TENSORWEAVE_PYTHON_NATIVE_GIL_H_
#define TENSORWEAVE_PYTHON_NATIVE_GIL_H_

#include <Python.h>
#include <unistd.h>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace tw::python {

inline bool InterpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// The thread that finalizes the interpreter: the main thread, recorded at import.
inline unsigned long& MainThreadIdent() {  // NOLINT(runtime/int): CPython's type
  static unsigned long ident = 0;          // NOLINT(runtime/int)
  return ident;
}

// Takes the GIL back for `state` (from PyEval_SaveThread), or parks the thread for good
// when it is not the main thread and the interpreter is finalizing.
inline void TakeGilBack(PyThreadState* state) {
  if (InterpreterFinalizing() && PyThread_get_thread_ident() != MainThreadIdent()) {
    for (;;) pause();
  }
  PyEval_RestoreThread(state);
}

// Runs `f()` without the GIL and returns its result; exceptions from f are rethrown with
// the GIL held again.
template <typename F>
decltype(auto) WithoutGil(F&& f) {
  using Result = std::invoke_result_t<F>;
  PyThreadState* state = PyEval_SaveThread();
  std::exception_ptr error;
  if constexpr (std::is_void_v<Result>) {
    try {
      std::forward<F>(f)();
    } catch (...) {
      error = std::current_exception();
    }
    TakeGilBack(state);
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<Result> result;
    try {
      result.emplace(std::forward<F>(f)());
    } catch (...) {
      error = std::current_exception();
    }
    TakeGilBack(state);
    if (error) std::rethrow_exception(error);
    return Result(std::move(*result));
  }
}

}  // namespace tw::python

#endif  // TENSORWEAVE_PYTHON_NATIVE_GIL_H_
