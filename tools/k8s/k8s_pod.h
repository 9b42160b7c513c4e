// The pod-level parts of the TFJob manifest (k8s_manifest.cc): security context, volumes and
// their mounts, resource requests and limits. Internal to the manifest builder.
#ifndef TENSORWEAVE_TOOLS_K8S_K8S_POD_H_
#define TENSORWEAVE_TOOLS_K8S_K8S_POD_H_

#include <yaml-cpp/yaml.h>

#include "tensorweave/status.h"
#include "tools/k8s/k8s_manifest.h"

namespace tw::tools::k8s {

// InvalidArgument naming the flag: a malformed claim or secret name, a checkpoint directory
// that is not absolute, a limit or size that is not a quantity, a non-positive deadline.
Status CheckPodFlags(const TfJobSpec& spec);

// Keys of a pod template's spec: securityContext (Kubernetes' "restricted" Pod Security
// Standard: non-root uid kImageUid, fsGroup for the volumes, RuntimeDefault seccomp) and
// the volumes (checkpoint claim, TLS secret).
void EmitPodKeys(YAML::Emitter& out, const TfJobSpec& spec);
// Keys of the container: resources, securityContext (no privilege escalation, no
// capabilities) and the volume mounts.
void EmitContainerKeys(YAML::Emitter& out, const TfJobSpec& spec);
// Environment entries the flags imply (TW_ALLOWED_DIRECTORIES for the checkpoint
// directory), unless --env sets them.
std::vector<std::pair<std::string, std::string>> ImpliedEnv(const TfJobSpec& spec);
// The claim --checkpoint-size asks for, as a second YAML document ("" without it).
std::string CheckpointClaim(const TfJobSpec& spec);

}  // namespace tw::tools::k8s

#endif  // TENSORWEAVE_TOOLS_K8S_K8S_POD_H_
