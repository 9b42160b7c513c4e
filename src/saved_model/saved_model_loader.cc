// LoadSavedModel (tensorweave/saved_model.h).
#include "src/saved_model/graph_import.h"
#include "src/saved_model/saved_model_reader.h"
#include "tensorweave/saved_model.h"

namespace tw {

StatusOr<std::unique_ptr<SavedModelBundle>> LoadSavedModel(const SessionOptions& options,
                                                           const std::string& export_dir,
                                                           const std::vector<std::string>& tags) {
  auto bundle = std::make_unique<SavedModelBundle>();
  TW_ASSIGN_OR_RETURN(bundle->meta_graph, saved_model::ReadMetaGraph(export_dir, tags));
  TW_ASSIGN_OR_RETURN(proto::GraphDef graph,
                      saved_model::ImportGraph(bundle->meta_graph.graph_def()));
  TW_ASSIGN_OR_RETURN(bundle->session, Session::Create(options));
  TW_RETURN_IF_ERROR(bundle->session->Extend(graph));
  for (const saved_model::LoadStep& step : saved_model::LoadSteps(bundle->meta_graph, export_dir)) {
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const auto& [name, value] : step.feeds) {
      feeds.emplace_back(name, Tensor::Scalar<std::string>(value));
    }
    std::vector<Tensor> none;
    TW_RETURN_IF_ERROR(bundle->session->Run(feeds, {}, {step.target}, &none));
  }
  return bundle;
}

}  // namespace tw
