#include "python/native/module.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "tensorweave's C++ runtime, as the tensorweave package uses it";
  tw::python::BindGraph(m);
  tw::python::BindSession(m);
  tw::python::BindServer(m);
  tw::python::BindTrain(m);
  tw::python::BindSaver(m);
}
