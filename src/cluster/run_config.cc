#include "tensorweave/run_config.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/base/json.h"
#include "src/base/logging.h"
#include "src/base/strings.h"
#include "src/cluster/cluster_flags.h"
#include "src/cluster/cluster_json.h"
#include "src/cluster/host_port.h"
#include "src/cluster/tf_config.h"
#include "tensorweave/device_name.h"

namespace tw {

std::string_view ConfigSourceName(ConfigSource source) {
  switch (source) {
    case ConfigSource::kFlags:
      return "flags";
    case ConfigSource::kTfConfig:
      return "TF_CONFIG";
    case ConfigSource::kDefault:
      return "default";
  }
  return "default";
}

// Builds a RunConfig from parsed flags and TF_CONFIG; the rules are those of
// shared/reference/tf_config.md section 5, summarized in run_config.h.
class RunConfigResolver {
 public:
  static StatusOr<RunConfig> Resolve(ClusterFlags flags, TfConfig tf) {
    RunConfig c;
    c.warnings_ = std::move(tf.warnings);
    c.unused_args_ = std::move(flags.unused);
    c.environment_ = tf.environment;
    c.rpc_layer_ = tf.rpc_layer;
    c.source_ = flags.any()   ? ConfigSource::kFlags
                : !tf.empty() ? ConfigSource::kTfConfig
                              : ConfigSource::kDefault;

    std::optional<ClusterSpec> cluster = flags.cluster ? flags.cluster : tf.cluster;
    std::optional<std::string> type = flags.job_name ? flags.job_name : tf.task_type;
    std::optional<int> index = flags.task_index ? flags.task_index : tf.task_index;
    if (type) type = ToLower(*type);
    if (cluster && !cluster->empty()) {
      TW_ASSIGN_OR_RETURN(c.cluster_, LowerCaseJobs(*cluster));
      TW_RETURN_IF_ERROR(ResolveTask(type, index, &c));
    } else {
      TW_RETURN_IF_ERROR(ResolveLocal(type, index, &c));
    }
    TW_RETURN_IF_ERROR(Derive(tf, &c));
    return c;
  }

 private:
  // TFJob writes lower-case names; hand-written configs sometimes do not.
  static StatusOr<ClusterSpec> LowerCaseJobs(const ClusterSpec& in) {
    ClusterSpec out;
    for (const auto& [job, tasks] : in.job_map()) {
      const std::string lower = ToLower(job);
      if (out.HasJob(lower)) {
        return errors::InvalidArgument("the cluster has jobs that differ only in case (\"", job,
                                       "\" and \"", lower, "\"); job names are not case-sensitive");
      }
      TW_RETURN_IF_ERROR(out.AddJob(lower, tasks));
    }
    return out;
  }

  static Status ResolveLocal(const std::optional<std::string>& type,
                             const std::optional<int>& index, RunConfig* c) {
    if (type && *type != "worker" && *type != "evaluator") {
      return errors::InvalidArgument("task type \"", *type,
                                     "\" needs a cluster (TF_CONFIG \"cluster\", --cluster or "
                                     "--<job>_hosts); without one this is the local worker 0");
    }
    if (index && *index != 0) {
      return errors::InvalidArgument("task index ", *index,
                                     " needs a cluster; without one this is the local task 0");
    }
    c->local_ = true;
    c->task_type_ = type.value_or("worker");
    c->task_index_ = 0;
    TW_RETURN_IF_ERROR(c->cluster_.AddJob(c->task_type_, std::vector<std::string>{"localhost:0"}));
    return OkStatus();
  }

