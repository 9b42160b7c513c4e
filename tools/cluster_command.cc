// `tw cluster`: resolves this process's cluster configuration exactly as a tensorweave
// program would, and prints it as one JSON object.
#include <iostream>

#include "src/base/logging.h"
#include "tensorweave/run_config.h"
#include "tools/commands.h"

namespace tw::tools {

void AddClusterCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "cluster", "Resolve this process's role from flags and TF_CONFIG; print it as JSON");
  cmd->allow_extras();
  cmd->footer(
      "Cluster flags (they win over TF_CONFIG, which wins over the local default):\n"
      "  --<job>_hosts=HOST:PORT,...   tasks of any job, e.g. --ps_hosts=a:2222 "
      "--worker_hosts=b:2222,c:2222\n"
      "  --cluster='<json>'            {\"ps\": [\"a:2222\"], \"worker\": {\"0\": \"b:2222\"}}\n"
      "  --cluster_spec='ps|a:1;a:2,worker|b:1'   TensorFlow's std-server form\n"
      "  --job_name=NAME               this task's job\n"
      "  --task_index=N                this task's index (also --task_id)\n\n"
      "Examples:\n"
      "  TF_CONFIG='{\"cluster\":{\"ps\":[\"ps-0:2222\"],\"worker\":[\"w-0:2222\"]},"
      "\"task\":{\"type\":\"worker\",\"index\":0}}' tw cluster\n"
      "  tw cluster --ps_hosts=localhost:2222 --worker_hosts=localhost:2223 --job_name=worker "
      "--task_index=0\n\n"
      "Output fields: source (flags|TF_CONFIG|default), cluster, task, is_chief, chief_job,\n"
      "num_workers, num_ps, target, session_master, bind_address, device_filters, environment,\n"
      "rpc_layer.\n"
      "Bad input prints one line on stderr and exits 1.");
  cmd->callback([cmd, exit_code] {
    auto config = RunConfig::ResolveFromEnvironment(cmd->remaining());
    if (!config.ok()) {
      std::cerr << "tw cluster: " << config.status().message() << "\n";
      *exit_code = 1;
      return;
    }
    if (!config->unused_args().empty()) {
      std::cerr << "tw cluster: unknown argument \"" << config->unused_args().front()
                << "\"; see tw cluster --help\n";
      *exit_code = 1;
      return;
    }
    for (const std::string& w : config->warnings()) Log().warn("{}", w);
    std::cout << config->ToJson(2) << "\n";
  });
}

}  // namespace tw::tools
