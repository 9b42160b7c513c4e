// What `tw launch` starts: the cluster on loopback, and for each task the TF_CONFIG and
// environment that Kubeflow's TFJob would give its pod. Everything here but the port and
// program look-ups is pure, so the TF_CONFIG text is unit-tested byte for byte.
#ifndef TENSORWEAVE_TOOLS_LAUNCH_LAUNCH_PLAN_H_
#define TENSORWEAVE_TOOLS_LAUNCH_LAUNCH_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/cluster/job_counts.h"
#include "tensorweave/cluster_spec.h"
#include "tensorweave/status.h"
#include "tools/launch/launch_policy.h"

namespace tw::launch {

// The host of every address the launcher makes, as `tw config` writes it.
inline constexpr std::string_view kLaunchHost = "localhost";

// The most tasks one launch starts. Each is a process on this machine, and each task's
// TF_CONFIG lists every task, so the environment the launcher builds grows with the square
// of the count: 1000 tasks make 1000 TF_CONFIGs of about 20 KB each (an environment entry
// may hold at most 128 KiB on Linux).
inline constexpr int kMaxLaunchTasks = 1000;

// InvalidArgument "<what> has <tasks> tasks; tw launch starts at most 1000 (...)" above
// kMaxLaunchTasks.
Status CheckLaunchTaskCount(int64_t tasks, std::string_view what);

// One task to start.
struct TaskPlan {
  TaskId id;
  std::string address;                   // "localhost:PORT"
  std::optional<std::string> tf_config;  // nullopt: TF_CONFIG is removed, not set
};

// The tasks of `cluster` in launch order: the jobs in `job_order` first (the order of the
// --cluster flag, compared lower-cased), then the remaining jobs sorted; tasks by index.
std::vector<TaskPlan> PlanTasks(const ClusterSpec& cluster,
                                const std::vector<std::string>& job_order = {});

// The cluster of `counts` with task i (in the order of `counts`) at localhost:ports[i]. Job
// names are lower-cased, as TFJob does with replica types. InvalidArgument when `ports` has
// the wrong size, a port is outside 1-65535, or two jobs differ only in case.
StatusOr<ClusterSpec> MakeLocalCluster(const std::vector<JobCount>& counts,
                                       const std::vector<int>& ports);

// A cluster read from a --cluster-json file: either a cluster object ({"ps": ["h:p"], ...},
// jobs as lists or sparse objects) or a whole TF_CONFIG whose "cluster" is used.
// Job names are lower-cased. InvalidArgument naming `what` (the file) for bad JSON, a bad
// cluster, one without tasks or one with more than kMaxLaunchTasks.
StatusOr<ClusterSpec> ParseLaunchClusterJson(std::string_view text, std::string_view what);

// Number of addresses with port 0 in `cluster` (each gets a free port).
int NumZeroPorts(const ClusterSpec& cluster);
// `cluster` with the port-0 addresses, in job then index order, given ports[0], ports[1]...
// (the host is kept). InvalidArgument when `ports` has the wrong size.
StatusOr<ClusterSpec> FillZeroPorts(const ClusterSpec& cluster, const std::vector<int>& ports);

// TF_CONFIG exactly as TFJob (release-1.9, dense jobs) sets it for `task`, compact, keys in
// TFJob's order: {"cluster":{<jobs sorted>},"task":{"type":"worker","index":1},
// "environment":"cloud"}. Sparse jobs keep their {"<index>": address} form. nullopt when
// the cluster has exactly one task: TFJob gives a one-replica job no TF_CONFIG at all
// (kubeflow/trainer#1078, PR #1080), and neither does the launcher.
std::optional<std::string> TfJobTfConfig(const ClusterSpec& cluster, const TaskId& task);

// `base` ("NAME=value" entries, e.g. from environ) with every TF_CONFIG removed and
// `tf_config` set when it has a value; and TW_NUM_THREADS=`threads` unless `base` sets it.
// Tasks of one launch share the machine: a task that takes a thread per core competes with
// the others for every core, and hands work between threads for no gain (the same reason
// launchers of several processes per machine set OMP_NUM_THREADS).
std::vector<std::string> TaskEnvironment(const std::vector<std::string>& base,
                                         const std::optional<std::string>& tf_config, int threads);

// Compute threads for each of `tasks` tasks sharing a machine of `cores` cores: its share,
// at least 1.
int ThreadsPerTask(int cores, int tasks);

// `count` distinct TCP ports on 127.0.0.1 that are free now: each is bound to port 0 and read
// back, all sockets held until every port is chosen (so no two are alike), then released
// for the tasks to bind. A port can be taken by another process between this call and the
// task's bind; the task then fails to start (and --restart retries it with the same port).
// Unavailable when no socket can be bound.
StatusOr<std::vector<int>> PickFreeLoopbackPorts(int count);

// The executable `program` names: a path when it contains '/', else the first executable
// regular file of that name in the ':'-separated `path` (an empty entry means the current
// directory). NotFound naming the program otherwise.
StatusOr<std::string> FindProgram(const std::string& program, std::string_view path);

}  // namespace tw::launch

#endif  // TENSORWEAVE_TOOLS_LAUNCH_LAUNCH_PLAN_H_
