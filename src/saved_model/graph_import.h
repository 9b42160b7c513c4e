// TensorFlow's graph nodes as tensorweave's: the inverse of graph_export.h, for SavedModels
// that TensorFlow (or tensorweave) wrote.
//
// A node's op is tensorweave's op of TensorFlow's name (graph_export.h's table, read
// backwards; TensorFlow's AssignVariableOp and SaveV2, which its savers use, too).
// Attributes and tensors are re-encoded in tensorweave's field numbers; a TensorProto's
// typed values (float_val, int_val, ...; the last one repeated, as TensorFlow reads them)
// become its bytes. An attribute TensorFlow has and tensorweave's op lacks is dropped only
// when it holds TensorFlow's default (Cast's Truncate false, ...); private attributes
// other than "_class" are dropped. Anything else is refused: Unimplemented naming the node
// and op or attribute; InvalidArgument for a malformed tensor.
// Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_SAVED_MODEL_GRAPH_IMPORT_H_
#define TENSORWEAVE_SRC_SAVED_MODEL_GRAPH_IMPORT_H_

#include <string>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/protobuf/saved_model.pb.h"
#include "tensorweave/status.h"

namespace tw::saved_model {

StatusOr<proto::NodeDef> ImportNode(const tfproto::NodeDef& node);
StatusOr<proto::GraphDef> ImportGraph(const tfproto::GraphDef& graph);
// `what` names the tensor in errors (the node and attribute).
StatusOr<proto::TensorProto> ImportTensor(const tfproto::TensorProto& tensor,
                                          const std::string& what);

}  // namespace tw::saved_model

#endif  // TENSORWEAVE_SRC_SAVED_MODEL_GRAPH_IMPORT_H_
