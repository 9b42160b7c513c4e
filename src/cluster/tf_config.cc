#include "src/cluster/tf_config.h"

#include <set>

#include "src/base/json.h"
#include "src/base/strings.h"
#include "src/cluster/cluster_json.h"

namespace tw {
namespace {

using Json = nlohmann::json;

// Keys real producers write; anything else is reported as a warning, never an error.
const std::set<std::string>& KnownTopLevelKeys() {
  static const auto* keys = new std::set<std::string>{
      "cluster",   "task",    "environment", "rpc_layer", "session_master", "eval_session_master",
      "model_dir", "service", "job"};
  return *keys;
}

const std::set<std::string>& KnownTaskKeys() {
  static const auto* keys = new std::set<std::string>{"type", "index", "trial", "cloud"};
  return *keys;
}

// Reads an optional string field; null counts as absent.
Status OptionalString(const Json& object, const char* key, std::optional<std::string>* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return OkStatus();
  if (!it->is_string()) {
    return errors::InvalidArgument("TF_CONFIG \"", key, "\" must be a string, got ",
                                   JsonTypeName(*it));
  }
  *out = it->get_ref<const std::string&>();
  return OkStatus();
}

StatusOr<int> ParseIndex(const Json& value) {
  constexpr std::string_view kWhat = "TF_CONFIG task.index must be an integer >= 0";
  if (value.is_number_unsigned()) {
    const auto v = value.get<Json::number_unsigned_t>();
    if (v > static_cast<Json::number_unsigned_t>(std::numeric_limits<int>::max())) {
      return errors::InvalidArgument(kWhat, ", got ", v, ", which is too large");
    }
    return static_cast<int>(v);
  }
  if (value.is_number_integer()) {
    return errors::InvalidArgument(kWhat, ", got ", value.get<Json::number_integer_t>());
  }
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    std::optional<int> v = ParseNonNegativeInt(StripWhitespace(s));
    if (!v) return errors::InvalidArgument(kWhat, ", got \"", s, "\"");
    return *v;
  }
  return errors::InvalidArgument(kWhat, ", got ", JsonTypeName(value), " ", DumpJson(value));
}

Status ParseTask(const Json& task, TfConfig* config) {
  if (!task.is_object()) {
    return errors::InvalidArgument("TF_CONFIG \"task\" must be an object with \"type\" and ",
                                   "\"index\", got ", JsonTypeName(task));
  }
  for (const auto& [key, value] : task.items()) {
    if (!KnownTaskKeys().count(key)) {
      config->warnings.push_back("TF_CONFIG task has unknown key \"" + key + "\"; ignored");
    }
  }
  if (auto it = task.find("type"); it != task.end() && !it->is_null()) {
    if (!it->is_string()) {
      return errors::InvalidArgument("TF_CONFIG task.type must be a string, got ",
                                     JsonTypeName(*it), " ", DumpJson(*it));
    }
    config->task_type = it->get_ref<const std::string&>();
    if (config->task_type->empty()) {
      return errors::InvalidArgument("TF_CONFIG task.type is empty");
    }
  }
  if (auto it = task.find("index"); it != task.end() && !it->is_null()) {
    TW_ASSIGN_OR_RETURN(config->task_index, ParseIndex(*it));
  }
  return OkStatus();
}

}  // namespace

StatusOr<TfConfig> ParseTfConfig(std::string_view text) {
  TfConfig config;
  if (StripWhitespace(text).empty()) return config;
  TW_ASSIGN_OR_RETURN(Json root, ParseJsonStrict(text, "TF_CONFIG"));
  if (!root.is_object()) {
    return errors::InvalidArgument("TF_CONFIG must be a JSON object, got ", JsonTypeName(root));
  }
  for (const auto& [key, value] : root.items()) {
    if (key == "sparseCluster") {
      config.warnings.push_back(
          "TF_CONFIG has \"sparseCluster\" (written by TFJob's dynamic-worker mode before it "
          "was renamed \"cluster\"); it is ignored");
    } else if (!KnownTopLevelKeys().count(key)) {
      config.warnings.push_back("TF_CONFIG has unknown key \"" + key + "\"; ignored");
    }
  }
  if (auto it = root.find("cluster"); it != root.end() && !it->is_null()) {
    TW_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpecFromJsonValue(*it, "TF_CONFIG cluster"));
    if (!cluster.empty()) config.cluster = std::move(cluster);
  }
  if (auto it = root.find("task"); it != root.end() && !it->is_null()) {
    TW_RETURN_IF_ERROR(ParseTask(*it, &config));
  }
  std::optional<std::string> environment, rpc_layer;
  TW_RETURN_IF_ERROR(OptionalString(root, "environment", &environment));
  TW_RETURN_IF_ERROR(OptionalString(root, "rpc_layer", &rpc_layer));
  TW_RETURN_IF_ERROR(OptionalString(root, "session_master", &config.session_master));
  TW_RETURN_IF_ERROR(OptionalString(root, "eval_session_master", &config.eval_session_master));
  config.environment = environment.value_or("");
  config.rpc_layer = rpc_layer.value_or("");
  return config;
}

}  // namespace tw
