// `tw server`: runs one task's standard server, its role resolved from flags or TF_CONFIG
// like any tensorweave program; stops cleanly on SIGTERM or SIGINT (exit codes: ExitCode).
#include <signal.h>

#include <atomic>
#include <iostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/time/time.h"
#include "src/base/logging.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/run_config.h"
#include "tensorweave/server.h"
#include "tensorweave/tls.h"
#include "tools/commands.h"

namespace tw::tools {
namespace {

struct ServerCommandOptions {
  std::string bind_host = "0.0.0.0";
  int threads = 0;
  // PEM files for mutual TLS: all three or none.
  std::string tls_ca, tls_cert, tls_key;
  std::string tls_server_name;
  std::string stop_when_chief_unreachable;  // a duration, "30s"; empty: never
  std::string wait_for_cluster;             // a duration; empty: ServerOptions' default
  std::vector<std::string> allowed_dirs;    // ServerOptions.allowed_directories
  int metrics_port = -2;                    // -2: not given (TW_METRICS_PORT decides)
};

// A positive duration given to `flag` ("30s", "2m"), or a one-line message naming the flag.
StatusOr<absl::Duration> PositiveDuration(const std::string& flag, const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration()) {
    return errors::InvalidArgument(flag, " \"", text,
                                   "\" is not a positive duration (say 30s or 2m)");
  }
  return d;
}

// The TLS options the flags ask for (insecure when none is given), or a one-line message.
StatusOr<TlsOptions> TlsFromFlags(const ServerCommandOptions& opt) {
  const std::vector<std::pair<std::string, const std::string*>> files = {
      {"--tls-ca", &opt.tls_ca}, {"--tls-cert", &opt.tls_cert}, {"--tls-key", &opt.tls_key}};
  int given = 0;
  for (const auto& [flag, value] : files) given += value->empty() ? 0 : 1;
  if (given == 0) {
    if (!opt.tls_server_name.empty()) {
      return errors::InvalidArgument(
          "--tls-server-name needs --tls-ca, --tls-cert and --tls-key (mutual TLS)");
    }
    return TlsOptions{};
  }
  for (const auto& [flag, value] : files) {
    if (value->empty()) {
      return errors::InvalidArgument(
          "missing ", flag, ": mutual TLS needs all of --tls-ca, --tls-cert and --tls-key");
    }
  }
  TW_ASSIGN_OR_RETURN(TlsOptions tls, LoadTlsFiles(opt.tls_ca, opt.tls_cert, opt.tls_key));
  tls.server_name = opt.tls_server_name;
  return tls;
}

// tw server's exit codes, chosen for TFJob's ExitCode restart policy (1-127 permanent,
// 128-255 retried): docs/kubernetes.md.
constexpr int kExitCannotListen = 200;      // the port could not be bound: retried
constexpr int kExitChiefUnreachable = 201;  // --stop-when-chief-unreachable ran out: retried

// 0 when the cluster was stopped by one of its tasks (the job is done); 128 + the signal
// that stopped the server (a drained node or an evicted pod: the work is not done, and a
// retried pod resumes it); kExitChiefUnreachable when the chief went away.
int ExitCode(StopReason reason, int signal) {
  if (reason == StopReason::kChiefUnreachable) return kExitChiefUnreachable;
  if (reason == StopReason::kStoppedByCluster) return 0;
  return signal != 0 ? 128 + signal : 0;
}

int RunServer(const ServerCommandOptions& opt, const std::vector<std::string>& args) {
  if (opt.threads < 0 || opt.threads > kMaxComputeThreads) {
    std::cerr << "tw server: --threads must be from 0 (one per core) to " << kMaxComputeThreads
              << ", got " << opt.threads << "\n";
    return 1;
  }
  StatusOr<TlsOptions> tls = TlsFromFlags(opt);
  if (!tls.ok()) {
    std::cerr << "tw server: " << tls.status().message() << "\n";
    return 1;
  }
  auto config = RunConfig::ResolveFromEnvironment(args);
  if (!config.ok()) {
    std::cerr << "tw server: " << config.status().message() << "\n";
    return 1;
  }
  if (!config->unused_args().empty()) {
    std::cerr << "tw server: unknown argument \"" << config->unused_args().front() << "\"\n";
    return 1;
  }
  for (const std::string& w : config->warnings()) Log().warn("{}", w);
  // The runtime's environment variables (TW_NUM_THREADS, which tw launch sets, ...): the
  // library reads none itself.
  std::vector<std::string> env_warnings;
  const RuntimeSettings runtime = RuntimeSettings::FromEnvironment(nullptr, &env_warnings);
  for (const std::string& w : env_warnings) Log().warn("{}", w);

  // Signals are taken by a thread of our own (sigwait), so stopping runs in normal code.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServerOptions options{
      .bind_host = opt.bind_host,
      // --threads wins over TW_NUM_THREADS
      .num_threads = opt.threads > 0 ? opt.threads : runtime.num_threads,
      .tls = *tls,
      .allowed_directories =
          opt.allowed_dirs.empty() ? runtime.allowed_directories : opt.allowed_dirs,
      .shared_memory = runtime.shared_memory,
      .chunk_sockets = runtime.chunk_sockets,
      .buffer_pool_mb = runtime.buffer_pool_mb,
      // --metrics-port wins over TW_METRICS_PORT
      .metrics_port = opt.metrics_port != -2 ? opt.metrics_port : runtime.metrics_port};
  for (const auto& [flag, text, field] :
       {std::tuple{"--stop-when-chief-unreachable", &opt.stop_when_chief_unreachable,
                   &options.stop_when_chief_unreachable},
        std::tuple{"--wait-for-cluster", &opt.wait_for_cluster, &options.wait_for_cluster}}) {
    if (text->empty()) continue;
    StatusOr<absl::Duration> d = PositiveDuration(flag, *text);
    if (!d.ok()) {
      std::cerr << "tw server: " << d.status().message() << "\n";
      return 1;
    }
    *field = *d;
  }
  StatusOr<std::unique_ptr<Server>> server =
      config->is_local()
          ? Server::CreateLocal(options)
          : Server::Create(config->cluster(), config->task_type(), config->task_index(), options);
  if (!server.ok()) {
    std::cerr << "tw server: " << server.status().message() << "\n";
    return 1;
  }
  if (Status s = (*server)->Start(); !s.ok()) {
    std::cerr << "tw server: " << s.message() << "\n";
    return kExitCannotListen;
  }
  // The address really bound: --bind-host and a local task's 127.0.0.1 differ from the
  // bind address the cluster configuration alone suggests.
  Log().info("tw server: {} serving at {}", config->Summary((*server)->listen_address()),
             (*server)->target());
  if (const std::string metrics = (*server)->metrics_address(); !metrics.empty()) {
    Log().info("tw server: metrics at http://{}/metrics", metrics);
  }
  Server* raw = server->get();
  std::atomic<bool> joined{false};
  std::atomic<int> stopped_by_signal{0};
  std::thread stopper([raw, stop_signals, &joined, &stopped_by_signal] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (!joined) {
      Log().info("tw server: signal {}, stopping", sig);
      stopped_by_signal = sig;
    }
    raw->Stop();  // a no-op when the server has stopped already
  });
  raw->Join();
  joined = true;
  // Join also returns when another task stopped the cluster: wake the signal thread.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return ExitCode(raw->stats().stop_reason, stopped_by_signal);
}

}  // namespace

void AddServerCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<ServerCommandOptions>();
  CLI::App* cmd = app.add_subcommand("server", "Run one task's standard server");
  cmd->allow_extras();
  cmd->add_option("--bind-host", opt->bind_host, "Host to listen on (the port is the task's)")
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads,
                  "Compute threads, 0 to " + std::to_string(kMaxComputeThreads) +
                      "; 0 means TW_NUM_THREADS, else one per core");
  cmd->add_option("--tls-ca", opt->tls_ca,
                  "Mutual TLS: PEM certificate of the cluster CA (with --tls-cert, --tls-key)");
  cmd->add_option("--tls-cert", opt->tls_cert,
                  "Mutual TLS: PEM certificate of this task, signed by the cluster CA");
  cmd->add_option("--tls-key", opt->tls_key, "Mutual TLS: PEM private key of --tls-cert");
  cmd->add_option("--tls-server-name", opt->tls_server_name,
                  "Mutual TLS: name every peer's certificate carries, checked instead of the "
                  "host of its address");
  cmd->add_option("--metrics-port", opt->metrics_port,
                  "Serve Prometheus metrics at http://<bind-host>:PORT/metrics (0: any free "
                  "port, -1: none). Default: TW_METRICS_PORT, else none")
      ->check(CLI::Range(-1, 65535));
  cmd->add_option("--allowed-dir", opt->allowed_dirs,
                  "A directory graphs may read and write files in (checkpoints); repeat for "
                  "several. Default: those TW_ALLOWED_DIRECTORIES lists (':'-separated), else "
                  "none, so checkpoint ops sent to this task are refused")
      ->type_name("DIR")
      ->allow_extra_args(false);
  cmd->add_option("--stop-when-chief-unreachable", opt->stop_when_chief_unreachable,
                  "Stop (exit 0) once the chief, seen before, has not answered for this long "
                  "(say 30s); default never");
  cmd->add_option("--wait-for-cluster", opt->wait_for_cluster,
                  "How long a session created on this task waits for the tasks it needs before "
                  "failing (say 30s); default 5m");
  cmd->footer(
      "The role comes from the cluster flags (see tw cluster --help) or TF_CONFIG.\n"
      "Examples:\n"
      "  tw server --ps_hosts=localhost:2222 --worker_hosts=localhost:2223 --job_name=ps "
      "--task_index=0\n"
      "  TF_CONFIG='{\"cluster\":{\"ps\":[\"ps-0:2222\"]},\"task\":{\"type\":\"ps\",\"index\":0}}' "
      "tw server\n"
      "Mutual TLS (see docs/security.md):\n"
      "  tw server --tls-ca=ca.pem --tls-cert=task.pem --tls-key=task.key ...\n"
      "Checkpoints (the ps tasks and the chief write them):\n"
      "  tw server --allowed-dir=/shared/ckpt ...\n"
      "Stops cleanly on SIGTERM or SIGINT, when another task asks the cluster to stop\n"
      "(Server::StopCluster), or when the chief is gone (--stop-when-chief-unreachable).\n"
      "Exit codes (for TFJob's ExitCode restart policy: 1-127 permanent, 128-255 retried):\n"
      "  0    the cluster was stopped by one of its tasks: the job is done\n"
      "  1    bad configuration (flags, TF_CONFIG, TLS files): retrying cannot help\n"
      "  143, 130  stopped by SIGTERM, SIGINT (a drained node, an evicted pod): retried\n"
      "  200  the port could not be bound: retried\n"
      "  201  the chief did not answer for --stop-when-chief-unreachable: retried\n"
      "See docs/kubernetes.md.");
  cmd->callback([cmd, opt, exit_code] { *exit_code = RunServer(*opt, cmd->remaining()); });
}

}  // namespace tw::tools
