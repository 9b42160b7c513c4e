// The graph half of the native module: the registered op definitions, device names, and
// Graph, which adds nodes through the C++ builder (Scope::TryAddNode) one at a time.
//
// The Python layer decides names, devices, control inputs and colocation by TF 1.x's rules
// and passes them resolved; the builder checks the op, its attributes and its input types,
// infers type attributes, fills defaults and places resource users with their resource.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "python/native/errors.h"
#include "python/native/module.h"
#include "python/native/tensor_numpy.h"
#include "src/framework/attr_value.h"
#include "src/framework/op_def.h"
#include "src/graph/graph.h"
#include "tensorweave/device_name.h"
#include "tensorweave/graph_import.h"
#include "tensorweave/scope.h"
#include "tensorweave/train/gradients.h"

namespace py = pybind11;

namespace tw::python {
namespace {

py::dict ArgToDict(const ArgDef& arg) {
  py::dict d;
  d["name"] = arg.name;
  d["type"] = static_cast<int>(arg.type);
  d["type_attr"] = arg.type_attr;
  d["number_attr"] = arg.number_attr;
  d["type_list_attr"] = arg.type_list_attr;
  return d;
}

py::object ShapeToPython(const proto::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return py::none();
  py::list dims;
  for (int64_t d : shape.dim()) dims.append(d < 0 ? py::object(py::none()) : py::int_(d));
  return py::tuple(dims);
}

py::object AttrToPython(const proto::AttrValue& v) {
  switch (v.value_case()) {
    case proto::AttrValue::kI:
      return py::int_(v.i());
    case proto::AttrValue::kF:
      return py::float_(v.f());
    case proto::AttrValue::kB:
      return py::bool_(v.b());
    case proto::AttrValue::kS:
      return py::bytes(v.s());
    case proto::AttrValue::kType:
      return py::int_(static_cast<int>(v.type()));
    case proto::AttrValue::kShape:
      return ShapeToPython(v.shape());
    case proto::AttrValue::kList: {
      py::list out;
      for (int64_t i : v.list().i()) out.append(i);
      for (float f : v.list().f()) out.append(f);
      for (bool b : v.list().b()) out.append(b);
      for (const std::string& s : v.list().s()) out.append(py::bytes(s));
      for (int t : v.list().type()) out.append(t);
      for (const auto& s : v.list().shape()) out.append(ShapeToPython(s));
      return out;
    }
    default:
      return py::none();  // tensors: the Python layer keeps the value it gave
  }
}

// An output's static shape for Python: None for an unknown rank, else a tuple with None for
// unknown dimensions.
py::object ShapeForPython(const Scope& scope, const Output& output) {
  std::optional<TensorShape> shape = scope.InferredShape(output);
  if (!shape) return py::none();
  py::list dims;
  for (int64_t d : shape->dims()) {
    dims.append(d == TensorShape::kUnknownDim ? py::object(py::none()) : py::int_(d));
  }
  return py::tuple(dims);
}

py::dict OpDefToDict(const OpDef& def) {
  py::dict d;
  d["name"] = def.name;
  py::list inputs, outputs, attrs;
  for (const ArgDef& a : def.inputs) inputs.append(ArgToDict(a));
  for (const ArgDef& a : def.outputs) outputs.append(ArgToDict(a));
  for (const AttrDef& a : def.attrs) {
    py::dict attr;
    attr["name"] = a.name;
    attr["kind"] = a.kind;
    attr["default"] = a.default_value ? AttrToPython(*a.default_value) : py::object(py::none());
    attr["has_default"] = a.default_value.has_value();
    py::list allowed;
    for (DataType t : a.allowed_types) allowed.append(static_cast<int>(t));
    attr["allowed_types"] = allowed;
    attrs.append(attr);
  }
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["attrs"] = attrs;
  d["is_stateful"] = def.is_stateful;
  d["doc"] = def.doc;
  return d;
}

py::list OpDefs() {
  py::list out;
  for (const std::string& name : OpRegistry::Global().ListOps()) {
    out.append(OpDefToDict(*ValueOrThrow(OpRegistry::Global().LookUp(name))));
  }
  return out;
}

// A Python value as an attribute of `kind`; the message names the node and attribute.
StatusOr<PartialShape> ToShape(const py::handle& value, const std::string& what) {
  if (value.is_none()) return PartialShape::Unknown();
  std::vector<int64_t> dims;
  try {
    for (const py::handle& d : value) dims.push_back(d.is_none() ? -1 : d.cast<int64_t>());
  } catch (const py::cast_error&) {
    return errors::InvalidArgument(what, ": a shape must be None or a list of ints or None");
  }
  return PartialShape::Of(std::move(dims));
}

template <typename T>
StatusOr<T> Cast(const py::handle& value, const std::string& what, const char* expected) {
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    return errors::InvalidArgument(what, ": expected ", expected, ", got ",
                                   std::string(py::str(py::type::of(value).attr("__name__"))));
  }
}

StatusOr<proto::AttrValue> ToAttr(const std::string& kind, const py::handle& value,
                                  const std::string& what) {
  if (kind == "int") {
    TW_ASSIGN_OR_RETURN(int64_t v, Cast<int64_t>(value, what, "an int"));
    return MakeAttr(v);
  }
  if (kind == "float") {
    TW_ASSIGN_OR_RETURN(float v, Cast<float>(value, what, "a float"));
    return MakeAttr(v);
  }
  if (kind == "bool") {
    TW_ASSIGN_OR_RETURN(bool v, Cast<bool>(value, what, "a bool"));
    return MakeAttr(v);
  }
  if (kind == "string") {
    TW_ASSIGN_OR_RETURN(std::string v, Cast<std::string>(value, what, "a string"));
    return MakeAttr(std::string_view(v));
  }
  if (kind == "type") {
    TW_ASSIGN_OR_RETURN(int t, Cast<int>(value, what, "a dtype"));
    if (!IsValidDataType(t)) return errors::InvalidArgument(what, ": no data type ", t);
    return MakeAttr(static_cast<DataType>(t));
  }
  if (kind == "shape") {
    TW_ASSIGN_OR_RETURN(PartialShape shape, ToShape(value, what));
    return MakeAttr(shape);
  }
  if (kind == "tensor") {
    py::array array = py::array::ensure(value);
    if (!array) {
      PyErr_Clear();
      return errors::InvalidArgument(what, ": expected an array");
    }
    const std::string numpy_name = py::str(array.dtype());
    auto dtype = DataTypeFromName(numpy_name == "object" ? "string" : numpy_name);
    if (!dtype.ok()) return errors::InvalidArgument(what, ": ", dtype.status().message());
    TW_ASSIGN_OR_RETURN(Tensor tensor, NumpyToTensor(array, *dtype, what));
    return MakeAttr(tensor);
  }
  if (kind == "list(type)") {
    std::vector<DataType> types;
    for (const py::handle& t : value) {
      TW_ASSIGN_OR_RETURN(int v, Cast<int>(t, what, "a list of dtypes"));
      if (!IsValidDataType(v)) return errors::InvalidArgument(what, ": no data type ", v);
      types.push_back(static_cast<DataType>(v));
    }
    return MakeAttr(types);
  }
  if (kind == "list(int)") {
    TW_ASSIGN_OR_RETURN(auto ints, Cast<std::vector<int64_t>>(value, what, "a list of ints"));
    return MakeAttr(ints);
  }
  if (kind == "list(shape)") {
    std::vector<PartialShape> shapes;
    for (const py::handle& s : value) {
      TW_ASSIGN_OR_RETURN(PartialShape shape, ToShape(s, what));
      shapes.push_back(std::move(shape));
    }
    return MakeAttr(shapes);
  }
  return errors::Unimplemented(what, ": attributes of kind ", kind, " cannot be set from Python");
}

// The graph being built: a C++ root Scope and the operations added so far by name.
class Graph {
 public:
  // Adds a node; returns (output dtypes, device as placed, output shapes: None for an
  // unknown rank, else a tuple with None for unknown dimensions). The builder's refusal is
  // raised (InvalidArgumentError naming the node; the Python layer makes it the ValueError
  // or TypeError TF raises).
  py::tuple AddNode(const std::string& op, const std::string& name,
                    const std::vector<std::vector<std::pair<std::string, int>>>& inputs,
                    const py::dict& attrs, const std::string& device,
                    const std::vector<std::string>& control_inputs,
                    const std::string& colocate_with) {
    const OpDef* def = ValueOrThrow(OpRegistry::Global().LookUp(op));
    AttrMap attr_map;
    for (const auto& [key, value] : attrs) {
      const std::string attr = key.cast<std::string>();
      const AttrDef* attr_def = def->FindAttr(attr);
      if (attr_def == nullptr) {
        ThrowIfError(
            errors::InvalidArgument("node ", name, ": op ", op, " has no attribute ", attr));
      }
      attr_map[attr] =
          ValueOrThrow(ToAttr(attr_def->kind, value, "node " + name + ": attribute " + attr));
    }
    std::vector<InputList> input_lists;
    for (const auto& arg : inputs) {
      InputList list;
      for (const auto& [node, index] : arg) list.push_back(Output(Find(node), index));
      input_lists.push_back(std::move(list));
    }
    std::vector<Operation> deps;
    for (const std::string& dep : control_inputs) deps.push_back(Find(dep));
    Scope scope = root_.WithOpName(name).WithDevice(device).WithControlDependencies(deps);
    if (!colocate_with.empty()) scope = scope.ColocateWith(Find(colocate_with));
    const int first = static_cast<int>(ops_.size());
    if (ops_.count(name) != 0) {  // the builder would rename it; TF refuses it
      ThrowIfError(errors::InvalidArgument("Duplicate node name in graph: '", name, "'"));
    }
    Operation added = ValueOrThrow(scope.TryAddNode(op, input_lists, attr_map));
    proto::GraphDef fresh = ValueOrThrow(root_.NodesSince(first));
    ops_.emplace(added.name(), added);
    py::list types, shapes;
    for (int i = 0; i < added.num_outputs(); ++i) {
      types.append(static_cast<int>(added.output_type(i)));
      shapes.append(ShapeForPython(root_, Output(added, i)));
    }
    return py::make_tuple(types, fresh.node(fresh.node_size() - 1).device(), shapes);
  }