  static Status ResolveTask(std::optional<std::string> type, std::optional<int> index,
                            RunConfig* c) {
    const ClusterSpec& cluster = c->cluster_;
    const std::vector<std::string> jobs = cluster.jobs();
    if (!type) {
      if (jobs.size() != 1) {
        return errors::InvalidArgument(
            "Must specify an explicit job_name (--job_name or TF_CONFIG task.type): the cluster "
            "has jobs ",
            absl::StrJoin(jobs, ", "));
      }
      type = jobs[0];
    }
    if (!index) {
      if (cluster.CountTasks(*type) != 1) {
        return errors::InvalidArgument(
            "Must specify an explicit task_index (--task_index or TF_CONFIG task.index): job \"",
            *type, "\" has ", cluster.CountTasks(*type), " tasks");
      }
      index = cluster.job_map().find(*type)->second.begin()->first;
    }
    if (cluster.HasJob("chief") && cluster.HasJob("master")) {
      return errors::InvalidArgument(
          "the cluster has both a \"chief\" and a \"master\" job; use one (\"master\" is the "
          "legacy name of \"chief\")");
    }
    for (const char* job : {"chief", "master"}) {
      if (cluster.CountTasks(job) > 1) {
        return errors::InvalidArgument("job \"", job, "\" has ", cluster.CountTasks(job),
                                       " tasks; a cluster has exactly one chief");
      }
    }
    if (cluster.CountTasks("evaluator") > 1) {
      c->warnings_.push_back("the cluster has " + std::to_string(cluster.CountTasks("evaluator")) +
                             " evaluator tasks; only one is expected");
    }
    // An evaluator is not part of the training cluster, and producers differ on whether it
    // appears in "cluster" at all; both are fine.
    const bool evaluator_outside = *type == "evaluator" && !cluster.HasJob("evaluator");
    if (!evaluator_outside) {
      if (!cluster.HasJob(*type)) {
        return errors::InvalidArgument("Job \"", *type, "\" was not defined in cluster (jobs: ",
                                       absl::StrJoin(jobs, ", "), ")");
      }
      if (!cluster.task_address(*type, *index).ok()) {
        return errors::InvalidArgument("Task ", *index, " was not defined in job \"", *type,
                                       "\" (it has ", cluster.CountTasks(*type), " tasks)");
      }
    }
    c->task_type_ = *type;
    c->task_index_ = *index;
    return OkStatus();
  }

