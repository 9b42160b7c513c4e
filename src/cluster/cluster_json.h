// ClusterSpec <-> nlohmann::json, shared by ClusterSpec::FromJson, TF_CONFIG and flags.
#ifndef TENSORWEAVE_SRC_CLUSTER_CLUSTER_JSON_H_
#define TENSORWEAVE_SRC_CLUSTER_CLUSTER_JSON_H_

#include <string_view>

#include "nlohmann/json.hpp"
#include "tensorweave/cluster_spec.h"

namespace tw {

// `value` is an object of job -> list of addresses, or job -> {"<index>": address}.
// `what` prefixes error messages ("TF_CONFIG cluster", "--cluster").
StatusOr<ClusterSpec> ClusterSpecFromJsonValue(const nlohmann::json& value, std::string_view what);

nlohmann::json ClusterSpecToJsonValue(const ClusterSpec& spec, bool always_objects);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CLUSTER_CLUSTER_JSON_H_
