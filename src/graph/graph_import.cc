#include "tensorweave/graph_import.h"

#include <utility>
#include <vector>

#include "src/framework/op_def.h"
#include "src/graph/graph.h"

namespace tw {
namespace {

std::string Prefixed(std::string_view prefix, std::string_view name) {
  if (prefix.empty()) return std::string(name);
  return internal::StrCatAny(prefix, "/", name);
}

// How many of the node's data inputs the op's input argument takes.
StatusOr<int> ArgSize(const ArgDef& arg, const proto::NodeDef& node) {
  if (!arg.number_attr.empty()) {
    auto it = node.attr().find(arg.number_attr);
    if (it == node.attr().end() || it->second.value_case() != proto::AttrValue::kI) {
      return errors::InvalidArgument("node '", node.name(), "' (op: '", node.op(),
                                     "') has no int attribute '", arg.number_attr, "'");
    }
    return static_cast<int>(it->second.i());
  }
  if (!arg.type_list_attr.empty()) {
    auto it = node.attr().find(arg.type_list_attr);
    if (it == node.attr().end() || it->second.value_case() != proto::AttrValue::kList) {
      return errors::InvalidArgument("node '", node.name(), "' (op: '", node.op(),
                                     "') has no list(type) attribute '", arg.type_list_attr, "'");
    }
    return it->second.list().type_size();
  }
  return 1;
}

class Importer {
 public:
  Importer(const Scope& scope, std::string_view prefix,
           const std::map<std::string, Output>& input_map)
      : scope_(scope), prefix_(prefix), input_map_(input_map) {}

  Status Import(const proto::NodeDef& node) {
    TW_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global().LookUp(node.op()));
    const std::string name = Prefixed(prefix_, node.name());
    if (scope_.FindNode(name).valid()) {
      return errors::InvalidArgument("Node name '", name, "' already exists in the Graph");
    }
    std::vector<Output> data;
    std::vector<Operation> controls;
    for (const std::string& input : node.input()) {
      if (!input.empty() && input[0] == '^') {
        TW_ASSIGN_OR_RETURN(Operation op, Find(node, input.substr(1)));
        controls.push_back(op);
      } else {
        TW_ASSIGN_OR_RETURN(Output out, Resolve(node, input));
        data.push_back(out);
      }
    }
    std::vector<InputList> inputs;
    size_t next = 0;
    for (const ArgDef& arg : op_def->inputs) {
      TW_ASSIGN_OR_RETURN(int size, ArgSize(arg, node));
      if (size < 0 || next + static_cast<size_t>(size) > data.size()) break;
      InputList list;
      for (int i = 0; i < size; ++i) list.push_back(data[next++]);
      inputs.push_back(std::move(list));
    }
    if (next != data.size() || inputs.size() != op_def->inputs.size()) {
      return errors::InvalidArgument("node '", node.name(), "' (op: '", node.op(), "') has ",
                                     data.size(), " data inputs, which do not match its op's ",
                                     op_def->inputs.size(), " input arguments");
    }
    const AttrMap attrs(node.attr().begin(), node.attr().end());
    Scope here = scope_.WithOpName(name).WithDevice(node.device());
    if (!controls.empty()) here = here.WithControlDependencies(controls);
    StatusOr<Operation> added = here.TryAddNode(node.op(), inputs, attrs);
    if (!added.ok()) return added.status();
    if (added->name() != name) {  // the builder made the name unique: it was taken
      return errors::Internal("node '", name, "' was imported as '", added->name(), "'");
    }
    return OkStatus();
  }

 private:
  StatusOr<Operation> Find(const proto::NodeDef& node, const std::string& input) const {
    Operation op = scope_.FindNode(Prefixed(prefix_, input));
    if (!op.valid()) {
      return errors::InvalidArgument("node '", node.name(), "' has an input from '", input,
                                     "', which is not a node before it in the graph");
    }
    return op;
  }

  StatusOr<Output> Resolve(const proto::NodeDef& node, const std::string& input) const {
    StatusOr<TensorId> id = TensorId::Parse(input);
    if (!id.ok() || id->index < 0) {
      return errors::InvalidArgument("node '", node.name(), "' has an input '", input,
                                     "' that is not a tensor name");
    }
    const std::string& source = id->node;
    const int index = id->index;
    const std::string key = source + ":" + std::to_string(index);
    if (auto it = input_map_.find(key); it != input_map_.end()) return it->second;
    if (index == 0) {
      if (auto it = input_map_.find(source); it != input_map_.end()) return it->second;
    }
    TW_ASSIGN_OR_RETURN(Operation op, Find(node, source));
    if (index >= op.num_outputs()) {
      return errors::InvalidArgument("node '", node.name(), "' has an input '", input, "', but '",
                                     source, "' has ", op.num_outputs(), " outputs");
    }
    return Output(op, index);
  }

  const Scope& scope_;
  const std::string prefix_;
  const std::map<std::string, Output>& input_map_;
};

}  // namespace

Status ImportGraphDef(const Scope& scope, const proto::GraphDef& graph, std::string_view prefix,
                      const std::map<std::string, Output>& input_map) {
  Importer importer(scope, prefix, input_map);
  for (const proto::NodeDef& node : graph.node()) {
    TW_RETURN_IF_ERROR(importer.Import(node));
  }
  return OkStatus();
}

}  // namespace tw
