// Kubernetes manifests for tensorweave clusters: a Kubeflow `kubeflow.org/v1` TFJob whose
// operator creates one pod and one headless Service per task and hands each pod its
// TF_CONFIG, so the program that runs locally runs unchanged. Used by `tw k8s tfjob`.
#ifndef TENSORWEAVE_TOOLS_K8S_K8S_MANIFEST_H_
#define TENSORWEAVE_TOOLS_K8S_K8S_MANIFEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/cluster/job_counts.h"
#include "tensorweave/status.h"

namespace tw::tools {

// The port every task listens on. The operator builds TF_CONFIG from the `tensorflow`
// container's port named `tfjob-port`, so each task's address is `<pod>.<ns>.svc:2222`.
inline constexpr int kTfJobPort = 2222;

// A TFJob replica's restartPolicy (shared/reference/tf_config.md section 3.2). Under
// kExitCode, exit codes 1-127 fail the job and 128-255 recreate the pod; tensorweave
// programs exit 1 for bad configuration, so that is the policy to choose for long jobs.
enum class RestartPolicy { kNever, kOnFailure, kAlways, kExitCode };

// Kubernetes' container imagePullPolicy; kDefault leaves the field out (the cluster then
// pulls `:latest` images always and tagged images if not present).
enum class ImagePullPolicy { kDefault, kAlways, kIfNotPresent, kNever };

// Flag spellings: "never", "on-failure", "always", "exit-code" (Kubernetes' own spellings
// "Never", "OnFailure", ... are accepted too). InvalidArgument listing the choices.
StatusOr<RestartPolicy> ParseRestartPolicy(std::string_view text);
// "always", "if-not-present", "never" (or "Always", "IfNotPresent", "Never").
StatusOr<ImagePullPolicy> ParseImagePullPolicy(std::string_view text);

// Everything `tw k8s tfjob` puts into the manifest. Each field names the flag it comes from
// so that errors can name it too.
struct TfJobSpec {
  std::string name;                  // --name: metadata.name, a DNS-1035 label (pods are NAME-ps-0)
  std::string namespace_;            // --namespace: metadata.namespace; empty leaves it out
  std::string image;                 // --image: the container image of every replica
  std::vector<JobCount> replicas;    // --cluster: chief, master, worker, ps, evaluator
  std::vector<std::string> command;  // after `--`: argv[0] is `command`, the rest `args`
  RestartPolicy restart_policy = RestartPolicy::kNever;           // --restart; TFJob's default
  ImagePullPolicy image_pull_policy = ImagePullPolicy::kDefault;  // --image-pull-policy
  std::optional<int> backoff_limit;  // --backoff-limit: runPolicy.backoffLimit, >= 0
  std::string cpu;                   // --cpu: resources.requests.cpu, e.g. "2" or "500m"
  std::string memory;                // --memory: resources.requests.memory, e.g. "4Gi"
  std::vector<std::pair<std::string, std::string>> env;  // --env K=V, in order
  bool readiness_probe = false;        // --readiness-probe: TCP probe of port 2222
  bool disable_istio_sidecar = false;  // --no-istio-sidecar: sidecar.istio.io/inject "false"
  std::string cpu_limit;               // --cpu-limit: resources.limits.cpu
  std::string memory_limit;  // --memory-limit: resources.limits.memory (default: --memory)
  // --checkpoint-pvc: a ReadWriteMany PersistentVolumeClaim mounted at checkpoint_dir in
  // every task (chief and ps save there; worker:0 does when there is no chief), whose
  // directory the tasks' servers are allowed to write (TW_ALLOWED_DIRECTORIES).
  std::string checkpoint_pvc;
  std::string checkpoint_dir = "/ckpt";  // --checkpoint-dir: where it is mounted
  std::string checkpoint_size;           // --checkpoint-size: also emit the claim, this big
  std::string tls_secret;            // --tls-secret: a Secret mounted read-only at kTlsMountPath
  bool all_workers_success = false;  // --success all-workers
  std::optional<int64_t> active_deadline_seconds;     // --active-deadline: runPolicy's
  std::optional<int64_t> ttl_seconds_after_finished;  // --ttl-after-finished: runPolicy's
};

// Where --tls-secret's keys appear in every task: pass --tls-ca=/etc/tensorweave/tls/ca.pem
// (and cert.pem, key.pem, or the secret's own key names) to the program.
inline constexpr char kTlsMountPath[] = "/etc/tensorweave/tls";
// The image's user (Dockerfile): the pods run as it, and fsGroup makes mounted volumes
// writable by it.
inline constexpr int kImageUid = 1000;

// The TFJob as one YAML document. Replica specs come in the order of `spec.replicas`,
// keyed by TFJob's replica type (chief -> Chief, ps -> PS, ...); every replica has one
// container named `tensorflow` with port 2222 named `tfjob-port`, and runPolicy has
// cleanPodPolicy Running so that ps tasks still running after the chief succeeds are
// deleted. Strings that YAML would read as another type ("2222", "true") are quoted.
//
// InvalidArgument, naming the flag or job, when: the name is not a DNS-1035 label or is too
// long for its pods' names; the image is empty or has white space; a job is not a TFJob
// replica type; both chief and master are given, or either has more than one task; there
// is neither chief, master nor worker (nothing could complete the job); the command is
// empty; a quantity, an env name or the backoff limit is malformed.
StatusOr<std::string> TfJobManifest(const TfJobSpec& spec);

}  // namespace tw::tools

#endif  // TENSORWEAVE_TOOLS_K8S_K8S_MANIFEST_H_
