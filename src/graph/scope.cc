#include "tensorweave/scope.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_join.h"
#include "src/framework/attr_value.h"
#include "src/framework/op_def.h"
#include "src/graph/graph.h"
#include "src/graph/shape_inference.h"
#include "tensorweave/device_name.h"

namespace tw {
namespace internal {

// The graph a family of Scopes builds: nodes so far, names taken, first error.
class GraphBuilder {
 public:
  proto::GraphDef graph;
  std::map<std::string, std::vector<DataType>> output_types;
  std::map<std::string, int> node_index;                          // name -> position in graph
  std::map<std::string, std::vector<StaticShape>> output_shapes;  // src/graph/shape_inference.h
  std::set<std::string> names;
  Status status;
  // While a TryAddNode runs: the names it took, to give back if the node fails.
  std::vector<std::string>* names_taken = nullptr;

  std::string UniqueName(const std::string& base) {
    std::string name = base;
    for (int i = 1; !names.insert(name).second; ++i) name = base + "_" + std::to_string(i);
    if (names_taken != nullptr) names_taken->push_back(name);
    return name;
  }
  void Fail(const Status& s) {
    if (status.ok()) status = s;
  }
};

}  // namespace internal

Input::Input(std::initializer_list<int> v) {
  std::vector<int32_t> values(v.begin(), v.end());
  tensor_ = Tensor::FromVector<int32_t>(values);
}

Scope Scope::NewRootScope() { return Scope(std::make_shared<internal::GraphBuilder>(), State{}); }

Scope Scope::NewSubScope(std::string_view name) const {
  State s = state_;
  s.op_name.reset();
  const std::string unique = builder_->UniqueName(s.name_prefix + std::string(name));
  s.name_prefix = unique + "/";
  return Scope(builder_, s);
}

Scope Scope::WithOpName(std::string_view name) const {
  State s = state_;
  s.op_name = std::string(name);
  return Scope(builder_, s);
}

Scope Scope::WithDevice(std::string_view device) const {
  State s = state_;
  auto outer = DeviceName::Parse(state_.device);
  auto inner = DeviceName::Parse(device);
  if (!inner.ok()) {
    builder_->Fail(inner.status());
    return *this;
  }
  DeviceName merged = outer.ok() ? *outer : DeviceName();
  merged.OverrideWith(*inner);
  s.device = merged.ToString();
  return Scope(builder_, s);
}

Scope Scope::WithDeviceFunction(DeviceFunction fn) const {
  State s = state_;
  s.device_functions.push_back(std::move(fn));
  return Scope(builder_, s);
}

Scope Scope::WithControlDependencies(const std::vector<Operation>& ops) const {
  State s = state_;
  for (const Operation& op : ops) {
    // A node the builder refused cannot be waited for: its name, empty (kRefusedNode),
    // goes in as it is, and every node this scope makes is refused in turn (AddNode)
    // rather than built without the dependency asked for.
    s.control_deps.push_back(op.name());
  }
  return Scope(builder_, s);
}

Scope Scope::WithoutControlDependencies() const {
  State s = state_;
  s.control_deps.clear();
  return Scope(builder_, s);
}

Scope Scope::ColocateWith(const Operation& op) const {
  State s = state_;
  s.colocate_with = op.name();  // kRefusedNode for a node the builder refused
  return Scope(builder_, s);
}

Status Scope::status() const { return builder_->status; }

StatusOr<proto::GraphDef> Scope::ToGraphDef() const {
  TW_RETURN_IF_ERROR(builder_->status);
  return builder_->graph;
}

StatusOr<proto::GraphDef> Scope::NodesSince(int first) const {
  TW_RETURN_IF_ERROR(builder_->status);
  const auto& nodes = builder_->graph.node();
  proto::GraphDef fresh;
  for (int i = std::max(first, 0); i < nodes.size(); ++i) *fresh.add_node() = nodes[i];
  return fresh;
}

void Scope::UpdateStatus(const Status& s) const { builder_->Fail(s); }

StatusOr<Operation> Scope::TryAddNode(std::string_view op, const std::vector<InputList>& inputs,
                                      const AttrMap& attrs) const {
  internal::GraphBuilder& b = *builder_;
  TW_RETURN_IF_ERROR(b.status);
  const int first = b.graph.node_size();
  std::vector<std::string> taken;
  b.names_taken = &taken;
  Operation node = AddNode(op, inputs, attrs);
  b.names_taken = nullptr;
  if (node.valid()) return node;
  // Undo: the constants made for literal inputs, and every name taken.
  b.graph.mutable_node()->DeleteSubrange(first, b.graph.node_size() - first);
  for (const std::string& name : taken) {
    b.names.erase(name);
    b.output_types.erase(name);
    b.output_shapes.erase(name);
    b.node_index.erase(name);
  }
  return std::exchange(b.status, OkStatus());
}

Output Scope::AddNodeOutput(std::string_view op, const std::vector<InputList>& inputs,
                            const AttrMap& attrs, int index) const {
  Operation node = AddNode(op, inputs, attrs);
  if (!node.valid() || index >= node.num_outputs()) return Output();
  return Output(node, index);
}

// The data inputs of a node being built, as resolved by AddInputs.
struct Scope::NodeInputs {
  std::optional<std::string> resource_producer;  // the node creating a resource input
  std::vector<Output> outputs;                   // each data input, in order
  std::vector<DataType> types;                   // of each data input, in order
  std::vector<std::string> args;                 // the op argument each belongs to
};

namespace {

// Checks each data input against the type the op expects for it (`node` has its attributes
// complete).
Status CheckInputTypes(const OpDef& op_def, const proto::NodeDef& node,
                       const std::vector<DataType>& types, const std::vector<std::string>& args) {
  std::vector<DataType> expected;
  TW_RETURN_IF_ERROR(ArgTypesForNode(op_def, node, /*outputs=*/false, &expected));
  if (expected.size() != types.size()) {
    return errors::InvalidArgument("op ", op_def.name, " expects ", expected.size(),
                                   " inputs, got ", types.size());
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (types[i] != expected[i]) {
      return errors::InvalidArgument("input ", i, " (", args[i], ") must be ",
                                     DataTypeName(expected[i]), ", got ", DataTypeName(types[i]),
                                     " from ", node.input(static_cast<int>(i)));
    }
  }
  return OkStatus();
}

// The name of an invalid Operation, a node the builder refused: no node is called "".
constexpr std::string_view kRefusedNode = "";

// The control dependencies and colocation target a node is to get must be nodes of its
// graph: neither refused (invalid Operations) nor from another root scope.
Status CheckControlDepsAndColocation(const internal::GraphBuilder& b,
                                     const std::vector<std::string>& control_deps,
                                     const std::optional<std::string>& colocate_with) {
  for (const std::string& dep : control_deps) {
    if (dep == kRefusedNode) {
      return errors::InvalidArgument("a control dependency comes from a node that failed to build");
    }
    if (!b.node_index.contains(dep)) {
      return errors::InvalidArgument("control dependency: no node named ", dep, " in this graph");
    }
  }
  if (colocate_with == kRefusedNode) {
    return errors::InvalidArgument("the colocation target is a node that failed to build");
  }
  if (colocate_with && !b.node_index.contains(*colocate_with)) {
    return errors::InvalidArgument("colocation target: no node named ", *colocate_with,
                                   " in this graph");
  }
  return OkStatus();
}

}  // namespace

Operation Scope::AddNode(std::string_view op, const std::vector<InputList>& inputs,
                         const AttrMap& attrs) const {
  internal::GraphBuilder& b = *builder_;
  if (!b.status.ok()) return Operation();
  const std::string name =
      b.UniqueName(state_.name_prefix + (state_.op_name ? *state_.op_name : std::string(op)));
  auto fail = [&](const Status& s) {
    b.Fail(errors::Annotate(s, "node " + name + ": "));
    return Operation();
  };
  auto def = OpRegistry::Global().LookUp(op);
  if (!def.ok()) return fail(def.status());
  const OpDef& op_def = **def;
  if (inputs.size() != op_def.inputs.size()) {
    return fail(errors::InvalidArgument("op ", op, " takes ", op_def.inputs.size(),
                                        " input arguments, got ", inputs.size()));
  }

  proto::NodeDef node;
  node.set_name(name);
  node.set_op(std::string(op));
  node.set_device(state_.device);
  for (const auto& [key, value] : attrs) (*node.mutable_attr())[key] = value;
  NodeInputs resolved;
  if (Status s = AddInputs(op_def, inputs, &node, &resolved); !s.ok()) return fail(s);
  if (Status s = CheckControlDepsAndColocation(b, state_.control_deps, state_.colocate_with);
      !s.ok()) {
    return fail(s);
  }
  for (const std::string& dep : state_.control_deps) node.add_input("^" + dep);
  if (state_.colocate_with) {
    (*node.mutable_attr())["_class"].mutable_list()->add_s("loc:@" + *state_.colocate_with);
  }
  if (Status s = AddDefaultsAndValidateAttrs(op_def, &node); !s.ok()) return fail(s);
  if (Status s = CheckInputTypes(op_def, node, resolved.types, resolved.args); !s.ok()) {
    return fail(s);
  }
  std::vector<DataType> outputs;
  if (Status s = ArgTypesForNode(op_def, node, /*outputs=*/true, &outputs); !s.ok()) {
    return fail(s);
  }
  auto shapes = InferShapes(op_def, node, resolved, outputs.size());
  if (!shapes.ok()) return fail(shapes.status());
  ChooseDevice(resolved.resource_producer, &node);
  b.output_shapes[name] = *std::move(shapes);
  b.output_types[name] = outputs;
  b.node_index[name] = b.graph.node_size();
  *b.graph.add_node() = std::move(node);
  return Operation(name, outputs);
}

Status Scope::AddInputs(const OpDef& op_def, const std::vector<InputList>& inputs,
                        proto::NodeDef* node, NodeInputs* resolved) const {
  // Constants for literal inputs are made in a scope without this node's name or deps.
  State const_state = state_;
  const_state.op_name.reset();
  const_state.control_deps.clear();
  const Scope const_scope(builder_, const_state);
  auto& node_attrs = *node->mutable_attr();
  for (size_t a = 0; a < inputs.size(); ++a) {
    const ArgDef& arg = op_def.inputs[a];
    std::vector<Output> outputs;
    for (const Input& in : inputs[a]) {
      if (in.output()) {
        if (!in.output()->op().valid()) {
          return errors::InvalidArgument("input ", arg.name, " comes from a node that ",
                                         "failed to build");
        }
        // An Output of another graph (another root scope) names no node here; its edge
        // would dangle, and a resource input's device would be looked up in vain.
        if (!builder_->node_index.contains(in.output()->op().name())) {
          return errors::InvalidArgument("input ", arg.name, ": no node named ",
                                         in.output()->op().name(), " in this graph");
        }
        outputs.push_back(*in.output());
      } else {
        Output c = const_scope.AddNodeOutput(
            "Const", {},
            {{"value", MakeAttr(*in.tensor())}, {"dtype", MakeAttr(in.tensor()->dtype())}});
        if (!c.op().valid()) return builder_->status;  // the constant's own error
        outputs.push_back(c);
      }
    }
    // Attributes the inputs determine (counts and types), unless given.
    if (!arg.number_attr.empty() && !node_attrs.count(arg.number_attr)) {
      node_attrs[arg.number_attr] = MakeAttr(static_cast<int64_t>(outputs.size()));
    }
    if (!arg.type_attr.empty() && !node_attrs.count(arg.type_attr) && !outputs.empty()) {
      node_attrs[arg.type_attr] = MakeAttr(outputs[0].type());
    }
    if (!arg.type_list_attr.empty() && !node_attrs.count(arg.type_list_attr)) {
      std::vector<DataType> types;
      for (const Output& o : outputs) types.push_back(o.type());
      node_attrs[arg.type_list_attr] = MakeAttr(types);
    }
    for (const Output& o : outputs) {
      node->add_input(o.index() == 0 ? o.op().name() : o.name());
      if (o.type() == DT_RESOURCE && !resolved->resource_producer) {
        resolved->resource_producer = o.op().name();
      }
      resolved->outputs.push_back(o);
      resolved->types.push_back(o.type());
      resolved->args.push_back(arg.name);
    }
  }
  return OkStatus();
}

StatusOr<std::vector<StaticShape>> Scope::InferShapes(const OpDef& op_def,
                                                      const proto::NodeDef& node,
                                                      const NodeInputs& resolved,
                                                      size_t num_outputs) const {
  std::vector<StaticShape> shapes(num_outputs);
  const ShapeFn* fn = FindShapeFn(op_def.name);
  if (fn == nullptr) return shapes;  // unknown
  static const proto::NodeDef* const kUnknownNode = new proto::NodeDef();
  const internal::GraphBuilder& b = *builder_;
  auto static_shape = [&b](const std::string& node_name, int index) -> StaticShape {
    auto shape = b.output_shapes.find(node_name);
    const bool known =
        shape != b.output_shapes.end() && index < static_cast<int>(shape->second.size());
    return known ? shape->second[index] : std::nullopt;
  };
  std::vector<StaticShape> inputs, shapes_of_shape_inputs;
  std::vector<const proto::NodeDef*> input_nodes;
  for (const Output& o : resolved.outputs) {
    inputs.push_back(static_shape(o.op().name(), o.index()));
    auto index = b.node_index.find(o.op().name());
    const proto::NodeDef* producer =
        index != b.node_index.end() ? &b.graph.node(index->second) : kUnknownNode;
    input_nodes.push_back(producer);
    StaticShape measured;
    if (producer->op() == "Shape" && producer->input_size() > 0) {
      auto measured_input = TensorId::Parse(producer->input(0));
      if (measured_input.ok() && measured_input->index >= 0) {
        measured = static_shape(measured_input->node, measured_input->index);
      }
    }
    shapes_of_shape_inputs.push_back(std::move(measured));
  }
  ShapeContext ctx(node, std::move(inputs), std::move(input_nodes), static_cast<int>(num_outputs),
                   std::move(shapes_of_shape_inputs));
  TW_RETURN_IF_ERROR((*fn)(&ctx));
  return ctx.outputs();
}

Operation Scope::FindNode(std::string_view name) const {
  auto it = builder_->output_types.find(std::string(name));
  if (it == builder_->output_types.end()) return Operation();
  return Operation(it->first, it->second);
}

std::optional<TensorShape> Scope::InferredShape(const Output& output) const {
  auto it = builder_->output_shapes.find(output.op().name());
  if (it == builder_->output_shapes.end() ||
      output.index() >= static_cast<int>(it->second.size())) {
    return std::nullopt;
  }
  return it->second[output.index()];
}

void Scope::ChooseDevice(const std::optional<std::string>& resource_producer,
                         proto::NodeDef* node) const {
  const internal::GraphBuilder& b = *builder_;
  // Colocated nodes skip the device functions, so a setter's round robin does not count them.
  for (auto it = state_.device_functions.rbegin();
       !state_.colocate_with && it != state_.device_functions.rend(); ++it) {
    const std::string device = (*it)(*node);
    if (!device.empty()) {
      node->set_device(device);
      break;
    }
  }
  // An op colocated with another (ColocateWith) takes that node's device, not the one its
  // scope or device functions chose: an optimizer's slot variables follow their variable.
  // (AddNode has checked that both it and a resource input's producer are in the graph.)
  if (state_.colocate_with && !resource_producer) {
    node->set_device(b.graph.node(b.node_index.at(*state_.colocate_with)).device());
  }
  // An op that uses a resource runs where the resource lives, whatever scope built it.
  if (resource_producer) {
    const proto::NodeDef& producer = b.graph.node(b.node_index.at(*resource_producer));
    node->set_device(producer.device());
    auto& classes = *(*node->mutable_attr())["_class"].mutable_list()->mutable_s();
    classes.Clear();
    classes.Add("loc:@" + producer.name());
  }
}

}  // namespace tw
