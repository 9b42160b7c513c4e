// `tw k8s tfjob`: prints a Kubeflow TFJob manifest that runs a program as a tensorweave
// cluster on Kubernetes; the operator hands every pod its TF_CONFIG.
#include <iostream>

#include "src/cluster/job_counts.h"
#include "tools/commands.h"
#include "tools/k8s/k8s_manifest.h"

namespace tw::tools {
namespace {

// The flags as typed; turned into a TfJobSpec (and checked) when the command runs.
struct TfJobFlags {
  std::string name;
  std::string namespace_;
  std::string image;
  std::string cluster;
  std::string restart = "never";
  std::string image_pull_policy;
  int backoff_limit = 0;
  std::string cpu;
  std::string memory;
  std::vector<std::string> env;
  bool readiness_probe = false;
  bool no_istio_sidecar = false;
  std::string cpu_limit;
  std::string memory_limit;
  std::string checkpoint_pvc;
  std::string checkpoint_dir = "/ckpt";
  std::string checkpoint_size;
  std::string tls_secret;
  std::string success = "default";
  int64_t active_deadline = 0;
  int64_t ttl_after_finished = -1;
  std::vector<std::string> command;
};

StatusOr<TfJobSpec> MakeSpec(const TfJobFlags& flags, bool has_backoff_limit, bool has_deadline,
                             bool has_ttl) {
  TfJobSpec spec;
  spec.name = flags.name;
  spec.namespace_ = flags.namespace_;
  spec.image = flags.image;
  auto replicas = ParseJobCounts(flags.cluster);
  if (!replicas.ok()) return errors::Annotate(replicas.status(), "--cluster: ");
  spec.replicas = *std::move(replicas);
  spec.command = flags.command;
  TW_ASSIGN_OR_RETURN(spec.restart_policy, ParseRestartPolicy(flags.restart));
  if (!flags.image_pull_policy.empty()) {
    TW_ASSIGN_OR_RETURN(spec.image_pull_policy, ParseImagePullPolicy(flags.image_pull_policy));
  }
  if (has_backoff_limit) spec.backoff_limit = flags.backoff_limit;
  spec.cpu = flags.cpu;
  spec.memory = flags.memory;
  for (const std::string& kv : flags.env) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) {
      return errors::InvalidArgument("--env \"", kv, "\" is not NAME=VALUE");
    }
    spec.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  spec.readiness_probe = flags.readiness_probe;
  spec.disable_istio_sidecar = flags.no_istio_sidecar;
  spec.cpu_limit = flags.cpu_limit;
  spec.memory_limit = flags.memory_limit;
  spec.checkpoint_pvc = flags.checkpoint_pvc;
  spec.checkpoint_dir = flags.checkpoint_dir;
  spec.checkpoint_size = flags.checkpoint_size;
  spec.tls_secret = flags.tls_secret;
  if (flags.success != "default" && flags.success != "all-workers") {
    return errors::InvalidArgument("--success \"", flags.success,
                                   "\" must be default or all-workers");
  }
  spec.all_workers_success = flags.success == "all-workers";
  if (has_deadline) spec.active_deadline_seconds = flags.active_deadline;
  if (has_ttl) spec.ttl_seconds_after_finished = flags.ttl_after_finished;
  return spec;
}

int RunTfJob(const TfJobFlags& flags, bool has_backoff_limit, bool has_deadline, bool has_ttl) {
  auto spec = MakeSpec(flags, has_backoff_limit, has_deadline, has_ttl);
  StatusOr<std::string> manifest =
      spec.ok() ? TfJobManifest(*spec) : StatusOr<std::string>(spec.status());
  if (!manifest.ok()) {
    std::cerr << "tw k8s tfjob: " << manifest.status().message() << "\n";
    return 1;
  }
  std::cout << *manifest;
  int tasks = 0;
  for (const JobCount& c : spec->replicas) tasks += c.tasks;
  if (tasks == 1) {
    std::cerr << "tw k8s tfjob: note: the operator sets no TF_CONFIG for a one-task job, so "
                 "the program runs as a local single task\n";
  }
  return 0;
}

}  // namespace