  // The nodes from index `first` on that C++ code added (gradients), as dicts with name,
  // op, inputs ("node:i", "^node"), device, output dtypes and shapes; they become known
  // here, so Python can use them as inputs.
  py::list ImportNodesSince(int first) {
    proto::GraphDef fresh = ValueOrThrow(root_.NodesSince(first));
    py::list out;
    for (const proto::NodeDef& node : fresh.node()) {
      Operation op = root_.FindNode(node.name());
      ops_.emplace(node.name(), op);
      py::list inputs, types, shapes;
      for (const std::string& input : node.input()) inputs.append(input);
      for (int i = 0; i < op.num_outputs(); ++i) {
        types.append(static_cast<int>(op.output_type(i)));
        shapes.append(ShapeForPython(root_, Output(op, i)));
      }
      py::dict d;
      d["name"] = node.name();
      d["op"] = node.op();
      d["inputs"] = inputs;
      d["device"] = node.device();
      d["types"] = types;
      d["shapes"] = shapes;
      out.append(d);
    }
    return out;
  }

  // tw::Gradients of sum(ys) with respect to xs (("node", index) pairs), built on `device`.
  // Per x: None (no y depends on it), ("dense", node, index), or ("sparse", indices,
  // values, dense_shape) with each an ("node", index) pair. Call ImportNodesSince after.
  py::list Gradients(const std::vector<std::pair<std::string, int>>& ys,
                     const std::vector<std::pair<std::string, int>>& xs,
                     const std::vector<std::pair<std::string, int>>& grad_ys,
                     const std::string& device) {
    auto outputs = [this](const std::vector<std::pair<std::string, int>>& names) {
      std::vector<Output> out;
      for (const auto& [node, index] : names) out.push_back(Output(Find(node), index));
      return out;
    };
    std::vector<Gradient> grads = ValueOrThrow(
        tw::Gradients(scope().WithDevice(device), outputs(ys), outputs(xs), outputs(grad_ys)));
    auto pair = [](const Output& o) { return py::make_tuple(o.op().name(), o.index()); };
    py::list out;
    for (const Gradient& g : grads) {
      if (!g.exists()) {
        out.append(py::none());
      } else if (g.sparse) {
        out.append(py::make_tuple("sparse", pair(g.sparse->indices), pair(g.sparse->values),
                                  pair(g.sparse->dense_shape)));
      } else {
        out.append(py::make_tuple("dense", pair(g.dense)));
      }
    }
    return out;
  }

