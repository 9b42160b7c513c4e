#include "tools/k8s/k8s_pod.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/base/strings.h"
#include "tools/k8s/k8s_names.h"

namespace tw::tools::k8s {
namespace {

constexpr char kCheckpointVolume[] = "checkpoints";
constexpr char kTlsVolume[] = "tls";

Status CheckQuantity(const char* flag, const std::string& value, const char* example) {
  if (value.empty() || IsQuantity(value)) return OkStatus();
  return errors::InvalidArgument(flag, " \"", value, "\" is not a Kubernetes quantity (e.g. ",
                                 example, ")");
}

// Object names (claims, secrets) are DNS-1123 subdomains: labels joined by dots.
bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    if (!IsDns1123Label(s.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

Status CheckPodFlags(const TfJobSpec& spec) {
  TW_RETURN_IF_ERROR(CheckQuantity("--cpu-limit", spec.cpu_limit, "2 or 500m"));
  TW_RETURN_IF_ERROR(CheckQuantity("--memory-limit", spec.memory_limit, "4Gi or 512Mi"));
  TW_RETURN_IF_ERROR(CheckQuantity("--checkpoint-size", spec.checkpoint_size, "10Gi"));
  for (const auto& [flag, name] : {std::pair{"--checkpoint-pvc", &spec.checkpoint_pvc},
                                   std::pair{"--tls-secret", &spec.tls_secret}}) {
    if (!name->empty() && !IsDns1123Subdomain(*name)) {
      return errors::InvalidArgument(flag, " \"", *name,
                                     "\" must be a Kubernetes object name: lower-case letters, "
                                     "digits, '-' and '.'");
    }
  }
  if (!spec.checkpoint_pvc.empty() &&
      (spec.checkpoint_dir.empty() || spec.checkpoint_dir[0] != '/' ||
       spec.checkpoint_dir == "/")) {
    return errors::InvalidArgument("--checkpoint-dir \"", spec.checkpoint_dir,
                                   "\" must be an absolute path below /");
  }
  if (!spec.checkpoint_size.empty() && spec.checkpoint_pvc.empty()) {
    return errors::InvalidArgument("--checkpoint-size needs --checkpoint-pvc, the claim's name");
  }
  if (spec.active_deadline_seconds.has_value() && *spec.active_deadline_seconds <= 0) {
    return errors::InvalidArgument("--active-deadline ", *spec.active_deadline_seconds,
                                   " must be a positive number of seconds");
  }
  if (spec.ttl_seconds_after_finished.has_value() && *spec.ttl_seconds_after_finished < 0) {
    return errors::InvalidArgument("--ttl-after-finished ", *spec.ttl_seconds_after_finished,
                                   " must be >= 0 seconds");
  }
  return OkStatus();
}

void EmitPodKeys(YAML::Emitter& out, const TfJobSpec& spec) {
  // Kubernetes' "restricted" Pod Security Standard: non-root, a seccomp profile; fsGroup
  // makes mounted volumes (the checkpoint claim, the secret) usable by the image's user.
  out << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "runAsNonRoot" << YAML::Value << true;
  out << YAML::Key << "runAsUser" << YAML::Value << kImageUid;
  out << YAML::Key << "runAsGroup" << YAML::Value << kImageUid;
  out << YAML::Key << "fsGroup" << YAML::Value << kImageUid;
  out << YAML::Key << "seccompProfile" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << "RuntimeDefault";
  out << YAML::EndMap << YAML::EndMap;
  if (spec.checkpoint_pvc.empty() && spec.tls_secret.empty()) return;
  out << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  if (!spec.checkpoint_pvc.empty()) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << kCheckpointVolume;
    out << YAML::Key << "persistentVolumeClaim" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "claimName" << YAML::Value << YAML::DoubleQuoted << spec.checkpoint_pvc;
    out << YAML::EndMap << YAML::EndMap;
  }
  if (!spec.tls_secret.empty()) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << kTlsVolume;
    out << YAML::Key << "secret" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "secretName" << YAML::Value << YAML::DoubleQuoted << spec.tls_secret;
    // Readable by the owner and fsGroup only: the private key is in it.
    out << YAML::Key << "defaultMode" << YAML::Value << 0440;
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitContainerKeys(YAML::Emitter& out, const TfJobSpec& spec) {
  const std::string memory_limit = spec.memory_limit.empty() ? spec.memory : spec.memory_limit;
  const bool requests = !spec.cpu.empty() || !spec.memory.empty();
  const bool limits = !spec.cpu_limit.empty() || !memory_limit.empty();
  if (requests || limits) {
    out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, cpu, memory] : {std::tuple{"requests", &spec.cpu, &spec.memory},
                                           std::tuple{"limits", &spec.cpu_limit, &memory_limit}}) {
      if (cpu->empty() && memory->empty()) continue;
      out << YAML::Key << key << YAML::Value << YAML::BeginMap;
      if (!cpu->empty()) out << YAML::Key << "cpu" << YAML::Value << YAML::DoubleQuoted << *cpu;
      if (!memory->empty()) {
        out << YAML::Key << "memory" << YAML::Value << YAML::DoubleQuoted << *memory;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "allowPrivilegeEscalation" << YAML::Value << false;
  out << YAML::Key << "capabilities" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "drop" << YAML::Value << YAML::Flow << YAML::BeginSeq << "ALL"
      << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndMap;
  if (spec.checkpoint_pvc.empty() && spec.tls_secret.empty()) return;
  out << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  if (!spec.checkpoint_pvc.empty()) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << kCheckpointVolume;
    out << YAML::Key << "mountPath" << YAML::Value << YAML::DoubleQuoted << spec.checkpoint_dir;
    out << YAML::EndMap;
  }
  if (!spec.tls_secret.empty()) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << kTlsVolume;
    out << YAML::Key << "mountPath" << YAML::Value << kTlsMountPath;
    out << YAML::Key << "readOnly" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

std::vector<std::pair<std::string, std::string>> ImpliedEnv(const TfJobSpec& spec) {
  if (spec.checkpoint_pvc.empty()) return {};
  for (const auto& [name, value] : spec.env) {
    if (name == "TW_ALLOWED_DIRECTORIES") return {};  // the user's choice wins
  }
  return {{"TW_ALLOWED_DIRECTORIES", spec.checkpoint_dir}};
}

std::string CheckpointClaim(const TfJobSpec& spec) {
  if (spec.checkpoint_size.empty()) return "";
  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "PersistentVolumeClaim";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << spec.checkpoint_pvc;
  if (!spec.namespace_.empty()) {
    out << YAML::Key << "namespace" << YAML::Value << YAML::DoubleQuoted << spec.namespace_;
  }
  out << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  // Every task that saves mounts it at once: the chief writes the index, ps tasks their
  // shards. A storage class that offers ReadWriteMany (NFS, CephFS, ...) is needed.
  out << YAML::Key << "accessModes" << YAML::Value << YAML::Flow << YAML::BeginSeq
      << "ReadWriteMany" << YAML::EndSeq;
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "requests" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "storage" << YAML::Value << YAML::DoubleQuoted << spec.checkpoint_size;
  out << YAML::EndMap << YAML::EndMap;
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace tw::tools::k8s
