#include "python/native/errors.h"

#include <pybind11/pybind11.h>

#include <string>

namespace py = pybind11;

namespace tw::python {

void ThrowIfError(const Status& status) {
  if (status.ok()) return;
  // tensorweave/errors.py: _from_status(code, message) -> an OpError subclass instance.
  py::object errors = py::module_::import("tensorweave.errors");
  py::object error =
      errors.attr("_from_status")(static_cast<int>(status.code()), std::string(status.message()));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

}  // namespace tw::python
