// `tw server`: runs one task's standard server, its role resolved from flags or TF_CONFIG
// like any tensorweave program; stops cleanly and exits 0 on SIGTERM or SIGINT.
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include "src/base/logging.h"
#include "tensorweave/run_config.h"
#include "tensorweave/server.h"
#include "tools/commands.h"

namespace tw::tools {
namespace {

struct ServerCommandOptions {
  std::string bind_host = "0.0.0.0";
  int threads = 0;
};

int RunServer(const ServerCommandOptions& opt, const std::vector<std::string>& args) {
  std::optional<std::string> tf_config;
  if (const char* env = std::getenv("TF_CONFIG"); env != nullptr) tf_config = env;
  auto config = RunConfig::Resolve(args, tf_config);
  if (!config.ok()) {
    std::cerr << "tw server: " << config.status().message() << "\n";
    return 1;
  }
  if (!config->unused_args().empty()) {
    std::cerr << "tw server: unknown argument \"" << config->unused_args().front() << "\"\n";
    return 1;
  }
  for (const std::string& w : config->warnings()) Log().warn("{}", w);

  // Signals are taken by a thread of our own (sigwait), so stopping runs in normal code.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServerOptions options{.bind_host = opt.bind_host, .num_threads = opt.threads};
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
    return 1;
  }
  Log().info("tw server: {} serving at {}", config->Summary(), (*server)->target());
  Server* raw = server->get();
  std::thread stopper([raw, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    Log().info("tw server: signal {}, stopping", sig);
    raw->Stop();
  });
  raw->Join();
  stopper.join();
  return 0;
}

}  // namespace

void AddServerCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<ServerCommandOptions>();
  CLI::App* cmd = app.add_subcommand("server", "Run one task's standard server");
  cmd->allow_extras();
  cmd->add_option("--bind-host", opt->bind_host, "Host to listen on (the port is the task's)")
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads, "Compute threads; 0 means one per core");
  cmd->footer(
      "The role comes from the cluster flags (see tw cluster --help) or TF_CONFIG.\n"
      "Examples:\n"
      "  tw server --ps_hosts=localhost:2222 --worker_hosts=localhost:2223 --job_name=ps "
      "--task_index=0\n"
      "  TF_CONFIG='{\"cluster\":{\"ps\":[\"ps-0:2222\"]},\"task\":{\"type\":\"ps\",\"index\":0}}' "
      "tw server\n"
      "Stops cleanly and exits 0 on SIGTERM or SIGINT.");
  cmd->callback([cmd, opt, exit_code] { *exit_code = RunServer(*opt, cmd->remaining()); });
}

}  // namespace tw::tools
