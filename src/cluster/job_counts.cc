#include "src/cluster/job_counts.h"

#include <set>

#include "src/base/strings.h"
#include "src/cluster/host_port.h"

namespace tw {

constexpr int kMaxTasksPerJob = 1000;

StatusOr<std::vector<JobCount>> ParseJobCounts(std::string_view text) {
  std::vector<JobCount> counts;
  std::set<std::string> seen;
  if (StripWhitespace(text).empty()) {
    return errors::InvalidArgument(
        "the cluster shape is empty; write it as JOB=N,JOB=N, e.g. "
        "ps=1,worker=2");
  }
  for (std::string_view entry : Split(text, ',')) {
    entry = StripWhitespace(entry);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return errors::InvalidArgument("cluster shape entry \"", entry,
                                     "\" is not JOB=N (e.g. worker=2)");
    }
    const std::string job(StripWhitespace(entry.substr(0, eq)));
    const std::string_view n = StripWhitespace(entry.substr(eq + 1));
    if (!IsValidJobName(job)) {
      return errors::InvalidArgument("cluster shape entry \"", entry, "\": job name \"", job,
                                     "\" must match [A-Za-z][A-Za-z0-9_]*");
    }
    const std::optional<int> tasks = ParseNonNegativeInt(n);
    if (!tasks || *tasks < 1 || *tasks > kMaxTasksPerJob) {
      return errors::InvalidArgument("cluster shape entry \"", entry, "\": the task count \"", n,
                                     "\" must be an integer from 1 to ", kMaxTasksPerJob);
    }
    if (!seen.insert(job).second) {
      return errors::InvalidArgument("cluster shape names job \"", job, "\" twice");
    }
    counts.push_back({job, *tasks});
  }
  return counts;
}

StatusOr<ClusterSpec> MakeClusterOnHost(const std::vector<JobCount>& counts, std::string_view host,
                                        int base_port) {
  ClusterSpec spec;
  int port = base_port;
  const bool v6 = host.find(':') != std::string_view::npos;
  for (const JobCount& c : counts) {
    std::vector<std::string> addresses;
    for (int i = 0; i < c.tasks; ++i, ++port) {
      if (port < 1 || port > 65535) {
        return errors::InvalidArgument("port ", port, " for ", c.job, ":", i,
                                       " is outside 1-65535; choose a lower --base-port");
      }
      addresses.push_back(internal::StrCatAny(v6 ? "[" : "", host, v6 ? "]" : "", ":", port));
    }
    TW_RETURN_IF_ERROR(spec.AddJob(c.job, addresses));
  }
  return spec;
}

}  // namespace tw