  static Status Derive(const TfConfig& tf, RunConfig* c) {
    const ClusterSpec& cluster = c->cluster_;
    const std::string& type = c->task_type_;
    c->chief_job_ = cluster.HasJob("chief")    ? "chief"
                    : cluster.HasJob("master") ? "master"
                    : cluster.HasJob("worker") ? "worker"
                                               : "";
    c->is_chief_ = type != "evaluator" && type == c->chief_job_ && c->task_index_ == 0;
    c->num_workers_ =
        cluster.CountTasks("chief") + cluster.CountTasks("master") + cluster.CountTasks("worker");
    c->num_ps_ = cluster.CountTasks("ps");

    auto own_address = cluster.task_address(type, c->task_index_);
    if (c->local_ || !own_address.ok()) {
      c->bind_address_ = "127.0.0.1:0";
    } else {
      TW_ASSIGN_OR_RETURN(HostPort own, ParseHostPort(*own_address));
      c->bind_address_ = (own.bracketed ? "[::]:" : "0.0.0.0:") + std::to_string(own.port);
    }

    c->session_master_ = tf.session_master.value_or("");
    const bool single_task = cluster.job_map().size() == 1 && cluster.CountTasks(type) == 1;
    if (type == "evaluator") {
      c->target_ = tf.eval_session_master.value_or("");
    } else if (tf.session_master) {
      c->target_ = *tf.session_master;
    } else if (c->local_ || single_task) {
      c->target_ = "";
    } else {
      c->target_ =
          (c->rpc_layer_.empty() ? std::string("grpc") : c->rpc_layer_) + "://" + *own_address;
    }

    auto present = [&](std::vector<std::string> jobs) {
      std::vector<std::string> out;
      for (const std::string& j : jobs) {
        if (cluster.HasJob(j)) out.push_back(DeviceName{.job = j}.ToString());
      }
      return out;
    };
    if (c->local_) {
      c->device_filters_.clear();
    } else if (type == "chief" || type == "master") {
      c->device_filters_ = present({"ps", type});
    } else if (type == "worker") {
      c->device_filters_ = present({"ps", "chief", "master"});
      c->device_filters_.push_back(DeviceName{.job = "worker", .task = c->task_index_}.ToString());
    } else if (type == "ps") {
      c->device_filters_ = present({"ps", "worker", "chief", "master"});
    }
    return OkStatus();
  }
};

StatusOr<RunConfig> RunConfig::Resolve(const std::vector<std::string>& args,
                                       const std::optional<std::string>& tf_config) {
  TW_ASSIGN_OR_RETURN(ClusterFlags flags, ParseClusterFlags(args));
  TW_ASSIGN_OR_RETURN(TfConfig tf, ParseTfConfig(tf_config.value_or("")));
  return RunConfigResolver::Resolve(std::move(flags), std::move(tf));
}

RuntimeSettings RuntimeSettings::FromEnvironment(
    const std::function<const char*(const char*)>& getenv, std::vector<std::string>* warnings) {
  auto get = [&](const char* name) { return getenv ? getenv(name) : std::getenv(name); };
  auto warn = [&](const char* name, const char* value, const std::string& what) {
    if (warnings != nullptr) {
      warnings->push_back(internal::StrCatAny(name, "=\"", value, "\" is not ", what, "; ignored"));
    }
  };
  RuntimeSettings settings;
  if (const char* v = get("TW_NUM_THREADS"); v != nullptr) {
    // The range CpuDevice accepts (kMaxComputeThreads, src/runtime/cpu_device.h, a layer
    // above this one).
    constexpr int kMaxThreads = 1024;
    int threads = 0;
    if (absl::SimpleAtoi(v, &threads) && threads > 0 && threads <= kMaxThreads) {
      settings.num_threads = threads;
    } else {
      warn("TW_NUM_THREADS", v, "a number from 1 to 1024 (using one thread per core)");
    }
  }
  if (const char* v = get("TW_SHARED_MEMORY"); v != nullptr && std::strcmp(v, "0") == 0) {
    settings.shared_memory = false;
  }
  if (const char* v = get("TW_CHUNK_SOCKETS"); v != nullptr && std::strcmp(v, "0") == 0) {
    settings.chunk_sockets = false;
  }
  if (const char* v = get("TW_BUFFER_POOL_MB"); v != nullptr) {
    int64_t mb = 0;
    if (absl::SimpleAtoi(v, &mb) && mb >= 0) {
      settings.buffer_pool_mb = mb;
    } else {
      warn("TW_BUFFER_POOL_MB", v, "a number of MiB");
    }
  }
  if (const char* v = get("TW_METRICS_PORT"); v != nullptr) {
    int port = 0;
    if (absl::SimpleAtoi(v, &port) && port >= 0 && port <= 65535) {
      settings.metrics_port = port;
    } else {
      warn("TW_METRICS_PORT", v, "a port from 0 to 65535 (serving no metrics)");
    }
  }
  if (const char* v = get("TW_RESTART_COUNT"); v != nullptr) {
    int count = 0;
    if (absl::SimpleAtoi(v, &count) && count >= 0) {
      settings.restart_count = count;
    } else {
      warn("TW_RESTART_COUNT", v, "a number of restarts (taking this start for a first one)");
    }
  }
  if (const char* v = get("TW_ALLOWED_DIRECTORIES"); v != nullptr) {
    for (absl::string_view dir : absl::StrSplit(v, ':', absl::SkipEmpty())) {
      settings.allowed_directories.emplace_back(dir);
    }
  }
  return settings;
}

StatusOr<RunConfig> RunConfig::ResolveFromEnvironment(const std::vector<std::string>& args) {
  std::optional<std::string> tf_config;
  if (const char* env = std::getenv("TF_CONFIG"); env != nullptr) tf_config = env;
  return Resolve(args, tf_config);
}

StatusOr<RunConfig> RunConfig::FromEnvironment(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  TW_ASSIGN_OR_RETURN(RunConfig config, ResolveFromEnvironment(args));
  config.runtime_settings_ = RuntimeSettings::FromEnvironment(nullptr, &config.warnings_);
  for (const std::string& w : config.warnings()) Log().warn("{}", w);
  Log().info("{}", config.Summary());
  return config;
}

int RunConfig::global_id_in_cluster() const {
  if (local_) return 0;
  if (task_type_ == "evaluator") return -1;
  std::vector<std::string> order;
  if (!chief_job_.empty()) order.push_back(chief_job_);
  for (const auto& [job, tasks] : cluster_.job_map()) {
    if (job != chief_job_ && job != "ps") order.push_back(job);
  }
  if (cluster_.HasJob("ps")) order.push_back("ps");
  int next = 0;
  for (const std::string& job : order) {
    if (job == task_type_) return next + task_index_;
    next += cluster_.CountTasks(job);
  }
  return -1;
}

std::string RunConfig::ToJson(int indent) const {
  nlohmann::json out = nlohmann::json::object();
  out["source"] = std::string(ConfigSourceName(source_));
  out["cluster"] = ClusterSpecToJsonValue(cluster_, /*always_objects=*/true);
  out["task"] = {{"type", task_type_}, {"index", task_index_}};
  out["is_chief"] = is_chief_;
  out["chief_job"] = chief_job_;
  out["num_workers"] = num_workers_;
  out["num_ps"] = num_ps_;
  out["global_id_in_cluster"] = global_id_in_cluster();
  out["target"] = target_;
  out["session_master"] = session_master_;
  out["bind_address"] = bind_address_;
  out["device_filters"] = device_filters_;
  out["environment"] = environment_;
  out["rpc_layer"] = rpc_layer_;
  return DumpJson(out, indent);
}

std::string RunConfig::Summary(std::string_view bind) const {
  return internal::StrCatAny(task_type_, ":", task_index_, " of cluster ", cluster_.ToJson(),
                             " (from ", ConfigSourceName(source_),
                             "), chief=", is_chief_ ? "true" : "false", ", target=\"", target_,
                             "\", bind=", bind.empty() ? std::string_view(bind_address_) : bind);
}

}  // namespace tw
