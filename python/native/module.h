// The native module `tensorweave._native`: the C++ runtime as the Python package uses it.
// Each Bind* adds one part; the pure-Python package gives them TF 1.x's names.
#ifndef TENSORWEAVE_PYTHON_NATIVE_MODULE_H_
#define TENSORWEAVE_PYTHON_NATIVE_MODULE_H_

#include <pybind11/pybind11.h>

#include <string>

#include "tensorweave/scope.h"

namespace tw::python {

void BindGraph(pybind11::module_& m);
void BindSession(pybind11::module_& m);
void BindServer(pybind11::module_& m);
void BindTrain(pybind11::module_& m);
void BindSaver(pybind11::module_& m);
void BindSavedModel(pybind11::module_& m);
void BindSummary(pybind11::module_& m);
void BindSessionPolicy(pybind11::module_& m);
void BindDatasets(pybind11::module_& m);
void BindRecords(pybind11::module_& m);
void BindData(pybind11::module_& m);
void BindCoordinator(pybind11::module_& m);

// The C++ graph of a `_native.Graph`.
const Scope& GraphScope(const pybind11::handle& graph);
// The node `name` of a `_native.Graph`; raises InvalidArgumentError when there is none.
Operation GraphNode(const pybind11::handle& graph, const std::string& name);

}  // namespace tw::python

#endif  // TENSORWEAVE_PYTHON_NATIVE_MODULE_H_
