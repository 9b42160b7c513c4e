// ImportGraphDef: the nodes of a serialized graph added to a graph being built, as
// TensorFlow's import_graph_def adds them (tf.import_graph_def, tf.train.import_meta_graph).
#ifndef TENSORWEAVE_GRAPH_IMPORT_H_
#define TENSORWEAVE_GRAPH_IMPORT_H_

#include <map>
#include <string>
#include <string_view>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"

namespace tw {

// Adds every node of `graph` to the graph of `scope`, in order (each node after its
// inputs, as ToGraphDef writes them), named "<prefix>/<name>" (just its name when `prefix`
// is empty), with its inputs renamed alike and its device and attributes kept. Inputs named
// in `input_map` ("node:k", or "node" for output 0, as in `graph`) are replaced by the given
// outputs of the scope's graph. Each node is checked as a node built by hand is (its op,
// attributes, input types and shape function).
// InvalidArgument naming the node when it is refused, names an input that does not exist
// or comes later, or takes a name the graph already has ("Node name 'x' already exists in
// the Graph", TF's words); the nodes before it stay added.
Status ImportGraphDef(const Scope& scope, const proto::GraphDef& graph, std::string_view prefix,
                      const std::map<std::string, Output>& input_map = {});

}  // namespace tw

#endif  // TENSORWEAVE_GRAPH_IMPORT_H_
