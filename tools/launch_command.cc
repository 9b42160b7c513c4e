// `tw launch`: runs a whole cluster on this machine, one process per task, each with the
// TF_CONFIG Kubeflow's TFJob would give it, and ends the job by TFJob's rules. The logic is
// in tools/launch/; this file turns flags into a plan and a supervisor. See docs/launch.md.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "src/cluster/host_port.h"
#include "src/cluster/job_counts.h"
#include "tools/commands.h"
#include "tools/launch/launch_plan.h"
#include "tools/launch/supervisor.h"

extern char** environ;

namespace tw::tools {
namespace {

struct LaunchFlags {
  std::string cluster;
  std::string cluster_json;
  std::string restart = "never";
  int max_restarts = 3;
  double restart_delay = 1.0;
  std::string success = "default";
  double grace = 10.0;
  std::string logs;
  std::string color = "auto";
  bool metrics = true;  // --no-metrics turns the tasks' metrics endpoints off
  std::vector<std::string> program;
};

StatusOr<std::chrono::milliseconds> Seconds(std::string_view flag, double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 86400) {
    return errors::InvalidArgument(flag, " must be a number of seconds from 0 to 86400, got ",
                                   seconds);
  }
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000)));
}

// Reads the cluster from --cluster or --cluster-json and gives every port-0 task a port.
StatusOr<ClusterSpec> BuildCluster(const LaunchFlags& flags, std::vector<std::string>* order) {
  if (!flags.cluster.empty()) {
    auto counts = ParseJobCounts(flags.cluster);
    if (!counts.ok()) return errors::Annotate(counts.status(), "--cluster: ");
    int64_t total = 0;
    for (const JobCount& c : *counts) {
      total += c.tasks;
      order->push_back(c.job);
    }
    TW_RETURN_IF_ERROR(launch::CheckLaunchTaskCount(total, "--cluster " + flags.cluster));
    TW_ASSIGN_OR_RETURN(std::vector<int> ports,
                        launch::PickFreeLoopbackPorts(static_cast<int>(total)));
    auto cluster = launch::MakeLocalCluster(*counts, ports);
    if (!cluster.ok()) return errors::Annotate(cluster.status(), "--cluster: ");
    return cluster;
  }
  // A cluster of kMaxLaunchTasks tasks takes far less; a larger file is refused unread.
  constexpr std::uintmax_t kMaxClusterJsonBytes = 4 << 20;
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(flags.cluster_json, ec);
  if (!ec && bytes > kMaxClusterJsonBytes) {
    return errors::InvalidArgument("--cluster-json ", flags.cluster_json, " has ", bytes,
                                   " bytes; at most ", kMaxClusterJsonBytes, " are read");
  }
  std::ifstream file(flags.cluster_json);
  if (!file.is_open()) return errors::NotFound("--cluster-json: cannot read ", flags.cluster_json);
  std::stringstream text;
  text << file.rdbuf();
  TW_ASSIGN_OR_RETURN(ClusterSpec cluster, launch::ParseLaunchClusterJson(
                                               text.str(), "--cluster-json " + flags.cluster_json));
  TW_ASSIGN_OR_RETURN(std::vector<int> ports,
                      launch::PickFreeLoopbackPorts(launch::NumZeroPorts(cluster)));
  return launch::FillZeroPorts(cluster, ports);
}

bool IsTerminal(int fd) {
  const char* term = std::getenv("TERM");
  return isatty(fd) == 1 && (term == nullptr || std::string_view(term) != "dumb");
}

