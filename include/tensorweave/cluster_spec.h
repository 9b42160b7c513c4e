// ClusterSpec: the jobs of a cluster and the "host:port" address of each of their tasks.
//
// A job's tasks are indexed from 0; indices may be sparse (TFJob's dynamic-worker form).
// Every job name and address is validated on the way in, so a ClusterSpec in hand is
// well formed. A value type; thread-compatible.
#ifndef TENSORWEAVE_CLUSTER_SPEC_H_
#define TENSORWEAVE_CLUSTER_SPEC_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/status.h"

namespace tw {
namespace proto {
class ClusterDef;
}  // namespace proto

class ClusterSpec {
 public:
  using TaskMap = std::map<int, std::string>;  // task index -> "host:port"

  ClusterSpec() = default;

  // Adds a dense job: task i is addresses[i]. An empty list makes a job with no tasks.
  // InvalidArgument naming the job, the task and the text when the job name does not match
  // [A-Za-z][A-Za-z0-9_]*, the job already exists, or an address is not host:port.
  Status AddJob(std::string_view job, const std::vector<std::string>& addresses);
  // Adds a sparse job; same errors, and indices must be >= 0.
  Status AddJob(std::string_view job, const TaskMap& tasks);

  // From JSON: {"ps": ["h:1", "h:2"], "worker": {"0": "h:3"}} (lists or sparse objects).
  static StatusOr<ClusterSpec> FromJson(std::string_view json);
  // To JSON: dense jobs as lists and sparse ones as objects, unless `always_objects`, which
  // writes every job as {"<index>": "host:port"}.
  std::string ToJson(bool always_objects = false) const;

  static StatusOr<ClusterSpec> FromProto(const proto::ClusterDef& def);
  void ToProto(proto::ClusterDef* def) const;

  bool empty() const { return jobs_.empty(); }
  // Job names in sorted order.
  std::vector<std::string> jobs() const;
  bool HasJob(std::string_view job) const;

  // Lookups of one job, as TensorFlow's ClusterSpec does them: a job the cluster does not
  // have is an error, NotFound `No such job in cluster: 'x'` (TF's words), never an empty answer
  // that a typo in a job name would hide. Number of tasks defined in `job`.
  StatusOr<int> num_tasks(std::string_view job) const;
  // Indices of the tasks of `job`, ascending.
  StatusOr<std::vector<int>> task_indices(std::string_view job) const;
  // NotFound also when the job has no task `task`: `No task with index 3 in job 'ps'`.
  StatusOr<std::string> task_address(std::string_view job, int task) const;
  // Addresses of tasks 0..max index, with "" for indices a sparse job leaves out.
  StatusOr<std::vector<std::string>> job_tasks(std::string_view job) const;

  // For jobs a cluster may leave out (chief, evaluator, ps): the number of tasks of `job`,
  // 0 when there is no such job. Callers that need the job use num_tasks.
  int CountTasks(std::string_view job) const;
  // True when the job exists and its indices are exactly 0..n-1.
  bool IsDense(std::string_view job) const;
  // The whole map, job -> tasks.
  const std::map<std::string, TaskMap, std::less<>>& job_map() const { return jobs_; }

  friend bool operator==(const ClusterSpec& a, const ClusterSpec& b) { return a.jobs_ == b.jobs_; }
  friend bool operator!=(const ClusterSpec& a, const ClusterSpec& b) { return !(a == b); }

 private:
  std::map<std::string, TaskMap, std::less<>> jobs_;
};

}  // namespace tw

#endif  // TENSORWEAVE_CLUSTER_SPEC_H_
