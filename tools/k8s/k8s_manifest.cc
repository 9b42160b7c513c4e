#include "tools/k8s/k8s_manifest.h"

#include <array>
#include <map>
#include <set>

#include "nlohmann/json.hpp"
#include "src/base/strings.h"
#include "tools/k8s/k8s_names.h"
#include "tools/k8s/k8s_pod.h"
#include "yaml-cpp/yaml.h"

namespace tw::tools {
namespace {

using k8s::IsDigit;
using k8s::IsDns1035Label;
using k8s::IsDns1123Label;
using k8s::IsEnvName;
using k8s::IsQuantity;
using k8s::kMaxLabelLength;

struct ReplicaType {
  std::string_view job;      // our job name, lower case
  std::string_view tfjob;    // the tfReplicaSpecs key
  bool single_task = false;  // TFJob allows one chief (or master) task
};
constexpr std::array<ReplicaType, 5> kReplicaTypes = {{
    {"chief", "Chief", true},
    {"master", "Master", true},
    {"worker", "Worker", false},
    {"ps", "PS", false},
    {"evaluator", "Evaluator", false},
}};

const ReplicaType* FindReplicaType(std::string_view lower_job) {
  for (const ReplicaType& t : kReplicaTypes) {
    if (t.job == lower_job) return &t;
  }
  return nullptr;
}

bool HasWhitespace(std::string_view s) {
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') return true;
  }
  return false;
}

// True when a plain YAML scalar `s` would not be read back as a string by Kubernetes'
// YAML 1.1 decoder (or by a YAML 1.2 one): empty, null, a boolean ("yes", "off") or
// anything number-like ("2222", "-1", ".5", ".inf", "0x1f", "1:20"). The emitter already
// quotes what is syntactically special (": ", "#", "[", ...); this covers the types.
bool ReadsAsNonString(std::string_view s) {
  if (s.empty()) return true;
  static const std::set<std::string> kWords = {"~",  "null", "y",    "n",     "yes", "no",
                                               "on", "off",  "true", "false", "=",   "<<"};
  if (kWords.contains(ToLower(s))) return true;
  std::string_view rest = s;
  if (rest[0] == '+' || rest[0] == '-') rest.remove_prefix(1);
  if (rest.empty()) return false;
  if (IsDigit(rest[0])) return true;
  if (rest[0] == '.') {
    if (rest.size() > 1 && IsDigit(rest[1])) return true;
    const std::string lower = ToLower(rest);
    return lower == ".inf" || lower == ".nan";
  }
  return false;
}

// The user's strings go through here, so "8080" stays a string and never becomes a number
// that Kubernetes refuses in `args` or an env `value`.
void EmitString(YAML::Emitter& out, std::string_view s) {
  if (ReadsAsNonString(s)) out << YAML::DoubleQuoted;
  out << std::string(s);
}

// The program's words and environment values: any string at all, so always double-quoted
// (escaped by the emitter). A plain scalar would have to avoid every construct that some
// YAML reader takes for syntax (":8080" in a flow sequence, "[64,32]", "- x", "a #b", ...);
// a quoted one is read back as the same string by YAML 1.1 and 1.2 readers alike.
void EmitVerbatim(YAML::Emitter& out, const std::string& s) { out << YAML::DoubleQuoted << s; }

std::string_view RestartPolicyName(RestartPolicy p) {
  switch (p) {
    case RestartPolicy::kNever:
      return "Never";
    case RestartPolicy::kOnFailure:
      return "OnFailure";
    case RestartPolicy::kAlways:
      return "Always";
    case RestartPolicy::kExitCode:
      return "ExitCode";
  }
  return "Never";
}

std::string_view ImagePullPolicyName(ImagePullPolicy p) {
  switch (p) {
    case ImagePullPolicy::kAlways:
      return "Always";
    case ImagePullPolicy::kIfNotPresent:
      return "IfNotPresent";
    case ImagePullPolicy::kNever:
      return "Never";
    case ImagePullPolicy::kDefault:
      break;
  }
  return "";
}

struct Replica {
  const ReplicaType* type;
  std::string job;  // as given, for messages
  int tasks;
};

StatusOr<std::vector<Replica>> CheckReplicas(const TfJobSpec& spec) {
  if (spec.replicas.empty()) {
    return errors::InvalidArgument(
        "--cluster is empty; give the tasks, e.g. chief=1,worker=2,ps=1");
  }
  std::vector<Replica> replicas;
  std::map<std::string_view, std::string> seen;  // replica type -> job as given
  for (const JobCount& c : spec.replicas) {
    const ReplicaType* type = FindReplicaType(ToLower(c.job));
    if (type == nullptr) {
      return errors::InvalidArgument(
          "--cluster: job \"", c.job,
          "\" is not a TFJob replica type; a TFJob runs chief, master, worker, ps and evaluator "
          "tasks");
    }
    if (c.tasks < 1) {
      return errors::InvalidArgument("--cluster: job \"", c.job, "\" needs at least one task");
    }
    if (auto [it, inserted] = seen.emplace(type->job, c.job); !inserted) {
      return errors::InvalidArgument("--cluster names job \"", type->job, "\" twice (\"",
                                     it->second, "\" and \"", c.job, "\")");
    }
    if (type->single_task && c.tasks > 1) {
      return errors::InvalidArgument("--cluster: job \"", c.job, "\" has ", c.tasks,
                                     " tasks; a TFJob has at most one ", type->job, " task");
    }
    replicas.push_back({type, c.job, c.tasks});
  }
  if (seen.contains("chief") && seen.contains("master")) {
    return errors::InvalidArgument(
        "--cluster has both chief and master; they are the same role (master is the legacy "
        "name), give one");
  }
  if (!seen.contains("chief") && !seen.contains("master") && !seen.contains("worker")) {
    return errors::InvalidArgument(
        "--cluster has no chief, master or worker: a TFJob succeeds when chief:0 (or worker:0) "
        "exits 0, so this one could never complete");
  }
  int tasks = 0;
  for (const Replica& r : replicas) tasks += r.tasks;
  if (tasks == 1 && spec.readiness_probe) {
    return errors::InvalidArgument(
        "--readiness-probe on a one-task job: the operator sets no TF_CONFIG for it, so the "
        "program runs as a local task that does not serve port 2222 and would never be ready");
  }
  // Pod and Service names must fit in a DNS label.
  for (const Replica& r : replicas) {
    const std::string longest = internal::StrCatAny(spec.name, "-", r.type->job, "-", r.tasks - 1);
    if (longest.size() > kMaxLabelLength) {
      return errors::InvalidArgument("--name \"", spec.name, "\" is too long: task ", r.type->job,
                                     ":", r.tasks - 1, " would be named \"", longest, "\" (",
                                     longest.size(), " characters; Kubernetes allows ",
                                     kMaxLabelLength, ")");
    }
  }
  return replicas;
}

Status CheckSpec(const TfJobSpec& spec) {
  if (!IsDns1035Label(spec.name)) {
    return errors::InvalidArgument(
        "--name \"", spec.name,
        "\" must be a DNS-1035 label: lower-case letters, digits and '-', starting with a "
        "letter, ending with a letter or digit, at most 63 characters");
  }
  if (!spec.namespace_.empty() && !IsDns1123Label(spec.namespace_)) {
    return errors::InvalidArgument("--namespace \"", spec.namespace_,
                                   "\" must be a DNS-1123 label: lower-case letters, digits and "
                                   "'-', at most 63 characters");
  }
  if (spec.image.empty() || HasWhitespace(spec.image)) {
    return errors::InvalidArgument("--image \"", spec.image,
                                   "\" must be a container image reference without spaces, e.g. "
                                   "registry.example.com/tensorweave:0.1");
  }
  // YAML is Unicode: a word that is not UTF-8 (argv is bytes) could not be written in the
  // manifest as given. nlohmann::json checks UTF-8 when it writes a string.
  auto check_utf8 = [](const std::string& what, const std::string& text) -> Status {
    try {
      (void)nlohmann::json(text).dump();
    } catch (const nlohmann::json::type_error&) {
      return errors::InvalidArgument(what, " is not valid UTF-8, which a YAML manifest needs");
    }
    return OkStatus();
  };
  for (size_t i = 0; i < spec.command.size(); ++i) {
    TW_RETURN_IF_ERROR(
        check_utf8(internal::StrCatAny("word ", i + 1, " of the program"), spec.command[i]));
  }
  for (const auto& [name, value] : spec.env) {
    TW_RETURN_IF_ERROR(check_utf8("--env " + name + "'s value", value));
  }
  if (spec.command.empty() || spec.command[0].empty()) {
    return errors::InvalidArgument(
        "no program to run: put it after --, e.g. tw k8s tfjob ... -- tw server");
  }
  if (spec.backoff_limit.has_value() && *spec.backoff_limit < 0) {
    return errors::InvalidArgument("--backoff-limit ", *spec.backoff_limit, " must be >= 0");
  }
  if (spec.restart_policy == RestartPolicy::kAlways) {
    // A pod restarted after exiting 0 never finishes, so neither does the job (tw launch
    // refuses it too).
    return errors::InvalidArgument(
        "--restart always would restart a task that finished (exit 0), so the job could never "
        "succeed; use exit-code (retry signals and crashes) or on-failure");
  }
  if (spec.backoff_limit.has_value() && spec.restart_policy != RestartPolicy::kOnFailure) {
    // The operator counts container restarts against backoffLimit; under ExitCode it
    // recreates pods instead, which are never counted, and under Never nothing restarts.
    return errors::InvalidArgument(
        "--backoff-limit counts restarts of --restart on-failure only: the operator never "
        "counts the pods --restart ",
        spec.restart_policy == RestartPolicy::kExitCode ? "exit-code recreates" : "never restarts",
        " (docs/kubernetes.md)");
  }
  if (!spec.cpu.empty() && !IsQuantity(spec.cpu)) {
    return errors::InvalidArgument("--cpu \"", spec.cpu,
                                   "\" is not a Kubernetes quantity (e.g. 2 or 500m)");
  }
  if (!spec.memory.empty() && !IsQuantity(spec.memory)) {
    return errors::InvalidArgument("--memory \"", spec.memory,
                                   "\" is not a Kubernetes quantity (e.g. 4Gi or 512Mi)");
  }
  std::set<std::string> env_names;
  for (const auto& [name, value] : spec.env) {
    if (!IsEnvName(name)) {
      return errors::InvalidArgument("--env \"", name,
                                     "\": the name must match [-._a-zA-Z][-._a-zA-Z0-9]*");
    }
    if (name == "TF_CONFIG") {
      return errors::InvalidArgument(
          "--env TF_CONFIG: the TFJob operator sets TF_CONFIG for every task; leave it out");
    }
    if (!env_names.insert(name).second) {
      return errors::InvalidArgument("--env ", name, " is given twice");
    }
  }
  return k8s::CheckPodFlags(spec);
}

void EmitContainer(YAML::Emitter& out, const TfJobSpec& spec) {
  out << YAML::BeginMap;
  // The operator injects TF_CONFIG only into the container with this name.
  out << YAML::Key << "name" << YAML::Value << "tensorflow";
  out << YAML::Key << "image" << YAML::Value;
  EmitString(out, spec.image);
  if (spec.image_pull_policy != ImagePullPolicy::kDefault) {
    out << YAML::Key << "imagePullPolicy" << YAML::Value
        << std::string(ImagePullPolicyName(spec.image_pull_policy));
  }
  // The whole command line goes in `args`, leaving the image's ENTRYPOINT in place: for
  // tensorweave's image that is tini, which forwards SIGTERM to the program and reaps
  // children (a `command` would replace it). An image without an ENTRYPOINT runs args[0].
  out << YAML::Key << "args" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string& word : spec.command) EmitVerbatim(out, word);
  out << YAML::EndSeq;
  std::vector<std::pair<std::string, std::string>> env = spec.env;
  for (auto& implied : k8s::ImpliedEnv(spec)) env.push_back(std::move(implied));
  if (!env.empty()) {
    out << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
    for (const auto& [name, value] : env) {
      out << YAML::BeginMap;
      out << YAML::Key << "name" << YAML::Value;
      EmitString(out, name);
      out << YAML::Key << "value" << YAML::Value;
      EmitVerbatim(out, value);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  // The operator builds every task's TF_CONFIG address from this port's name and number.
  out << YAML::Key << "ports" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "tfjob-port";
  out << YAML::Key << "containerPort" << YAML::Value << kTfJobPort;
  out << YAML::EndMap << YAML::EndSeq;
  k8s::EmitContainerKeys(out, spec);
  if (spec.readiness_probe) {
    // Ready once the task's server accepts connections on its port: a TCP probe, which
    // works with mutual TLS too (the kubelet's gRPC probe is plaintext, so a TLS server
    // never answered it). The operator's headless Services do not publish unready pods, so
    // a task's name resolves once it serves. A busy ps may answer slowly: a generous
    // timeout, and several misses before a pod is taken out.
    out << YAML::Key << "readinessProbe" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "tcpSocket" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "port" << YAML::Value << kTfJobPort;
    out << YAML::EndMap;
    out << YAML::Key << "periodSeconds" << YAML::Value << 5;
    out << YAML::Key << "timeoutSeconds" << YAML::Value << 5;
    out << YAML::Key << "failureThreshold" << YAML::Value << 6;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void EmitReplicaSpec(YAML::Emitter& out, const TfJobSpec& spec, const Replica& replica) {
  out << YAML::Key << std::string(replica.type->tfjob) << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "replicas" << YAML::Value << replica.tasks;
  out << YAML::Key << "restartPolicy" << YAML::Value
      << std::string(RestartPolicyName(spec.restart_policy));
  out << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  if (spec.disable_istio_sidecar) {
    // An Istio sidecar keeps a finished pod Running, so the job would never complete.
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "sidecar.istio.io/inject" << YAML::Value;
    EmitString(out, "false");
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  k8s::EmitPodKeys(out, spec);
  out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq;
  EmitContainer(out, spec);
  out << YAML::EndSeq;
  out << YAML::EndMap;  // spec
  out << YAML::EndMap;  // template
  out << YAML::EndMap;  // replica spec
}

}  // namespace

StatusOr<RestartPolicy> ParseRestartPolicy(std::string_view text) {
  static const std::map<std::string_view, RestartPolicy> kNames = {
      {"never", RestartPolicy::kNever},          {"Never", RestartPolicy::kNever},
      {"on-failure", RestartPolicy::kOnFailure}, {"OnFailure", RestartPolicy::kOnFailure},
      {"always", RestartPolicy::kAlways},        {"Always", RestartPolicy::kAlways},
      {"exit-code", RestartPolicy::kExitCode},   {"ExitCode", RestartPolicy::kExitCode},
  };
  if (auto it = kNames.find(text); it != kNames.end()) return it->second;
  return errors::InvalidArgument("--restart \"", text,
                                 "\" must be one of never, on-failure, always, exit-code");
}

StatusOr<ImagePullPolicy> ParseImagePullPolicy(std::string_view text) {
  static const std::map<std::string_view, ImagePullPolicy> kNames = {
      {"always", ImagePullPolicy::kAlways},
      {"Always", ImagePullPolicy::kAlways},
      {"if-not-present", ImagePullPolicy::kIfNotPresent},
      {"IfNotPresent", ImagePullPolicy::kIfNotPresent},
      {"never", ImagePullPolicy::kNever},
      {"Never", ImagePullPolicy::kNever},
  };
  if (auto it = kNames.find(text); it != kNames.end()) return it->second;
  return errors::InvalidArgument("--image-pull-policy \"", text,
                                 "\" must be one of always, if-not-present, never");
}

StatusOr<std::string> TfJobManifest(const TfJobSpec& spec) {
  TW_RETURN_IF_ERROR(CheckSpec(spec));
  TW_ASSIGN_OR_RETURN(std::vector<Replica> replicas, CheckReplicas(spec));

  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::Comment("Generated by `tw k8s tfjob`; apply with `kubectl apply -f FILE`.");
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "kubeflow.org/v1";
  out << YAML::Key << "kind" << YAML::Value << "TFJob";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << spec.name;
  if (!spec.namespace_.empty()) {
    out << YAML::Key << "namespace" << YAML::Value;
    EmitString(out, spec.namespace_);
  }
  out << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "runPolicy" << YAML::Value << YAML::BeginMap;
  // Since training-operator v1.6.0 the default is None, which leaves ps tasks (they serve
  // until told to stop) running forever after the chief has succeeded.
  out << YAML::Key << "cleanPodPolicy" << YAML::Value << "Running";
  if (spec.backoff_limit.has_value()) {
    out << YAML::Key << "backoffLimit" << YAML::Value << *spec.backoff_limit;
  }
  if (spec.active_deadline_seconds.has_value()) {
    out << YAML::Key << "activeDeadlineSeconds" << YAML::Value << *spec.active_deadline_seconds;
  }
  if (spec.ttl_seconds_after_finished.has_value()) {
    out << YAML::Key << "ttlSecondsAfterFinished" << YAML::Value
        << *spec.ttl_seconds_after_finished;
  }
  out << YAML::EndMap;
  if (spec.all_workers_success) {
    // TFJob's default succeeds when chief:0 (else worker:0) does; AllWorkers waits for all.
    out << YAML::Key << "successPolicy" << YAML::Value << "AllWorkers";
  }
  out << YAML::Key << "tfReplicaSpecs" << YAML::Value << YAML::BeginMap;
  for (const Replica& r : replicas) EmitReplicaSpec(out, spec, r);
  out << YAML::EndMap;  // tfReplicaSpecs
  out << YAML::EndMap;  // spec
  out << YAML::EndMap;  // document
  if (!out.good()) {
    return errors::Internal("cannot write the TFJob manifest: ", out.GetLastError());
  }
  const std::string claim = k8s::CheckpointClaim(spec);
  return std::string(out.c_str()) + "\n" + (claim.empty() ? "" : "---\n" + claim);
}

}  // namespace tw::tools
