// RunConfig: this process's place in its cluster, resolved the way real launchers hand it
// over (Kubeflow TFJob, Vertex AI, SageMaker, hand-written flags).
//
// Precedence, per value: command-line flags, then the TF_CONFIG environment variable, then
// the single-task local default. Flags: --cluster='<json>', --<job>_hosts=a:1,b:2 for any
// job name (--ps_hosts, --worker_hosts, ...), --cluster_spec='ps|a:1;a:2,worker|b:1' (the
// TensorFlow std server form), --job_name, --task_index (or --task_id). Flags are accepted
// as --flag=value or --flag value. Job names and the task type are lower-cased.
//
// A value type; thread-compatible.
#ifndef TENSORWEAVE_RUN_CONFIG_H_
#define TENSORWEAVE_RUN_CONFIG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/cluster_spec.h"
#include "tensorweave/status.h"

namespace tw {

enum class ConfigSource { kFlags, kTfConfig, kDefault };

// Tuning of this process's runtime that its environment gives. The library reads no
// environment variable itself: the `tw` tool and RunConfig read these and the program puts
// them in ServerOptions (and SessionOptions::num_threads), each field of the same name.
struct RuntimeSettings {
  // TW_NUM_THREADS: compute threads of the task's device. `tw launch` sets it to each
  // task's share of the machine's cores, since its tasks share the machine. 0 when unset or
  // not a positive number (the option's default, one per core).
  int num_threads = 0;
  // TW_SHARED_MEMORY: "0" turns same-host transfers through shared memory off (as if the
  // tasks were on different hosts); anything else, or unset, leaves them on.
  bool shared_memory = true;
  // TW_CHUNK_SOCKETS: "0" keeps large tensors' chunks in gRPC calls instead of the chunk
  // sockets beside them (ServerOptions::chunk_sockets); anything else, or unset, leaves
  // them on.
  bool chunk_sockets = true;
  // TW_BUFFER_POOL_MB: MiB of freed tensor memory the process keeps for reuse (0 disables
  // the cache). -1 when unset or not a non-negative number (the option's default: leave
  // the process's pool as it is, 1 GiB).
  int64_t buffer_pool_mb = -1;
  // TW_ALLOWED_DIRECTORIES: the directories graphs may read and write files in
  // (ServerOptions::allowed_directories), separated by ':' (empty entries skipped). For
  // programs that cannot pass them, such as a TF 1.x program's
  // `tf.train.Server(cluster, job_name=..., task_index=...)`: the Python front-end's Server
  // and `tw server` use them when given none. Empty when unset.
  std::vector<std::string> allowed_directories;
  // TW_METRICS_PORT: the port of the task's metrics endpoint (ServerOptions::metrics_port;
  // `tw launch` sets it for every task), 0 for any free port. -1 when unset or not a port
  // (no endpoint).
  int metrics_port = -1;
  // TW_RESTART_COUNT: how many times this task has been restarted (`tw launch` sets it for
  // every task: 0 at the first start, N at the Nth restart; docs/launch.md, "A restarted
  // task"). A restarted task's peers were up before it died, so it may give up on peers
  // that stay unreachable much sooner than a task that is starting with its cluster.
  // 0 when unset or not a non-negative number (Kubernetes says nothing: a recreated pod
  // starts as a first one).
  int restart_count = 0;

  // Reads the variables through `getenv` (the process's environment by default).
  // A TW_NUM_THREADS, TW_BUFFER_POOL_MB, TW_METRICS_PORT or TW_RESTART_COUNT that does not
  // parse is ignored and adds a line to `warnings` (when given) naming the variable and its
  // value.
  static RuntimeSettings FromEnvironment(
      const std::function<const char*(const char*)>& getenv = nullptr,
      std::vector<std::string>* warnings = nullptr);

  friend bool operator==(const RuntimeSettings&, const RuntimeSettings&) = default;
};

// "flags", "TF_CONFIG" or "default".
std::string_view ConfigSourceName(ConfigSource source);

class RunConfig {
 public:
  // Resolves from argv (argv[0] is the program and is skipped) and the TF_CONFIG
  // environment variable, reads runtime_settings() from TW_NUM_THREADS, TW_SHARED_MEMORY
  // and TW_BUFFER_POOL_MB, and logs one line with the result and one per warning.
  // Arguments that are not cluster flags are left for the program (see unused_args()).
  static StatusOr<RunConfig> FromEnvironment(int argc, const char* const* argv);

