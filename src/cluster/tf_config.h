// Parsing of the TF_CONFIG environment variable into its parts, before resolution.
#ifndef TENSORWEAVE_SRC_CLUSTER_TF_CONFIG_H_
#define TENSORWEAVE_SRC_CLUSTER_TF_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/cluster_spec.h"
#include "tensorweave/status.h"

namespace tw {

// What one TF_CONFIG value says; every field is optional.
struct TfConfig {
  std::optional<ClusterSpec> cluster;  // absent, null or {} leave it unset
  std::optional<std::string> task_type;
  std::optional<int> task_index;
  std::string environment;
  std::string rpc_layer;
  std::optional<std::string> session_master;
  std::optional<std::string> eval_session_master;
  std::vector<std::string> warnings;  // unknown keys and other oddities

  // True when the value gave neither a cluster nor a task (unset, "", "{}").
  bool empty() const { return !cluster && !task_type && !task_index; }
};

// Accepts every shape real producers emit: jobs as lists or sparse objects, task.index as a
// number or a decimal string, TFJob's environment "cloud", AI Platform's trial/cloud/job.
// InvalidArgument naming the field for wrong types and malformed JSON (with position).
StatusOr<TfConfig> ParseTfConfig(std::string_view text);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CLUSTER_TF_CONFIG_H_
