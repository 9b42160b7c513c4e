// The command-line flags that describe a cluster and this task's place in it.
#ifndef TENSORWEAVE_SRC_CLUSTER_CLUSTER_FLAGS_H_
#define TENSORWEAVE_SRC_CLUSTER_CLUSTER_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "tensorweave/cluster_spec.h"
#include "tensorweave/status.h"

namespace tw {

struct ClusterFlags {
  std::optional<ClusterSpec> cluster;
  std::optional<std::string> job_name;
  std::optional<int> task_index;
  std::vector<std::string> unused;  // arguments that are not cluster flags, in order

  bool any() const { return cluster || job_name || task_index; }
};

// Picks --cluster, --cluster_spec, --<job>_hosts, --job_name, --task_index and --task_id
// out of `args` (as --flag=value or --flag value); everything else, and everything after
// "--", goes to `unused`. An empty --<job>_hosts= defines no job. InvalidArgument naming
// the flag for a missing or malformed value, a flag given twice, or two flags that both
// define the cluster.
StatusOr<ClusterFlags> ParseClusterFlags(const std::vector<std::string>& args);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CLUSTER_CLUSTER_FLAGS_H_