  // The same without touching the process: `args` excludes the program name, `tf_config`
  // is TF_CONFIG's value (nullopt when unset). Unset, empty, blank and "{}" mean local.
  // runtime_settings() are the defaults.
  // InvalidArgument, naming the input and the field, for: malformed JSON (with its
  // position), a job or address that does not parse, both chief and master jobs, more than
  // one chief or master task, a task type or index not in the cluster, a non-integer index,
  // a job or index that cannot be inferred.
  // Resolve with TF_CONFIG read from the process's environment: the one place that reads
  // the variable (the tools, the Python layer and FromEnvironment all come here).
  static StatusOr<RunConfig> ResolveFromEnvironment(const std::vector<std::string>& args);
  static StatusOr<RunConfig> Resolve(const std::vector<std::string>& args,
                                     const std::optional<std::string>& tf_config);

  ConfigSource source() const { return source_; }
  // The cluster; for the local default, {"worker": ["localhost:0"]}.
  const ClusterSpec& cluster() const { return cluster_; }
  const std::string& task_type() const { return task_type_; }
  int task_index() const { return task_index_; }
  // True when no cluster was given: one task, no peers.
  bool is_local() const { return local_; }

  // chief:0, else master:0 (the legacy name), else worker:0 when neither job exists.
  // Never an evaluator. True for the local default.
  bool is_chief() const { return is_chief_; }
  // "chief", "master", "worker", or "" when the cluster has none of them.
  const std::string& chief_job() const { return chief_job_; }
  // Tasks of chief, master and worker (1 for the local default).
  int num_workers() const { return num_workers_; }
  int num_ps() const { return num_ps_; }
  // This task's number in the whole cluster, as TF's RunConfig.global_id_in_cluster: the
  // chief job's tasks first, then the other jobs' by name, ps last, each task its index
  // past the tasks of the jobs before; -1 for an evaluator (TF: None). 0 when local.
  int global_id_in_cluster() const;

  // The session target: TF_CONFIG session_master when given (eval_session_master for an
  // evaluator); "" for a single local task; otherwise "<rpc_layer or grpc>://<own address>".
  const std::string& target() const { return target_; }
  // TF_CONFIG's session_master as given ("" when absent), whatever this task's type.
  const std::string& session_master() const { return session_master_; }
  // Where this task's server listens: 0.0.0.0:<own port> ([::]:<port> for a bracketed IPv6
  // address), so the task's own host name never has to resolve; 127.0.0.1:0 when local.
  const std::string& bind_address() const { return bind_address_; }
  // The tasks this task's sessions talk to (TensorFlow Estimator's defaults): a worker sees
  // the ps tasks, the chief and itself; the chief the ps and itself; a ps the training jobs;
  // an empty list means every task.
  const std::vector<std::string>& device_filters() const { return device_filters_; }

  // What the environment says about this process's runtime (see RuntimeSettings); copy
  // into ServerOptions: `.num_threads = config->runtime_settings().num_threads`, ...
  const RuntimeSettings& runtime_settings() const { return runtime_settings_; }

  const std::string& rpc_layer() const { return rpc_layer_; }
  const std::string& environment() const { return environment_; }
  // Things worth telling the user that are not errors (unknown TF_CONFIG keys, ...).
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Arguments that were not cluster flags, in order.
  const std::vector<std::string>& unused_args() const { return unused_args_; }

  // One JSON object: source, cluster (every job as {"<index>": "host:port"}), task {type,
  // index}, is_chief, chief_job, num_workers, num_ps, global_id_in_cluster, target, bind_address,
  // device_filters, environment, rpc_layer.
  std::string ToJson(int indent = -1) const;
  // One line for logs: "worker:1 of cluster {...} (from TF_CONFIG), chief=false, ...,
  // bind=<address>". `bind` replaces bind_address() there when not empty: a program that
  // listens elsewhere (say `tw server --bind-host`) logs what it really bound.
  std::string Summary(std::string_view bind = {}) const;

 private:
  friend class RunConfigResolver;
  RunConfig() = default;

  ConfigSource source_ = ConfigSource::kDefault;
  ClusterSpec cluster_;
  std::string task_type_;
  int task_index_ = 0;
  bool local_ = false;
  bool is_chief_ = false;
  std::string chief_job_;
  int num_workers_ = 0;
  int num_ps_ = 0;
  std::string target_;
  std::string session_master_;
  std::string bind_address_;
  std::vector<std::string> device_filters_;
  RuntimeSettings runtime_settings_;
  std::string rpc_layer_;
  std::string environment_;
  std::vector<std::string> warnings_;
  std::vector<std::string> unused_args_;
};

}  // namespace tw

#endif  // TENSORWEAVE_RUN_CONFIG_H_
