// tensorweave's graph nodes as TensorFlow's, for SavedModels that TensorFlow and TF Serving
// load (meta_graph_export.h builds the rest).
//
// A node keeps its name, inputs and device. Its op is TensorFlow's op of the same name and
// attributes (a table of ops checked to match), or TensorFlow's name for it where the two
// differ (resource variables: Variable is VarHandleOp, ReadVariable is ReadVariableOp).
// Attributes and tensors are re-encoded in TensorFlow's field numbers. An op with no
// TensorFlow counterpart is refused (Unimplemented naming the node and op): a graph for
// serving must hold only ops that TensorFlow has.
// Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_SAVED_MODEL_GRAPH_EXPORT_H_
#define TENSORWEAVE_SRC_SAVED_MODEL_GRAPH_EXPORT_H_

#include <string_view>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/protobuf/saved_model.pb.h"
#include "tensorweave/status.h"

namespace tw::saved_model {

// TensorFlow's name for tensorweave's op `op`, or "" when TensorFlow has none.
std::string_view TensorFlowOpName(std::string_view op);

// `node` as TensorFlow's NodeDef (see above). Unimplemented naming the node and its op.
StatusOr<tfproto::NodeDef> ExportNode(const proto::NodeDef& node);

tfproto::AttrValue ExportAttr(const proto::AttrValue& value);
tfproto::TensorProto ExportTensor(const proto::TensorProto& tensor);
tfproto::TensorShapeProto ExportShape(const proto::TensorShapeProto& shape);

}  // namespace tw::saved_model

#endif  // TENSORWEAVE_SRC_SAVED_MODEL_GRAPH_EXPORT_H_
