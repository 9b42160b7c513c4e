#include "src/saved_model/saved_model_reader.h"

#include <sys/stat.h>

#include <set>

#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "src/checkpoint/checkpoint_file.h"

namespace tw::saved_model {
namespace {

// A saved_model.pb larger than this is refused before it is read (protobuf's own limit
// is 2 GiB).
constexpr uint64_t kMaxSavedModelBytes = uint64_t{1} << 30;

StatusOr<tfproto::SavedModel> ReadSavedModel(const std::string& export_dir) {
  const std::string binary = export_dir + "/saved_model.pb";
  const std::string text = export_dir + "/saved_model.pbtxt";
  tfproto::SavedModel model;
  auto bytes = checkpoint::ReadWholeFile(binary, kMaxSavedModelBytes);
  if (bytes.ok()) {
    if (!model.ParseFromString(*bytes)) {
      return errors::DataLoss("SavedModel file ", binary, " cannot be parsed");
    }
    return model;
  }
  if (!IsNotFound(bytes.status())) return bytes.status();
  bytes = checkpoint::ReadWholeFile(text, kMaxSavedModelBytes);
  if (IsNotFound(bytes.status())) {
    return errors::NotFound("SavedModel file does not exist at: ", export_dir,
                            "/{saved_model.pbtxt|saved_model.pb}");
  }
  TW_RETURN_IF_ERROR(bytes.status());
  // TensorFlow writes fields this reader does not declare: skip them, as the binary
  // parser keeps them as unknown fields.
  google::protobuf::TextFormat::Parser parser;
  parser.AllowUnknownField(true);
  parser.AllowUnknownExtension(true);
  if (!parser.ParseFromString(*bytes, &model)) {
    return errors::DataLoss("SavedModel file ", text, " cannot be parsed");
  }
  return model;
}

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

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::vector<LoadStep> LoadSteps(const tfproto::MetaGraphDef& meta, const std::string& export_dir) {
  std::vector<LoadStep> steps;
  const std::string variables = export_dir + "/variables/variables";
  const auto& saver = meta.saver_def();
  if (!saver.restore_op_name().empty() && FileExists(variables + ".index")) {
    steps.push_back({{{saver.filename_tensor_name(), variables}}, saver.restore_op_name()});
  }
  if (std::string init = InitOp(meta); !init.empty()) {
    LoadStep step{{}, std::move(init)};
    for (const tfproto::AssetFileDef& a : meta.asset_file_def()) {
      step.feeds.emplace_back(a.tensor_info().name(), export_dir + "/assets/" + a.filename());
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

StatusOr<tfproto::MetaGraphDef> ReadMetaGraph(const std::string& export_dir,
                                              const std::vector<std::string>& tags) {
  TW_ASSIGN_OR_RETURN(tfproto::SavedModel model, ReadSavedModel(export_dir));
  const std::set<std::string> wanted(tags.begin(), tags.end());
  std::vector<std::string> available;
  for (const tfproto::MetaGraphDef& meta : model.meta_graphs()) {
    const auto& have = meta.meta_info_def().tags();
    if (std::set<std::string>(have.begin(), have.end()) == wanted) return meta;
    available.push_back("[" + absl::StrJoin(have, ", ") + "]");
  }
  return errors::NotFound("MetaGraphDef associated with tags ", absl::StrJoin(tags, ", "),
                          " could not be found in SavedModel. To inspect available tag-sets "
                          "in the SavedModel, please use the SavedModel CLI: `saved_model_cli`"
                          "\navailable_tags: ",
                          absl::StrJoin(available, " "));
}

}  // namespace tw::saved_model
