#include "src/graph/partition.h"

#include <set>
#include <tuple>
#include <utility>
#include <vector>

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

// (source node, source output or -1 for control, destination device): one cross-device
// tensor.
using CrossKey = std::tuple<int, int, std::string>;

// Whether `out` (node -> successors, over nodes and batches) has no cycle (Kahn's algorithm).
bool Acyclic(const std::vector<std::vector<int>>& out) {
  std::vector<int> pending(out.size(), 0);
  for (const std::vector<int>& succ : out) {
    for (int n : succ) ++pending[n];
  }
  std::vector<int> ready;
  for (size_t n = 0; n < out.size(); ++n) {
    if (pending[n] == 0) ready.push_back(static_cast<int>(n));
  }
  size_t visited = 0;
  while (!ready.empty()) {
    const int n = ready.back();
    ready.pop_back();
    ++visited;
    for (int succ : out[n]) {
      if (--pending[succ] == 0) ready.push_back(succ);
    }
  }
  return visited == out.size();
}

// The cross-device tensors whose _Recv may be prefetched. A destination pulls the prefetched
// tensors of one source device with one call answered when all are there, so each of its
// prefetched _Recv nodes waits for every tensor of that batch. Two conditions keep a step
// from waiting for ever:
// - A candidate's source node needs no node of the destination device that comes after any
//   tensor the destination receives from the source's device (a weight read after an
//   update that needs the destination's gradient is not one): the source produces the
//   batch without the destination having received any of it.
// - The batches together add no cycle: with each batch a node that waits for all its
//   sources and that its consumers wait for, the graph stays acyclic. (Two devices that
//   each batch, where each batch needs a value the other side computes from its own
//   batch, would wait for each other.) Batches are taken in order while that holds.
// - A pair of batches between two devices X and Y may become one call: X pushes its batch
//   to Y with its pull of Y's batch, so that pull starts only when X's batch is complete.
//   Accepted when the graph stays acyclic with X's batch before Y's.
struct Prefetch {
  std::set<CrossKey> prefetch;  // pulled, or pushed when also in `push`
  std::set<CrossKey> push;
};
Prefetch PrefetchableTensors(const Graph& g) {
  const std::vector<Node>& nodes = g.nodes();
  auto device = [&](int id) -> const std::string& { return nodes[id].def.device(); };
  std::map<std::pair<std::string, std::string>, std::set<CrossKey>> by_devices;
  for (const Node& n : nodes) {
    for (const Edge& e : n.in_edges) {
      if (device(e.src) == n.def.device()) continue;
      by_devices[{device(e.src), n.def.device()}].insert({e.src, e.src_output, n.def.device()});
    }
  }
  std::map<std::pair<std::string, std::string>, std::set<CrossKey>> candidates;
  for (const auto& [devices, keys] : by_devices) {
    const std::string& dst = devices.second;
    // Every node after (depending on) a source of these tensors.
    std::vector<bool> after(nodes.size(), false);
    std::vector<int> stack;
    for (const CrossKey& k : keys) stack.push_back(std::get<0>(k));
    while (!stack.empty()) {
      const int id = stack.back();
      stack.pop_back();
      for (const Edge& e : nodes[id].out_edges) {
        if (after[e.dst]) continue;
        after[e.dst] = true;
        stack.push_back(e.dst);
      }
    }
    for (const CrossKey& k : keys) {
      bool needs_later_destination_node = false;
      std::vector<bool> seen(nodes.size(), false);
      stack.assign(1, std::get<0>(k));
      while (!stack.empty() && !needs_later_destination_node) {
        const int id = stack.back();
        stack.pop_back();
        for (const Edge& e : nodes[id].in_edges) {
          if (seen[e.src]) continue;
          seen[e.src] = true;
          if (device(e.src) == dst && after[e.src]) {
            needs_later_destination_node = true;
            break;
          }
          stack.push_back(e.src);
        }
      }
      if (!needs_later_destination_node) candidates[devices].insert(k);
    }
  }
  // The graph with the accepted batches as nodes of their own.
  std::vector<std::vector<int>> out(nodes.size());
  for (const Node& n : nodes) {
    for (const Edge& e : n.out_edges) out[n.id].push_back(e.dst);
  }
  Prefetch result;
  std::map<std::pair<std::string, std::string>, int> batch_of;  // accepted batches' nodes
  for (const auto& [devices, keys] : candidates) {
    std::vector<std::vector<int>> with = out;
    const int batch = static_cast<int>(with.size());
    with.emplace_back();
    for (const CrossKey& k : keys) {
      const auto& [src, output, dst] = k;
      with[src].push_back(batch);
      for (const Edge& e : nodes[src].out_edges) {
        if (e.src_output == output && device(e.dst) == dst) with[batch].push_back(e.dst);
      }
    }
    if (!Acyclic(with)) continue;
    out = std::move(with);
    batch_of[devices] = batch;
    result.prefetch.insert(keys.begin(), keys.end());
  }
  for (const auto& [devices, batch] : batch_of) {
    auto reverse = batch_of.find({devices.second, devices.first});
    if (reverse == batch_of.end()) continue;
    out[batch].push_back(reverse->second);  // this batch goes with the pull of the other
    if (!Acyclic(out)) {
      out[batch].pop_back();
      continue;
    }
    const std::set<CrossKey>& keys = candidates.at(devices);
    result.push.insert(keys.begin(), keys.end());
  }
  return result;
}

}  // namespace

StatusOr<std::map<std::string, proto::GraphDef>> PartitionGraph(const proto::GraphDef& placed,
                                                                const PartitionOptions& options) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, Graph::Create(placed));
  std::map<std::string, proto::GraphDef> parts;
  // The _Recv's name of each cross-device tensor.
  std::map<CrossKey, std::string> recvs;
  const Prefetch prefetch = PrefetchableTensors(*g);
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
        const bool pushed = prefetch.push.contains(key);
        if (pushed) (*send.mutable_attr())["push"] = MakeAttr(true);
        *src_part.add_node() = send;
        proto::NodeDef recv = SendRecvNode(tensor_name + "/recv", "_Recv", type, tensor_name,
                                           src_dev, incarnation, dst_dev);
        recv.set_device(dst_dev);
        if (prefetch.prefetch.contains(key)) (*recv.mutable_attr())["prefetch"] = MakeAttr(true);
        if (pushed) (*recv.mutable_attr())["pushed"] = MakeAttr(true);
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
