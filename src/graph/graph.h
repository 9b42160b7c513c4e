// Graph: a validated, immutable graph of nodes with typed data edges and control edges,
// built from a GraphDef. Everything the executor needs about a node is resolved here once.
#ifndef TENSORWEAVE_SRC_GRAPH_GRAPH_H_
#define TENSORWEAVE_SRC_GRAPH_GRAPH_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/framework/op_def.h"
#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"

namespace tw {

// A reference to one output of a node, as written in NodeDef inputs: "name" or "name:k".
struct TensorId {
  std::string node;
  int index = 0;  // -1 for a control input ("^name")
  static StatusOr<TensorId> Parse(std::string_view text);
  std::string ToString() const { return node + ":" + std::to_string(index); }
  friend auto operator<=>(const TensorId&, const TensorId&) = default;
};

struct Edge {
  int src;         // node id
  int src_output;  // -1 for a control edge
  int dst;
  int dst_input;  // -1 for a control edge
  bool IsControl() const { return src_output < 0; }
};

struct Node {
  int id = 0;
  proto::NodeDef def;  // with default attributes filled in
  const OpDef* op_def = nullptr;
  std::vector<DataType> input_types;
  std::vector<DataType> output_types;
  std::vector<Edge> in_edges;   // data edges ordered by dst_input, then control edges
  std::vector<Edge> out_edges;  // data and control

  const std::string& name() const { return def.name(); }
  const std::string& op() const { return def.op(); }
};

// Immutable after construction; thread-compatible.
class Graph {
 public:
  // InvalidArgument naming the node (and the input) for: an unknown op, a duplicate name,
  // an input that names a missing node or output, wrong input count or type, bad
  // attributes, data inputs after control inputs, or a cycle.
  static StatusOr<std::unique_ptr<Graph>> Create(const proto::GraphDef& def);

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node* FindNode(std::string_view name) const;
  // Every node after all of its inputs; stable with respect to the GraphDef order.
  const std::vector<int>& topological_order() const { return order_; }
  proto::GraphDef ToGraphDef() const;

 private:
  Graph() = default;
  std::vector<Node> nodes_;
  std::map<std::string, int, std::less<>> by_name_;
  std::vector<int> order_;
};

// What one step of a graph computes: the subgraph that `fetches` and `targets` need, with
// each fed tensor replaced by an _Arg node (index = position in `feeds`) and each fetch
// read by a _Retval node (index = position in `fetches`). InvalidArgument when a feed or
// fetch names a tensor that does not exist, or a target a node that does not exist.
StatusOr<proto::GraphDef> PruneForStep(const proto::GraphDef& graph,
                                       const std::vector<std::string>& feeds,
                                       const std::vector<std::string>& fetches,
                                       const std::vector<std::string>& targets);

// Graphviz DOT of `graph`, nodes coloured by device and labelled with name, op and device.
std::string GraphToDot(const proto::GraphDef& graph);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_GRAPH_GRAPH_H_
