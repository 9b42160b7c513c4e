#include "src/graph/placer.h"

#include <map>
#include <numeric>

#include "absl/strings/str_join.h"
#include "src/graph/graph.h"
#include "tensorweave/device_name.h"

namespace tw {
namespace {

// Union-find over node ids.
class Groups {
 public:
  explicit Groups(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Join(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

}  // namespace

Status PlaceGraph(const std::vector<std::string>& devices, const std::string& default_device,
                  proto::GraphDef* graph) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, Graph::Create(*graph));
  const std::vector<Node>& nodes = g->nodes();
  Groups groups(nodes.size());
  for (const Node& n : nodes) {
    for (const Edge& e : n.in_edges) {
      if (!e.IsControl() && nodes[e.src].output_types[e.src_output] == DT_RESOURCE) {
        groups.Join(n.id, e.src);
      }
    }
    if (auto it = n.def.attr().find("_class"); it != n.def.attr().end()) {
      for (const std::string& c : it->second.list().s()) {
        if (!c.starts_with("loc:@")) continue;
        // A step runs a pruned graph, which may lack the node asked for (a queue colocated
        // with the global step, in a step that never reads it). The builder already gave the
        // node that node's device, so the request still holds without the group.
        const Node* other = g->FindNode(c.substr(5));
        if (other != nullptr) groups.Join(n.id, other->id);
      }
    }
  }

  // A generator (no inputs: a constant, a feed) with no device of its own goes where all of
  // its consumers go, so its value does not cross tasks (a fed tensor then rides the
  // consumer task's RunGraph request instead of taking a second round trip).
  std::vector<int> members(nodes.size(), 0);
  for (const Node& n : nodes) ++members[groups.Find(n.id)];
  for (const Node& n : nodes) {
    if (!n.in_edges.empty() || !n.def.device().empty() || members[groups.Find(n.id)] != 1) {
      continue;
    }
    int consumers_group = -1;
    bool one_group = true;
    for (const Edge& e : n.out_edges) {
      const int group = groups.Find(e.dst);
      if (consumers_group != -1 && group != consumers_group) one_group = false;
      consumers_group = group;
    }
    if (consumers_group != -1 && one_group) {
      --members[groups.Find(n.id)];
      groups.Join(n.id, consumers_group);
      ++members[groups.Find(n.id)];
    }
  }

  // Merge each group's requests, remembering who asked for what for error messages.
  struct Request {
    DeviceName spec;
    std::string asked_by;
  };
  std::map<int, Request> requests;
  for (const Node& n : nodes) {
    Request& r = requests[groups.Find(n.id)];
    if (n.def.device().empty()) continue;
    auto spec = DeviceName::Parse(n.def.device());
    if (!spec.ok())
      return errors::InvalidArgument("node '", n.name(), "': ", spec.status().message());
    Status merged = r.spec.MergeFrom(*spec);
    if (!merged.ok()) {
      return errors::InvalidArgument("Cannot colocate nodes '", n.name(), "' and '", r.asked_by,
                                     "': ", merged.message());
    }
    if (r.asked_by.empty()) r.asked_by = n.name();
  }

  std::vector<DeviceName> parsed;
  for (const std::string& d : devices) {
    TW_ASSIGN_OR_RETURN(DeviceName p, DeviceName::Parse(d));
    parsed.push_back(p);
  }
  TW_ASSIGN_OR_RETURN(DeviceName fallback, DeviceName::Parse(default_device));
  std::map<int, std::string> chosen;
  for (const auto& [root, request] : requests) {
    if (request.spec.IsSatisfiedBy(fallback)) {
      chosen[root] = default_device;
      continue;
    }
    for (size_t i = 0; i < parsed.size(); ++i) {
      if (request.spec.IsSatisfiedBy(parsed[i])) {
        chosen[root] = devices[i];
        break;
      }
    }
    if (!chosen.count(root)) {
      return errors::InvalidArgument("Cannot assign a device for node '", request.asked_by,
                                     "': no device matches ", request.spec.ToString(),
                                     "; the cluster has ", absl::StrJoin(devices, ", "));
    }
  }
  for (int i = 0; i < graph->node_size(); ++i) {
    graph->mutable_node(i)->set_device(chosen[groups.Find(g->FindNode(graph->node(i).name())->id)]);
  }
  return OkStatus();
}

}  // namespace tw
