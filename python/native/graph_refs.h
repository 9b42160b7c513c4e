// Graph references as the Python layer passes them to the training bindings: outputs as
// (node name, index), variables as (handle node, dtype enum, shape).
#ifndef TENSORWEAVE_PYTHON_NATIVE_GRAPH_REFS_H_
#define TENSORWEAVE_PYTHON_NATIVE_GRAPH_REFS_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "python/native/module.h"
#include "tensorweave/ops/state_ops.h"

namespace tw::python {

using NodeOutput = std::pair<std::string, int>;
using VariableSpec = std::tuple<std::string, int, std::vector<int64_t>>;

// The variable whose handle is node `std::get<0>(spec)` of the `_native.Graph`; raises
// InvalidArgumentError when there is no such node.
inline ops::Variable ToVariable(const pybind11::handle& graph, const VariableSpec& spec) {
  const auto& [node, dtype, shape] = spec;
  return ops::Variable{.handle = Output(GraphNode(graph, node), 0),
                       .dtype = static_cast<DataType>(dtype),
                       .shape = shape};
}

inline Output ToOutput(const pybind11::handle& graph, const NodeOutput& o) {
  return Output(GraphNode(graph, o.first), o.second);
}

inline NodeOutput FromOutput(const Output& o) { return {o.op().name(), o.index()}; }

}  // namespace tw::python

#endif  // TENSORWEAVE_PYTHON_NATIVE_GRAPH_REFS_H_
