// LoadSavedModel (tensorweave/saved_model.h).
#include <sys/stat.h>

#include "src/saved_model/graph_import.h"
#include "src/saved_model/saved_model_reader.h"
#include "tensorweave/saved_model.h"

namespace tw {
namespace {

// The node run after the variables are restored: the main op, else the legacy init op.
std::string InitOp(const tfproto::MetaGraphDef& meta) {
  for (const char* key : {"saved_model_main_op", "legacy_init_op"}) {
    auto it = meta.collection_def().find(key);
    if (it != meta.collection_def().end() && it->second.node_list().value_size() > 0) {
      return it->second.node_list().value(0);
    }
  }
  return "";
}

// Each asset's tensor fed its file's place under <export_dir>/assets/, as TensorFlow's
// loader feeds them to the restore and main ops.
std::vector<std::pair<std::string, Tensor>> AssetFeeds(const tfproto::MetaGraphDef& meta,
                                                       const std::string& export_dir) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const tfproto::AssetFileDef& a : meta.asset_file_def()) {
    feeds.emplace_back(a.tensor_info().name(),
                       Tensor::Scalar<std::string>(export_dir + "/assets/" + a.filename()));
  }
  return feeds;
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

StatusOr<std::unique_ptr<SavedModelBundle>> LoadSavedModel(const SessionOptions& options,
                                                           const std::string& export_dir,
                                                           const std::vector<std::string>& tags) {
  auto bundle = std::make_unique<SavedModelBundle>();
  TW_ASSIGN_OR_RETURN(bundle->meta_graph, saved_model::ReadMetaGraph(export_dir, tags));
  TW_ASSIGN_OR_RETURN(proto::GraphDef graph,
                      saved_model::ImportGraph(bundle->meta_graph.graph_def()));
  TW_ASSIGN_OR_RETURN(bundle->session, Session::Create(options));
  TW_RETURN_IF_ERROR(bundle->session->Extend(graph));
  const std::string variables = export_dir + "/variables/variables";
  const auto& saver = bundle->meta_graph.saver_def();
  if (!saver.restore_op_name().empty() && FileExists(variables + ".index")) {
    std::vector<Tensor> none;
    TW_RETURN_IF_ERROR(bundle->session->Run(
        {{saver.filename_tensor_name(), Tensor::Scalar<std::string>(variables)}}, {},
        {saver.restore_op_name()}, &none));
  }
  if (const std::string init = InitOp(bundle->meta_graph); !init.empty()) {
    std::vector<Tensor> none;
    TW_RETURN_IF_ERROR(
        bundle->session->Run(AssetFeeds(bundle->meta_graph, export_dir), {}, {init}, &none));
  }
  return bundle;
}

}  // namespace tw