void AddK8sCommand(CLI::App& app, int* exit_code) {
  CLI::App* k8s = app.add_subcommand("k8s", "Kubernetes manifests for tensorweave clusters");
  k8s->require_subcommand(1);

  auto flags = std::make_shared<TfJobFlags>();
  CLI::App* cmd = k8s->add_subcommand(
      "tfjob", "Print a Kubeflow TFJob (kubeflow.org/v1) that runs a program on every task");
  cmd->add_option("--name", flags->name, "TFJob name; pods are NAME-<job>-<index>")->required();
  cmd->add_option("--image", flags->image, "Container image of every task")->required();
  cmd->add_option("--cluster", flags->cluster,
                  "Replicas per job: chief, master, worker, ps, evaluator, e.g. "
                  "chief=1,worker=2,ps=1")
      ->required();
  cmd->add_option(
         "--restart", flags->restart,
         "Restart policy of every replica: never, on-failure, exit-code (always is refused: "
         "the job could never succeed)")
      ->capture_default_str();
  cmd->add_option("--namespace", flags->namespace_,
                  "metadata.namespace (default: kubectl's current namespace)");
  CLI::Option* backoff = cmd->add_option(
      "--backoff-limit", flags->backoff_limit,
      "runPolicy.backoffLimit: restarts before the job fails; with --restart on-failure only "
      "(0: the first failure fails the job)");
  cmd->add_option("--image-pull-policy", flags->image_pull_policy,
                  "always, if-not-present or never (default: Kubernetes' own)");
  cmd->add_option("--cpu", flags->cpu, "CPU request of every task, e.g. 2 or 500m");
  cmd->add_option("--memory", flags->memory, "Memory request of every task, e.g. 4Gi");
  // One value per --env, collected as each is parsed: a vector option would also take the
  // words of a program given without `--` as its values.
  cmd->add_option_function<std::string>(
         "--env", [flags](const std::string& v) { flags->env.push_back(v); },
         "NAME=VALUE set in every task; repeat for more")
      ->trigger_on_parse()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--readiness-probe", flags->readiness_probe,
                "Add a TCP readiness probe on port 2222 (works with TLS; not for one-task jobs)");
  cmd->add_option("--cpu-limit", flags->cpu_limit, "CPU limit of every task, e.g. 4");
  cmd->add_option("--memory-limit", flags->memory_limit,
                  "Memory limit of every task (default: the --memory request)");
  cmd->add_option("--checkpoint-pvc", flags->checkpoint_pvc,
                  "A ReadWriteMany PersistentVolumeClaim mounted in every task for checkpoints; "
                  "the tasks may write there (TW_ALLOWED_DIRECTORIES)");
  cmd->add_option("--checkpoint-dir", flags->checkpoint_dir, "Where the claim is mounted")
      ->capture_default_str();
  cmd->add_option("--checkpoint-size", flags->checkpoint_size,
                  "Also print the claim itself (ReadWriteMany), this big, e.g. 10Gi");
  cmd->add_option("--tls-secret", flags->tls_secret,
                  "A Secret with the task's TLS files, mounted read-only at /etc/tensorweave/tls");
  cmd->add_option("--success", flags->success,
                  "default (chief:0, else worker:0, succeeds the job) | all-workers")
      ->capture_default_str();
  CLI::Option* deadline =
      cmd->add_option("--active-deadline", flags->active_deadline,
                      "runPolicy.activeDeadlineSeconds: the job fails after this many seconds");
  CLI::Option* ttl = cmd->add_option(
      "--ttl-after-finished", flags->ttl_after_finished,
      "runPolicy.ttlSecondsAfterFinished: the finished job is deleted after this many seconds");
  cmd->add_flag("--no-istio-sidecar", flags->no_istio_sidecar,
                "Annotate pods with sidecar.istio.io/inject: \"false\" (Kubeflow with Istio)");
  // The program and its arguments: the words after `--`, exactly as given (GetProgramWords),
  // or without `--` the words left over once the flags are read.
  cmd->allow_extras();
  cmd->footer(
      "Every task runs the same program; the operator gives each pod a TF_CONFIG naming its\n"
      "role and the cluster (addresses NAME-<job>-<index>.<namespace>.svc:2222).\n\n"
      "Examples:\n"
      "  tw k8s tfjob --name wordcount --image registry.example.com/tensorweave:0.1 \\\n"
      "      --cluster chief=1,worker=2,ps=1 --restart exit-code -- tw server > tfjob.yaml\n"
      "  kubectl apply -f tfjob.yaml\n\n"
      "See docs/kubernetes.md for the whole path.");
  cmd->callback([cmd, flags, backoff, deadline, ttl, exit_code] {
    const ProgramWords& program = GetProgramWords();
    flags->command = program.given ? program.words : cmd->remaining();
    if (program.given && !cmd->remaining().empty()) {
      std::cerr << "tw k8s tfjob: unexpected \"" << cmd->remaining()[0]
                << "\" before --: the program and its arguments go after --\n";
      *exit_code = 1;
      return;
    }
    *exit_code = RunTfJob(*flags, backoff->count() > 0, deadline->count() > 0, ttl->count() > 0);
  });
}

}  // namespace tw::tools
