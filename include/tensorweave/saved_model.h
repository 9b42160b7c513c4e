// SavedModels in TensorFlow's format, loaded into a session (what TF's LoadSavedModel and
// tf.saved_model.loader.load do):
//
//   auto bundle = tw::LoadSavedModel({}, "/models/fashion/1", {"serve"});
//   const auto& sig = (*bundle)->meta_graph.signature_def().at("serving_default");
//   std::vector<Tensor> out;
//   status = (*bundle)->session->Run({{sig.inputs().at("x").name(), batch}},
//                                    {sig.outputs().at("probs").name()}, {}, &out);
//
// The MetaGraphDef of the tag set is converted to tensorweave's ops (an op tensorweave
// lacks, or an attribute it cannot honour, is Unimplemented naming the node), its graph
// given to a new session, its variables restored from <dir>/variables/variables through
// the model's own saver subgraph, and its main op (or legacy init op) run.
#ifndef TENSORWEAVE_SAVED_MODEL_H_
#define TENSORWEAVE_SAVED_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "tensorweave/protobuf/saved_model.pb.h"
#include "tensorweave/session.h"
#include "tensorweave/status.h"

namespace tw {

inline constexpr char kSavedModelTagServe[] = "serve";
inline constexpr char kDefaultServingSignatureDefKey[] = "serving_default";

struct SavedModelBundle {
  std::unique_ptr<Session> session;
  tfproto::MetaGraphDef meta_graph;  // TensorFlow's message: signatures, tags, saver
};

// NotFound (TensorFlow's messages) for a directory without a SavedModel or without a
// MetaGraphDef of `tags`; DataLoss for corrupt files; Unimplemented as above; the errors of
// creating the session, restoring the variables and running the main op.
StatusOr<std::unique_ptr<SavedModelBundle>> LoadSavedModel(const SessionOptions& options,
                                                           const std::string& export_dir,
                                                           const std::vector<std::string>& tags);

}  // namespace tw

#endif  // TENSORWEAVE_SAVED_MODEL_H_
