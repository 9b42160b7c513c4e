#include "python/native/module.h"

#include "python/native/gil.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "tensorweave's C++ runtime, as the tensorweave package uses it";
  tw::python::MainThreadIdent() = pybind11::module_::import("threading")
                                      .attr("main_thread")()
                                      .attr("ident")
                                      .cast<unsigned long>();  // NOLINT(runtime/int)
  tw::python::BindGraph(m);
  tw::python::BindSession(m);
  tw::python::BindServer(m);
  tw::python::BindTrain(m);
  tw::python::BindSaver(m);
  tw::python::BindSavedModel(m);
  tw::python::BindSummary(m);
  tw::python::BindSessionPolicy(m);
  tw::python::BindDatasets(m);
  tw::python::BindRecords(m);
  tw::python::BindData(m);
  tw::python::BindCoordinator(m);
}
