#include "tensorweave/cluster_spec.h"

#include "src/base/json.h"
#include "src/base/strings.h"
#include "src/cluster/cluster_json.h"
#include "src/cluster/host_port.h"
#include "tensorweave/protobuf/cluster.pb.h"

namespace tw {

Status ClusterSpec::AddJob(std::string_view job, const std::vector<std::string>& addresses) {
  TaskMap tasks;
  for (size_t i = 0; i < addresses.size(); ++i) tasks[static_cast<int>(i)] = addresses[i];
  return AddJob(job, tasks);
}

Status ClusterSpec::AddJob(std::string_view job, const TaskMap& tasks) {
  if (!IsValidJobName(job)) {
    return errors::InvalidArgument("job name \"", job,
                                   "\" is invalid: it must match [A-Za-z][A-Za-z0-9_]*");
  }
  if (HasJob(job)) return errors::InvalidArgument("job \"", job, "\" is defined twice");
  for (const auto& [index, address] : tasks) {
    if (index < 0) {
      return errors::InvalidArgument("job \"", job, "\" has task index ", index,
                                     "; indices must be >= 0");
    }
    Status s = ParseHostPort(address).status();
    if (!s.ok())
      return errors::Annotate(s, internal::StrCatAny("job \"", job, "\" task ", index, ": "));
  }
  jobs_.emplace(std::string(job), tasks);
  return OkStatus();
}

StatusOr<ClusterSpec> ClusterSpec::FromJson(std::string_view json) {
  TW_ASSIGN_OR_RETURN(nlohmann::json value, ParseJsonStrict(json, "cluster JSON"));
  return ClusterSpecFromJsonValue(value, "cluster");
}

std::string ClusterSpec::ToJson(bool always_objects) const {
  return DumpJson(ClusterSpecToJsonValue(*this, always_objects));
}

StatusOr<ClusterSpec> ClusterSpec::FromProto(const proto::ClusterDef& def) {
  ClusterSpec spec;
  for (const proto::JobDef& job : def.job()) {
    TaskMap tasks(job.tasks().begin(), job.tasks().end());
    TW_RETURN_IF_ERROR(spec.AddJob(job.name(), tasks));
  }
  return spec;
}

void ClusterSpec::ToProto(proto::ClusterDef* def) const {
  def->Clear();
  for (const auto& [name, tasks] : jobs_) {
    proto::JobDef* job = def->add_job();
    job->set_name(name);
    for (const auto& [index, address] : tasks) (*job->mutable_tasks())[index] = address;
  }
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> names;
  names.reserve(jobs_.size());
  for (const auto& [name, tasks] : jobs_) names.push_back(name);
  return names;
}

bool ClusterSpec::HasJob(std::string_view job) const { return jobs_.find(job) != jobs_.end(); }

namespace {

Status NoSuchJob(std::string_view job) {
  return errors::NotFound("No such job in cluster: '", job, "'");
}

}  // namespace

StatusOr<int> ClusterSpec::num_tasks(std::string_view job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return NoSuchJob(job);
  return static_cast<int>(it->second.size());
}

int ClusterSpec::CountTasks(std::string_view job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

StatusOr<std::vector<int>> ClusterSpec::task_indices(std::string_view job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return NoSuchJob(job);
  std::vector<int> indices;
  indices.reserve(it->second.size());
  for (const auto& [index, address] : it->second) indices.push_back(index);
  return indices;
}

StatusOr<std::string> ClusterSpec::task_address(std::string_view job, int task) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return NoSuchJob(job);
  auto t = it->second.find(task);
  if (t == it->second.end()) {
    return errors::NotFound("No task with index ", task, " in job '", job, "'");
  }
  return t->second;
}

StatusOr<std::vector<std::string>> ClusterSpec::job_tasks(std::string_view job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return NoSuchJob(job);
  std::vector<std::string> out;
  if (it->second.empty()) return out;
  out.resize(static_cast<size_t>(it->second.rbegin()->first) + 1);
  for (const auto& [index, address] : it->second) out[index] = address;
  return out;
}

bool ClusterSpec::IsDense(std::string_view job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return false;
  return it->second.empty() ||
         it->second.rbegin()->first + 1 == static_cast<int>(it->second.size());
}

StatusOr<ClusterSpec> ClusterSpecFromJsonValue(const nlohmann::json& value, std::string_view what) {
  if (!value.is_object()) {
    return errors::InvalidArgument(what, " must be an object of job name to task addresses, got ",
                                   JsonTypeName(value));
  }
  ClusterSpec spec;
  for (const auto& [job, tasks_value] : value.items()) {
    ClusterSpec::TaskMap tasks;
    if (tasks_value.is_array()) {
      for (size_t i = 0; i < tasks_value.size(); ++i) {
        const auto& address = tasks_value[i];
        if (!address.is_string()) {
          return errors::InvalidArgument(what, ": job \"", job, "\" task ", i,
                                         ": the address must be a \"host:port\" string, got ",
                                         JsonTypeName(address));
        }
        tasks[static_cast<int>(i)] = address.get_ref<const std::string&>();
      }
    } else if (tasks_value.is_object()) {
      for (const auto& [key, address] : tasks_value.items()) {
        const std::optional<int> parsed = ParseNonNegativeInt(key);
        if (!parsed) {
          return errors::InvalidArgument(what, ": job \"", job, "\" has task key \"", key,
                                         "\"; sparse task keys must be integers >= 0");
        }
        const int index = *parsed;
        if (!address.is_string()) {
          return errors::InvalidArgument(what, ": job \"", job, "\" task ", index,
                                         ": the address must be a \"host:port\" string, got ",
                                         JsonTypeName(address));
        }
        if (!tasks.emplace(index, address.get_ref<const std::string&>()).second) {
          return errors::InvalidArgument(what, ": job \"", job, "\" defines task ", index,
                                         " twice");
        }
      }
    } else {
      return errors::InvalidArgument(what, ": the tasks for job \"", job,
                                     "\" must be a list or an object from task index to "
                                     "\"host:port\", got ",
                                     JsonTypeName(tasks_value));
    }
    Status s = spec.AddJob(job, tasks);
    if (!s.ok()) return errors::Annotate(s, internal::StrCatAny(what, ": "));
  }
  return spec;
}

nlohmann::json ClusterSpecToJsonValue(const ClusterSpec& spec, bool always_objects) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [job, tasks] : spec.job_map()) {
    if (!always_objects && spec.IsDense(job)) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& [index, address] : tasks) list.push_back(address);
      out[job] = std::move(list);
    } else {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& [index, address] : tasks) object[std::to_string(index)] = address;
      out[job] = std::move(object);
    }
  }
  return out;
}

}  // namespace tw
