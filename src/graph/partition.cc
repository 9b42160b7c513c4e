#include "src/graph/partition.h"

#include "src/framework/attr_value.h"
#include "src/graph/graph.h"

namespace tw {
namespace {

proto::NodeDef SendRecvNode(const std::string& name, const std::string& op, DataType type,
                            const std::string& tensor_name, const std::string& src_device,
                            uint64_t incarnation, const std::string& dst_device) {
  proto::NodeDef n;
  n.set_name(name);
  n.set_op(op);
  auto& attr = *n.mutable_attr();
  attr[op == "_Send" ? "T" : "tensor_type"] = MakeAttr(type);
  attr["tensor_name"] = MakeAttr(tensor_name);
  attr["send_device"] = MakeAttr(src_device);
  attr["send_device_incarnation"] = MakeAttr(static_cast<int64_t>(incarnation));
  attr["recv_device"] = MakeAttr(dst_device);
  return n;
}

}  // namespace

StatusOr<std::map<std::string, proto::GraphDef>> PartitionGraph(const proto::GraphDef& placed,
                                                                const PartitionOptions& options) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, Graph::Create(placed));
  std::map<std::string, proto::GraphDef> parts;
  // (source node, source output or -1 for control, destination device) -> the _Recv's name.
  std::map<std::tuple<int, int, std::string>, std::string> recvs;
  int edge_id = 0;

  for (int id : g->topological_order()) {
    const Node& n = g->nodes()[id];
    if (n.def.device().empty()) {
      return errors::InvalidArgument("node '", n.name(), "' has no device; place the graph first");
    }
    proto::NodeDef copy = n.def;
    copy.clear_input();
    for (const Edge& e : n.in_edges) {
      const Node& src = g->nodes()[e.src];
      const std::string input_name = e.IsControl() ? "^" + src.name()
                                     : e.src_output == 0
                                         ? src.name()
                                         : src.name() + ":" + std::to_string(e.src_output);
      if (src.def.device() == n.def.device()) {
        copy.add_input(input_name);
        continue;
      }
      const std::string& src_dev = src.def.device();
      const std::string& dst_dev = n.def.device();
      auto key = std::make_tuple(e.src, e.src_output, dst_dev);
      auto it = recvs.find(key);
      if (it == recvs.end()) {
        const std::string tensor_name = "edge_" + std::to_string(edge_id++) + "_" + src.name();
        const uint64_t incarnation = options.incarnation ? options.incarnation(src_dev) : 0;
        std::string sent = input_name;
        DataType type = e.IsControl() ? DT_FLOAT : src.output_types[e.src_output];
        proto::GraphDef& src_part = parts[src_dev];
        if (e.IsControl()) {
          // A control edge carries no value: send a dummy scalar made after the source.
          proto::NodeDef* dummy = src_part.add_node();
          dummy->set_name(tensor_name + "/dummy");
          dummy->set_op("Const");
          dummy->set_device(src_dev);
          dummy->add_input("^" + src.name());
          (*dummy->mutable_attr())["dtype"] = MakeAttr(DT_FLOAT);
          (*dummy->mutable_attr())["value"] = MakeAttr(Tensor::Scalar<float>(0));
          sent = dummy->name();
        }
        proto::NodeDef send = SendRecvNode(tensor_name + "/send", "_Send", type, tensor_name,
                                           src_dev, incarnation, dst_dev);
        send.set_device(src_dev);
        send.add_input(sent);
        *src_part.add_node() = send;
        proto::NodeDef recv = SendRecvNode(tensor_name + "/recv", "_Recv", type, tensor_name,
                                           src_dev, incarnation, dst_dev);
        recv.set_device(dst_dev);
        *parts[dst_dev].add_node() = recv;
        it = recvs.emplace(key, recv.name()).first;
      }
      copy.add_input(e.IsControl() ? "^" + it->second : it->second);
    }
    // Data inputs must precede control inputs.
    std::stable_partition(copy.mutable_input()->begin(), copy.mutable_input()->end(),
                          [](const std::string& in) { return !in.starts_with("^"); });
    *parts[n.def.device()].add_node() = std::move(copy);
  }
  return parts;
}

}  // namespace tw
