#include "src/graph/graph.h"

#include <deque>
#include <set>

#include "absl/strings/str_join.h"
#include "src/base/strings.h"

namespace tw {

StatusOr<TensorId> TensorId::Parse(std::string_view text) {
  TensorId id;
  if (text.starts_with("^")) {
    id.node = std::string(text.substr(1));
    id.index = -1;
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    std::optional<int> index = ParseNonNegativeInt(text.substr(colon + 1));
    if (!index) return errors::InvalidArgument("bad tensor name \"", text, "\"");
    id.node = std::string(text.substr(0, colon));
    id.index = *index;
  } else {
    id.node = std::string(text);
  }
  if (id.node.empty()) return errors::InvalidArgument("bad tensor name \"", text, "\"");
  return id;
}

StatusOr<std::unique_ptr<Graph>> Graph::Create(const proto::GraphDef& def) {
  std::unique_ptr<Graph> g(new Graph());
  g->nodes_.resize(static_cast<size_t>(def.node_size()));
  for (int i = 0; i < def.node_size(); ++i) {
    Node& n = g->nodes_[i];
    n.id = i;
    n.def = def.node(i);
    if (n.def.name().empty()) return errors::InvalidArgument("node ", i, " has no name");
    if (!g->by_name_.emplace(n.def.name(), i).second) {
      return errors::InvalidArgument("Duplicate node name in graph: '", n.def.name(), "'");
    }
    auto op_def = OpRegistry::Global().LookUp(n.def.op());
    if (!op_def.ok()) {
      return errors::InvalidArgument("node '", n.def.name(), "': ", op_def.status().message());
    }
    n.op_def = *op_def;
    TW_RETURN_IF_ERROR(AddDefaultsAndValidateAttrs(*n.op_def, &n.def));
    TW_RETURN_IF_ERROR(ArgTypesForNode(*n.op_def, n.def, false, &n.input_types));
    TW_RETURN_IF_ERROR(ArgTypesForNode(*n.op_def, n.def, true, &n.output_types));
  }
  for (Node& n : g->nodes_) {
    int data_inputs = 0;
    bool seen_control = false;
    for (const std::string& input : n.def.input()) {
      auto id = TensorId::Parse(input);
      if (!id.ok())
        return errors::InvalidArgument("node '", n.name(), "': ", id.status().message());
      auto src = g->by_name_.find(id->node);
      if (src == g->by_name_.end()) {
        return errors::InvalidArgument("node '", n.name(), "': input '", input,
                                       "' refers to a node that is not in the graph");
      }
      Node& s = g->nodes_[src->second];
      if (id->index < 0) {
        seen_control = true;
        n.in_edges.push_back({s.id, -1, n.id, -1});
        s.out_edges.push_back({s.id, -1, n.id, -1});
        continue;
      }
      if (seen_control) {
        return errors::InvalidArgument("node '", n.name(), "': data input '", input,
                                       "' comes after a control input");
      }
      if (id->index >= static_cast<int>(s.output_types.size())) {
        return errors::InvalidArgument("node '", n.name(), "': input '", input,
                                       "' asks for output ", id->index, " of '", s.name(),
                                       "', which has ", s.output_types.size(), " outputs");
      }
      if (data_inputs < static_cast<int>(n.input_types.size()) &&
          s.output_types[id->index] != n.input_types[data_inputs]) {
        return errors::InvalidArgument("node '", n.name(), "': input ", data_inputs, " ('", input,
                                       "') is ", DataTypeName(s.output_types[id->index]),
                                       " but op ", n.op(), " expects ",
                                       DataTypeName(n.input_types[data_inputs]));
      }
      n.in_edges.push_back({s.id, id->index, n.id, data_inputs});
      s.out_edges.push_back({s.id, id->index, n.id, data_inputs});
      ++data_inputs;
    }
    if (data_inputs != static_cast<int>(n.input_types.size())) {
      return errors::InvalidArgument("node '", n.name(), "' (op ", n.op(), ") has ", data_inputs,
                                     " inputs, expected ", n.input_types.size());
    }
  }
  // Kahn's algorithm; whatever is left over sits on a cycle.
  std::vector<int> pending(g->nodes_.size());
  std::deque<int> ready;
  for (const Node& n : g->nodes_) {
    pending[n.id] = static_cast<int>(n.in_edges.size());
    if (pending[n.id] == 0) ready.push_back(n.id);
  }
  while (!ready.empty()) {
    const int id = ready.front();
    ready.pop_front();
    g->order_.push_back(id);
    for (const Edge& e : g->nodes_[id].out_edges) {
      if (--pending[e.dst] == 0) ready.push_back(e.dst);
    }
  }
  if (g->order_.size() != g->nodes_.size()) {
    std::vector<std::string> on_cycle;
    for (const Node& n : g->nodes_) {
      if (pending[n.id] > 0 && on_cycle.size() < 5) on_cycle.push_back("'" + n.name() + "'");
    }
    return errors::InvalidArgument("the graph has a cycle through ", absl::StrJoin(on_cycle, ", "));
  }
  return g;
}

const Node* Graph::FindNode(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &nodes_[it->second];
}

proto::GraphDef Graph::ToGraphDef() const {
  proto::GraphDef def;
  for (const Node& n : nodes_) *def.add_node() = n.def;
  return def;
}

StatusOr<proto::GraphDef> PruneForStep(const proto::GraphDef& graph,
                                       const std::vector<std::string>& feeds,
                                       const std::vector<std::string>& fetches,
                                       const std::vector<std::string>& targets) {
  std::map<std::string, const proto::NodeDef*, std::less<>> by_name;
  for (const proto::NodeDef& n : graph.node()) by_name[n.name()] = &n;

  // The output type of a tensor, from its op's definition.
  auto output_type = [&](const TensorId& id) -> StatusOr<DataType> {
    auto it = by_name.find(id.node);
    if (it == by_name.end()) {
      return errors::InvalidArgument("Tensor ", id.ToString(), " was not found in the graph");
    }
    proto::NodeDef node = *it->second;
    TW_ASSIGN_OR_RETURN(const OpDef* def, OpRegistry::Global().LookUp(node.op()));
    TW_RETURN_IF_ERROR(AddDefaultsAndValidateAttrs(*def, &node));
    std::vector<DataType> types;
    TW_RETURN_IF_ERROR(ArgTypesForNode(*def, node, true, &types));
    if (id.index < 0 || id.index >= static_cast<int>(types.size())) {
      return errors::InvalidArgument("Tensor ", id.ToString(), " was not found in the graph (",
                                     id.node, " has ", types.size(), " outputs)");
    }
    return types[id.index];
  };

  proto::GraphDef out;
  std::map<TensorId, std::string> fed;  // fed tensor -> its _Arg node
  for (size_t i = 0; i < feeds.size(); ++i) {
    TW_ASSIGN_OR_RETURN(TensorId id, TensorId::Parse(feeds[i]));
    TW_ASSIGN_OR_RETURN(DataType type, output_type(id));
    if (fed.count(id)) return errors::InvalidArgument("Tensor ", id.ToString(), " is fed twice");
    proto::NodeDef* arg = out.add_node();
    arg->set_name("_arg_" + id.node + "_" + std::to_string(id.index));
    arg->set_op("_Arg");
    (*arg->mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
    (*arg->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
    fed[id] = arg->name();
  }

  // Walk back from fetches and targets; fed tensors cut the walk.
  std::set<std::string> needed;
  std::deque<std::string> work;
  auto need = [&](const std::string& name) {
    if (needed.insert(name).second) work.push_back(name);
  };
  std::vector<std::pair<TensorId, DataType>> fetch_ids;
  for (const std::string& f : fetches) {
    TW_ASSIGN_OR_RETURN(TensorId id, TensorId::Parse(f));
    TW_ASSIGN_OR_RETURN(DataType type, output_type(id));
    fetch_ids.emplace_back(id, type);
    if (!fed.count(id)) need(id.node);
  }
  for (const std::string& t : targets) {
    if (!by_name.count(t)) {
      return errors::InvalidArgument("Target node ", t, " was not found in the graph");
    }
    need(t);
  }
  while (!work.empty()) {
    const proto::NodeDef* n = by_name[work.front()];
    work.pop_front();
    for (const std::string& input : n->input()) {
      auto id = TensorId::Parse(input);
      if (!id.ok()) return id.status();
      if (id->index >= 0 && fed.count(*id)) continue;
      if (!by_name.count(id->node)) {
        return errors::InvalidArgument("node '", n->name(), "': input '", input,
                                       "' refers to a node that is not in the graph");
      }
      need(id->node);
    }
  }
  for (const proto::NodeDef& n : graph.node()) {
    if (!needed.count(n.name())) continue;
    proto::NodeDef* copy = out.add_node();
    *copy = n;
    for (int i = 0; i < copy->input_size(); ++i) {
      auto id = TensorId::Parse(copy->input(i));
      if (id.ok() && id->index >= 0) {
        if (auto it = fed.find(*id); it != fed.end()) copy->set_input(i, it->second);
      }
    }
  }
  for (size_t i = 0; i < fetch_ids.size(); ++i) {
    const auto& [id, type] = fetch_ids[i];
    proto::NodeDef* ret = out.add_node();
    ret->set_name("_retval_" + id.node + "_" + std::to_string(id.index) + "_" + std::to_string(i));
    ret->set_op("_Retval");
    auto it = fed.find(id);
    ret->add_input(it != fed.end() ? it->second : id.node + ":" + std::to_string(id.index));
    // A fetch is read where it is produced, so in a distributed step it travels back in
    // that task's reply instead of through another task.
    (*ret->mutable_attr())["_class"].mutable_list()->add_s(
        "loc:@" + (it != fed.end() ? it->second : id.node));
    (*ret->mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
    (*ret->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
  }
  return out;
}

std::string GraphToDot(const proto::GraphDef& graph) {
  static constexpr const char* kPalette[] = {"#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f",
                                             "#cab2d6", "#ffff99", "#1f78b4", "#33a02c"};
  std::map<std::string, std::string> colors;
  auto escape = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out;
  };
  std::string dot = "digraph tensorweave {\n  node [shape=box, style=\"rounded,filled\"];\n";
  for (const proto::NodeDef& n : graph.node()) {
    std::string& color = colors[n.device()];
    if (color.empty()) color = n.device().empty() ? "#eeeeee" : kPalette[(colors.size() - 1) % 8];
    dot += "  \"" + escape(n.name()) + "\" [label=\"" + escape(n.name()) + "\\n" + escape(n.op()) +
           (n.device().empty() ? "" : "\\n" + escape(n.device())) + "\", fillcolor=\"" + color +
           "\"];\n";
  }
  for (const proto::NodeDef& n : graph.node()) {
    for (const std::string& input : n.input()) {
      auto id = TensorId::Parse(input);
      if (!id.ok()) continue;
      dot += "  \"" + escape(id->node) + "\" -> \"" + escape(n.name()) + "\"" +
             (id->index < 0 ? " [style=dashed]" : "") + ";\n";
    }
  }
  return dot + "}\n";
}

}  // namespace tw
