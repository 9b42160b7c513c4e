#include "tools/launch/launch_plan.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "nlohmann/json.hpp"
#include "src/base/json.h"
#include "src/base/strings.h"
#include "src/cluster/cluster_json.h"
#include "src/cluster/host_port.h"

namespace tw::launch {
namespace {

// Rebuilds `cluster` with every address passed through `rewrite`, keeping dense jobs dense.
template <typename Rewrite>
StatusOr<ClusterSpec> RewriteAddresses(const ClusterSpec& cluster, Rewrite rewrite) {
  ClusterSpec out;
  for (const auto& [job, tasks] : cluster.job_map()) {
    ClusterSpec::TaskMap rewritten;
    for (const auto& [index, address] : tasks) {
      TW_ASSIGN_OR_RETURN(rewritten[index], rewrite(job, index, address));
    }
    TW_RETURN_IF_ERROR(out.AddJob(job, rewritten));
  }
  return out;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The "cluster" value of TFJob's TF_CONFIG, compact, jobs sorted (as Go writes map keys);
// sparse jobs keep their {"<index>": address} form.
std::string TfJobClusterJson(const ClusterSpec& cluster) {
  using Ordered = nlohmann::ordered_json;
  Ordered jobs = Ordered::object();
  for (const auto& [job, tasks] : cluster.job_map()) {
    if (cluster.IsDense(job)) {
      Ordered list = Ordered::array();
      for (const auto& [index, address] : tasks) list.push_back(address);
      jobs[job] = std::move(list);
    } else {
      Ordered object = Ordered::object();
      for (const auto& [index, address] : tasks) object[std::to_string(index)] = address;
      jobs[job] = std::move(object);
    }
  }
  return jobs.dump(-1, ' ', false, Ordered::error_handler_t::replace);
}

// TFJob's TF_CONFIG for `task` around the serialized cluster, keys in TFJob's order (its Go
// struct order): cluster, task, environment.
std::string TfJobTfConfigFor(std::string_view cluster_json, const TaskId& task) {
  const std::string type =
      nlohmann::json(task.job).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return internal::StrCatAny(R"({"cluster":)", cluster_json, R"(,"task":{"type":)", type,
                             R"(,"index":)", task.index, R"(},"environment":"cloud"})");
}

int TotalTasks(const ClusterSpec& cluster) {
  int total = 0;
  for (const auto& [job, tasks] : cluster.job_map()) total += static_cast<int>(tasks.size());
  return total;
}

}  // namespace

Status CheckLaunchTaskCount(int64_t tasks, std::string_view what) {
  if (tasks > kMaxLaunchTasks) {
    return errors::InvalidArgument(what, " has ", tasks, " tasks; tw launch starts at most ",
                                   kMaxLaunchTasks,
                                   " (each is a process on this machine, and every task's "
                                   "TF_CONFIG lists them all)");
  }
  return OkStatus();
}

std::vector<TaskPlan> PlanTasks(const ClusterSpec& cluster,
                                const std::vector<std::string>& job_order) {
  std::vector<std::string> jobs;
  for (const std::string& given : job_order) {
    const std::string job = ToLower(given);
    if (cluster.HasJob(job) && std::find(jobs.begin(), jobs.end(), job) == jobs.end()) {
      jobs.push_back(job);
    }
  }
  for (const std::string& job : cluster.jobs()) {
    if (std::find(jobs.begin(), jobs.end(), job) == jobs.end()) jobs.push_back(job);
  }
  // Every task's TF_CONFIG lists the whole cluster: serialized once, not once per task
  // (which made planning quadratic in JSON work, not only in the bytes TFJob's format
  // itself requires).
  const bool one_task = TotalTasks(cluster) <= 1;
  const std::string cluster_json = one_task ? "" : TfJobClusterJson(cluster);
  std::vector<TaskPlan> plan;
  for (const std::string& job : jobs) {
    for (const auto& [index, address] : cluster.job_map().find(job)->second) {
      TaskId id{job, index};
      std::optional<std::string> tf_config;
      if (!one_task) tf_config = TfJobTfConfigFor(cluster_json, id);
      plan.push_back({id, address, std::move(tf_config)});
    }
  }
  return plan;
}

StatusOr<ClusterSpec> MakeLocalCluster(const std::vector<JobCount>& counts,
                                       const std::vector<int>& ports) {
  size_t total = 0;
  for (const JobCount& c : counts) total += static_cast<size_t>(c.tasks);
  if (ports.size() != total) {
    return errors::InvalidArgument("the cluster has ", total, " tasks but ", ports.size(),
                                   " ports were given");
  }
  ClusterSpec spec;
  size_t next = 0;
  for (const JobCount& c : counts) {
    const std::string job = ToLower(c.job);
    if (spec.HasJob(job)) {
      return errors::InvalidArgument("jobs \"", job, "\" and \"", c.job, "\" differ only in case");
    }
    std::vector<std::string> addresses;
    for (int i = 0; i < c.tasks; ++i, ++next) {
      if (ports[next] < 1 || ports[next] > 65535) {
        return errors::InvalidArgument("port ", ports[next], " for ", c.job, ":", i,
                                       " is outside 1-65535");
      }
      addresses.push_back(JoinHostPort(kLaunchHost, ports[next]));
    }
    TW_RETURN_IF_ERROR(spec.AddJob(job, addresses));
  }
  return spec;
}

StatusOr<ClusterSpec> ParseLaunchClusterJson(std::string_view text, std::string_view what) {
  TW_ASSIGN_OR_RETURN(nlohmann::json value, ParseJsonStrict(text, what));
  // A whole TF_CONFIG has "task" or "environment", or a "cluster" object whose keys are job
  // names; a cluster object could itself have a job named "cluster", but then its value is a
  // list or an object of integer keys.
  bool is_tf_config = false;
  if (value.is_object()) {
    is_tf_config = value.contains("task") || value.contains("environment");
    if (auto it = value.find("cluster"); it != value.end() && it->is_object()) {
      for (const auto& [key, unused] : it->items()) {
        if (!ParseNonNegativeInt(key)) is_tf_config = true;
      }
    }
  }
  if (is_tf_config && !value.contains("cluster")) {
    return errors::InvalidArgument(what, " looks like a TF_CONFIG but has no \"cluster\"");
  }
  const std::string where = internal::StrCatAny(what, is_tf_config ? " \"cluster\"" : "");
  const nlohmann::json& cluster_value = is_tf_config ? value["cluster"] : value;
  TW_ASSIGN_OR_RETURN(ClusterSpec spec, ClusterSpecFromJsonValue(cluster_value, where));
  const int tasks = TotalTasks(spec);
  if (tasks == 0) return errors::InvalidArgument(where, " has no tasks to start");
  TW_RETURN_IF_ERROR(CheckLaunchTaskCount(tasks, where));
  // TFJob lower-cases replica types, so the task types its pods see are lower case.
  ClusterSpec lowered;
  for (const auto& [job, job_tasks] : spec.job_map()) {
    const std::string name = ToLower(job);
    if (lowered.HasJob(name)) {
      return errors::InvalidArgument(where, ": jobs \"", name, "\" and \"", job,
                                     "\" differ only in case");
    }
    TW_RETURN_IF_ERROR(lowered.AddJob(name, job_tasks));
  }
  return lowered;
}

int NumZeroPorts(const ClusterSpec& cluster) {
  int n = 0;
  for (const auto& [job, tasks] : cluster.job_map()) {
    for (const auto& [index, address] : tasks) {
      auto hp = ParseHostPort(address);
      if (hp.ok() && hp->port == 0) ++n;
    }
  }
  return n;
}

StatusOr<ClusterSpec> FillZeroPorts(const ClusterSpec& cluster, const std::vector<int>& ports) {
  const int needed = NumZeroPorts(cluster);
  if (static_cast<size_t>(needed) != ports.size()) {
    return errors::InvalidArgument("the cluster has ", needed, " addresses with port 0 but ",
                                   ports.size(), " ports were given");
  }
  size_t next = 0;
  return RewriteAddresses(
      cluster, [&](const std::string&, int, const std::string& address) -> StatusOr<std::string> {
        TW_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address));
        if (hp.port != 0) return address;
        return JoinHostPort(hp.host, ports[next++]);
      });
}