  // The scope C++ builders (gradients, optimizers, savers) add nodes with: the root, with
  // the control dependencies of the Python `control_dependencies` blocks around the build
  // (set_building_control_dependencies), as TF 1.x applies them to every op made inside.
  const Scope& scope() const { return building_ ? *building_ : root_; }
  void SetBuildingControlDependencies(const std::vector<std::string>& names) {
    if (names.empty()) {
      building_.reset();
      return;
    }
    std::vector<Operation> deps;
    for (const std::string& name : names) deps.push_back(Find(name));
    building_ = root_.WithControlDependencies(deps);
  }
  // The serialized GraphDef (tw.proto.GraphDef) built so far.
  // tw::ImportGraphDef of serialized GraphDef bytes under `prefix`; `input_map` maps the
  // graph's tensor names to ("node", index) outputs here. Call ImportNodesSince after.
  void ImportGraphDef(const py::bytes& graph_def, const std::string& prefix,
                      const std::map<std::string, std::pair<std::string, int>>& input_map) {
    proto::GraphDef def;
    if (!def.ParseFromString(std::string(graph_def))) {
      ThrowIfError(errors::InvalidArgument("the graph_def is not a serialized GraphDef"));
    }
    std::map<std::string, Output> mapped;
    for (const auto& [name, source] : input_map) {
      mapped.emplace(name, Output(Find(source.first), source.second));
    }
    ThrowIfError(tw::ImportGraphDef(scope(), def, prefix, mapped));
  }