StatusOr<int> RunLaunch(const LaunchFlags& flags) {
  if (flags.cluster.empty() == flags.cluster_json.empty()) {
    return errors::InvalidArgument(
        "give the cluster with exactly one of --cluster (e.g. ps=1,worker=2) or --cluster-json");
  }
  if (flags.program.empty()) {
    return errors::InvalidArgument(
        "no program to run; put it after --, e.g. tw launch --cluster worker=2 -- ./train");
  }
  launch::SupervisorOptions options;
  auto restart = launch::ParseRestartPolicy(flags.restart);
  if (!restart.ok()) return errors::Annotate(restart.status(), "--restart: ");
  options.restart = *restart;
  auto success = launch::ParseSuccessPolicy(flags.success);
  if (!success.ok()) return errors::Annotate(success.status(), "--success: ");
  options.success = *success;
  if (flags.max_restarts < 0) {
    return errors::InvalidArgument("--max-restarts must be >= 0, got ", flags.max_restarts);
  }
  options.max_restarts = flags.max_restarts;
  TW_ASSIGN_OR_RETURN(options.grace, Seconds("--grace", flags.grace));
  TW_ASSIGN_OR_RETURN(options.restart_delay, Seconds("--restart-delay", flags.restart_delay));
  if (flags.color != "auto" && flags.color != "always" && flags.color != "never") {
    return errors::InvalidArgument("--color: \"", flags.color,
                                   "\" is not one of auto, always, never");
  }

  const char* path = std::getenv("PATH");
  auto program = launch::FindProgram(flags.program[0], path != nullptr ? path : "/usr/bin:/bin");
  if (!program.ok()) return program.status();
  options.program_path = *program;
  options.argv = flags.program;

  std::vector<std::string> job_order;
  TW_ASSIGN_OR_RETURN(ClusterSpec cluster, BuildCluster(flags, &job_order));

  if (!flags.logs.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags.logs, ec);
    if (ec) {
      return errors::PermissionDenied("--logs: cannot create ", flags.logs, ": ", ec.message());
    }
    options.log_dir = flags.logs;
  }
  // NO_COLOR (no-color.org) turns off colour unless asked for explicitly.
  const bool no_color = std::getenv("NO_COLOR") != nullptr && *std::getenv("NO_COLOR") != '\0';
  const bool auto_color = flags.color == "auto" && !no_color;
  options.console.color_out = flags.color == "always" || (auto_color && IsTerminal(1));
  options.console.color_err = flags.color == "always" || (auto_color && IsTerminal(2));
  options.console.status_line = IsTerminal(2);

  std::vector<std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) base_env.emplace_back(*e);
  std::vector<launch::TaskLaunch> tasks;
  const std::vector<launch::TaskPlan> plans = launch::PlanTasks(cluster, job_order);
  const int threads = launch::ThreadsPerTask(static_cast<int>(std::thread::hardware_concurrency()),
                                             static_cast<int>(plans.size()));
  // Each task's metrics endpoint on a port of its own (TW_METRICS_PORT), unless turned off
  // or the environment already sets one.
  const bool metrics_given = std::getenv("TW_METRICS_PORT") != nullptr;
  std::vector<int> metrics_ports;
  if (flags.metrics && !metrics_given) {
    // The tasks' own ports were picked and let go before: the kernel may hand one out
    // again, so metrics ports that clash with them are picked anew.
    std::set<int> task_ports;
    for (const launch::TaskPlan& plan : plans) {
      if (auto hp = ParseHostPort(plan.address); hp.ok()) task_ports.insert(hp->port);
    }
    for (int attempt = 0; attempt < 10; ++attempt) {
      TW_ASSIGN_OR_RETURN(metrics_ports,
                          launch::PickFreeLoopbackPorts(static_cast<int>(plans.size())));
      if (std::none_of(metrics_ports.begin(), metrics_ports.end(),
                       [&](int port) { return task_ports.count(port) > 0; })) {
        break;
      }
    }
  }
  for (size_t i = 0; i < plans.size(); ++i) {
    const launch::TaskPlan& plan = plans[i];
    launch::TaskLaunch task{plan.id, plan.address,
                            launch::TaskEnvironment(base_env, plan.tf_config, threads)};
    if (!metrics_ports.empty()) {
      task.env.push_back("TW_METRICS_PORT=" + std::to_string(metrics_ports[i]));
      task.metrics_address = "127.0.0.1:" + std::to_string(metrics_ports[i]);
    }
    tasks.push_back(std::move(task));
  }
  {
    std::vector<launch::TaskId> ids;
    for (const launch::TaskPlan& plan : plans) ids.push_back(plan.id);
    TW_RETURN_IF_ERROR(
        errors::Annotate(launch::CheckSuccessRule(options.success, ids), "--success: "));
  }
  TW_ASSIGN_OR_RETURN(auto supervisor,
                      launch::Supervisor::Create(std::move(options), std::move(tasks)));
  TW_ASSIGN_OR_RETURN(launch::LaunchResult result, supervisor->Run());
  return result.exit_code;
}

}  // namespace

void AddLaunchCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<LaunchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "launch", "Run every task of a cluster on this machine, with TFJob's TF_CONFIG and rules");
  cmd->add_option("--cluster", flags->cluster,
                  "Jobs and their task counts, e.g. ps=1,worker=2 or chief=1,ps=2,worker=4")
      ->type_name("JOB=N,...");
  cmd->add_option("--cluster-json", flags->cluster_json,
                  "A JSON file with the cluster ({\"ps\": [\"localhost:0\"], ...}) or a whole "
                  "TF_CONFIG; port 0 gets a free port")
      ->type_name("FILE");
  cmd->add_option("--restart", flags->restart,
                  "never | on-failure | exit-code (1-127 permanent, 128-255 retried)")
      ->capture_default_str();
  cmd->add_option("--max-restarts", flags->max_restarts,
                  "Restarts allowed in the whole job (TFJob's backoffLimit)")
      ->capture_default_str();
  cmd->add_option("--restart-delay", flags->restart_delay, "Seconds before a restart")
      ->capture_default_str();
  cmd->add_option("--success", flags->success,
                  "default (chief:0, else worker:0, else every task exits 0) | all-workers | "
                  "a task JOB:INDEX (e.g. reduce:0)")
      ->capture_default_str();
  cmd->add_option("--grace", flags->grace, "Seconds between SIGTERM and SIGKILL when stopping")
      ->capture_default_str();
  cmd->add_option("--logs", flags->logs, "Directory for one <job>-<index>.log per task")
      ->type_name("DIR");
  cmd->add_option("--color", flags->color, "auto | always | never")->capture_default_str();
  cmd->add_flag("--metrics,!--no-metrics", flags->metrics,
                "Give every task a Prometheus endpoint (TW_METRICS_PORT, a free port each) and "
                "print their addresses; on unless TW_METRICS_PORT is set");
  // The program every task runs, and its arguments: the words after `--`, exactly as given
  // (GetProgramWords); any other word is a mistake, reported in the callback.
  cmd->allow_extras();
  cmd->footer(
      "Every task runs PROGRAM ARGS with TF_CONFIG set as Kubeflow's TFJob sets it\n"
      "({\"cluster\":...,\"task\":{\"type\":\"worker\",\"index\":1},\"environment\":\"cloud\"}), "
      "on free\nports of localhost. Its lines are shown as \"[worker:1] ...\".\n\n"
      "Examples:\n"
      "  tw launch --cluster ps=1,worker=2 -- ./train --steps 1000\n"
      "  tw launch --cluster files=1,reduce=1,map=2 --logs logs -- ./wordcount\n"
      "  tw launch --cluster chief=1,worker=2 --restart exit-code --max-restarts 5 -- ./train\n\n"
      "Exit code: 0 when the job succeeds; the exit code of the task that failed it (1 when\n"
      "a task could not be started); 130 after Ctrl-C, 143 after SIGTERM; 1 for bad flags.\n"
      "See docs/launch.md.");
  cmd->callback([cmd, flags, exit_code] {
    const std::vector<std::string> rest = cmd->remaining();
    if (!rest.empty()) {  // the program came without `--`
      std::cerr << "tw launch: put the program after --, e.g. tw launch --cluster worker=2 -- "
                << rest[0] << " ...\n";
      *exit_code = 1;
      return;
    }
    flags->program = GetProgramWords().words;
    StatusOr<int> code = RunLaunch(*flags);
    if (!code.ok()) {
      std::cerr << "tw launch: " << code.status().message() << "\n";
      *exit_code = 1;
      return;
    }
    *exit_code = *code;
  });
}

}  // namespace tw::tools