std::optional<std::string> TfJobTfConfig(const ClusterSpec& cluster, const TaskId& task) {
  if (TotalTasks(cluster) <= 1) return std::nullopt;
  return TfJobTfConfigFor(TfJobClusterJson(cluster), task);
}

std::vector<std::string> TaskEnvironment(const std::vector<std::string>& base,
                                         const std::optional<std::string>& tf_config, int threads) {
  std::vector<std::string> env;
  env.reserve(base.size() + 2);
  bool threads_given = false;
  for (const std::string& entry : base) {
    if (entry.rfind("TF_CONFIG=", 0) == 0) continue;
    threads_given = threads_given || entry.rfind("TW_NUM_THREADS=", 0) == 0;
    env.push_back(entry);
  }
  if (tf_config) env.push_back("TF_CONFIG=" + *tf_config);
  if (!threads_given) env.push_back("TW_NUM_THREADS=" + std::to_string(threads));
  return env;
}

int ThreadsPerTask(int cores, int tasks) { return std::max(1, cores / std::max(1, tasks)); }

StatusOr<std::vector<int>> PickFreeLoopbackPorts(int count) {
  std::vector<int> fds;
  std::vector<int> ports;
  Status status = OkStatus();
  for (int i = 0; i < count && status.ok(); ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      status = errors::Unavailable("cannot open a socket to pick a port: ", std::strerror(errno));
      break;
    }
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status =
          errors::Unavailable("cannot bind 127.0.0.1:0 to pick a port: ", std::strerror(errno));
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) close(fd);
  if (!status.ok()) return status;
  return ports;
}

StatusOr<std::string> FindProgram(const std::string& program, std::string_view path) {
  if (program.empty()) return errors::InvalidArgument("the program name is empty");
  if (program.find('/') != std::string::npos) {
    if (!IsExecutableFile(program)) {
      return errors::NotFound(program, " is not an executable file");
    }
    return program;
  }
  for (std::string_view dir : Split(path, ':')) {
    const std::string candidate =
        dir.empty() ? "./" + program
                    : internal::StrCatAny(dir, dir.back() == '/' ? "" : "/", program);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return errors::NotFound(program, ": command not found in PATH");
}

}  // namespace tw::launch
