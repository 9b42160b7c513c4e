// Status to Python exception: every non-OK Status raised from the native module becomes the
// tensorweave.errors class of its code (NotFoundError, OutOfRangeError, ...), as TF 1.x's
// Python layer raises them, with the runtime's message unchanged.
#ifndef TENSORWEAVE_PYTHON_NATIVE_ERRORS_H_
#define TENSORWEAVE_PYTHON_NATIVE_ERRORS_H_

#include "tensorweave/status.h"

namespace tw::python {

// Throws pybind11::error_already_set holding the error's class; returns on OK.
// Needs the GIL.
void ThrowIfError(const Status& status);

template <typename T>
T ValueOrThrow(StatusOr<T> value) {
  ThrowIfError(value.status());
  return *std::move(value);
}

}  // namespace tw::python

#endif  // TENSORWEAVE_PYTHON_NATIVE_ERRORS_H_