  py::bytes SerializedGraphDef() const {
    return py::bytes(ValueOrThrow(root_.ToGraphDef()).SerializeAsString());
  }

  Operation Find(const std::string& name) const {
    auto it = ops_.find(name);
    if (it == ops_.end()) ThrowIfError(errors::InvalidArgument("no node named ", name));
    return it->second;
  }

 private:
  Scope root_ = Scope::NewRootScope();
  std::optional<Scope> building_;
  std::unordered_map<std::string, Operation> ops_;
};

// "/job:ps/task:0/cpu:0" -> "/job:ps/task:0/device:CPU:0"; ValueError for bad syntax.
std::string CanonicalDevice(const std::string& device) {
  return ValueOrThrow(DeviceName::Parse(device)).ToString();
}

// Merges `inner` over `outer` (fields `inner` sets win), as nested device scopes do.
std::string MergeDevices(const std::string& outer, const std::string& inner) {
  DeviceName merged = ValueOrThrow(DeviceName::Parse(outer));
  merged.OverrideWith(ValueOrThrow(DeviceName::Parse(inner)));
  return merged.ToString();
}

}  // namespace

const Scope& GraphScope(const py::handle& graph) { return graph.cast<const Graph&>().scope(); }

Operation GraphNode(const py::handle& graph, const std::string& name) {
  return graph.cast<const Graph&>().Find(name);
}

// The nodes of serialized GraphDef bytes that `targets` need (PruneForStep with no feeds
// or fetches), in their order, as serialized bytes: tf.graph_util.extract_sub_graph.
py::bytes ExtractSubGraph(const py::bytes& graph_def, const std::vector<std::string>& targets) {
  proto::GraphDef def;
  if (!def.ParseFromString(std::string(graph_def))) {
    ThrowIfError(errors::InvalidArgument("the graph_def is not a serialized GraphDef"));
  }
  return py::bytes(ValueOrThrow(PruneForStep(def, {}, {}, targets)).SerializeAsString());
}

void BindGraph(py::module_& m) {
  m.def("op_defs", &OpDefs, "Every registered op definition, as dicts.");
  m.def("canonical_device", &CanonicalDevice);
  m.def("extract_sub_graph", &ExtractSubGraph, py::arg("graph_def"), py::arg("targets"));
  m.def("merge_devices", &MergeDevices);
  py::class_<Graph>(m, "Graph")
      .def(py::init<>())
      .def("add_node", &Graph::AddNode, py::arg("op"), py::arg("name"), py::arg("inputs"),
           py::arg("attrs"), py::arg("device"), py::arg("control_inputs"), py::arg("colocate_with"))
      .def("graph_def", &Graph::SerializedGraphDef)
      .def("import_nodes_since", &Graph::ImportNodesSince, py::arg("first"))
      .def("import_graph_def", &Graph::ImportGraphDef, py::arg("graph_def"), py::arg("prefix"),
           py::arg("input_map"))
      .def("set_building_control_dependencies", &Graph::SetBuildingControlDependencies,
           py::arg("names"))
      .def("gradients", &Graph::Gradients, py::arg("ys"), py::arg("xs"), py::arg("grad_ys"),
           py::arg("device"));
}

}  // namespace tw::python
