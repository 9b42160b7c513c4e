// A SavedModel as TensorFlow writes one: saved_model.pb (a SavedModel proto with a
// MetaGraphDef per tag set), next to variables/variables.{index,data-*} in TensorFlow's
// checkpoint format (the Saver writes those) and assets/.
//
// ExportMetaGraph turns tensorweave's graph into TensorFlow's MetaGraphDef for serving:
//   - only what the signatures' tensors, the variables and the main op need is kept (a
//     training graph's optimizer and initializers stay behind), each node converted by
//     graph_export.h; a node TensorFlow has no op for is refused, naming it;
//   - a saver subgraph in TensorFlow's ops and names, as TensorFlow's Saver builds it for
//     resource variables ("save/Const" the file name, SaveV2 and its control dependency,
//     RestoreV2 and an AssignVariableOp per variable, "save/restore_all"), with the SaverDef
//     that names them: TensorFlow's loader restores variables/variables through it;
//   - the signatures as SignatureDefs, the tags, the main op in the collection
//     "saved_model_main_op", and an AssetFileDef per asset (its tensor kept in the graph).
// Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_SAVED_MODEL_META_GRAPH_EXPORT_H_
#define TENSORWEAVE_SRC_SAVED_MODEL_META_GRAPH_EXPORT_H_

#include <string>
#include <vector>

#include "src/framework/attr_value.h"
#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/protobuf/saved_model.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/types.h"

namespace tw::saved_model {

// One named tensor of a signature: `name` is the graph tensor ("x:0").
struct TensorSpec {
  std::string key;
  std::string name;
  DataType dtype = DT_INVALID;
  PartialShape shape;
};

struct SignatureSpec {
  std::string key;          // "serving_default", ...
  std::string method_name;  // "tensorflow/serving/predict", ...
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// A variable as the checkpoint holds it: the whole tensor `checkpoint_name`, or (with
// full_shape set) rows [row_offset, row_offset + shape[0]) of it. `node` is its Variable.
struct VariableSpec {
  std::string checkpoint_name;
  std::string node;
  DataType dtype = DT_INVALID;
  std::vector<int64_t> shape;
  std::vector<int64_t> full_shape;
  int64_t row_offset = 0;
};

// An asset: the string tensor holding its path (a Const, fed the file's place under
// <export_dir>/assets/ when the model loads) and its file name there.
struct AssetSpec {
  std::string tensor;  // "vocabulary_path:0"
  std::string filename;
};

struct MetaGraphSpec {
  std::vector<std::string> tags;
  std::vector<SignatureSpec> signatures;
  std::vector<VariableSpec> variables;
  std::vector<AssetSpec> assets;
  std::string main_op;  // a node run after the variables are restored, or ""
  bool clear_devices = false;
};

// InvalidArgument naming a signature tensor or variable that is not in `graph`;
// Unimplemented naming a needed node whose op TensorFlow lacks.
StatusOr<tfproto::MetaGraphDef> ExportMetaGraph(const proto::GraphDef& graph,
                                                const MetaGraphSpec& spec);

// Writes <dir>/saved_model.pb (or saved_model.pbtxt, as text) holding `meta_graphs`,
// atomically. The directory must exist.
Status WriteSavedModel(const std::string& dir,
                       const std::vector<tfproto::MetaGraphDef>& meta_graphs, bool as_text);

}  // namespace tw::saved_model

#endif  // TENSORWEAVE_SRC_SAVED_MODEL_META_GRAPH_EXPORT_H_
