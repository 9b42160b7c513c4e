// The "ps=1,worker=2" shorthand for a cluster's shape, used by `tw config`, `tw launch`
// and `tw k8s`.
#ifndef TENSORWEAVE_SRC_CLUSTER_JOB_COUNTS_H_
#define TENSORWEAVE_SRC_CLUSTER_JOB_COUNTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/cluster_spec.h"
#include "tensorweave/status.h"

namespace tw {

struct JobCount {
  std::string job;
  int tasks = 0;
  friend bool operator==(const JobCount&, const JobCount&) = default;
};

// Parses "files=1,reduce=1,map=2" keeping the order given. InvalidArgument naming the entry
// for an invalid job name, a count that is not an integer in 1-1000, or a repeated job.
StatusOr<std::vector<JobCount>> ParseJobCounts(std::string_view text);

// A cluster with the tasks on `host` at consecutive ports from `base_port`, in the order of
// `counts` (files:0 2222, reduce:0 2223, map:0 2224, ...). InvalidArgument when the ports run
// past 65535 or the host is not valid in an address.
StatusOr<ClusterSpec> MakeClusterOnHost(const std::vector<JobCount>& counts, std::string_view host,
                                        int base_port);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CLUSTER_JOB_COUNTS_H_
