// `tw config`: writes one sourceable config_<job>_<index>.sh per task, each exporting the
// TF_CONFIG of that task of a cluster on one host (the seeds' make_configs script).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/ascii.h"
#include "nlohmann/json.hpp"
#include "src/base/json.h"
#include "src/cluster/cluster_json.h"
#include "src/cluster/job_counts.h"
#include "tools/commands.h"

namespace tw::tools {
namespace {

struct ConfigOptions {
  std::string cluster;
  std::string host = "localhost";
  int base_port = 2222;
  std::string out;
  bool force = false;
};

// The value goes between single quotes in a shell script, so only host-name characters.
Status CheckHost(const std::string& host) {
  if (host.empty()) return errors::InvalidArgument("--host is empty");
  for (char c : host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != ':') {
      return errors::InvalidArgument("--host \"", host,
                                     "\" may only contain letters, digits, "
                                     "'.', '-' and ':'");
    }
  }
  return OkStatus();
}

Status WriteConfigs(const ConfigOptions& opt) {
  TW_RETURN_IF_ERROR(CheckHost(opt.host));
  auto counts = ParseJobCounts(opt.cluster);
  if (!counts.ok()) return errors::Annotate(counts.status(), "--cluster: ");
  TW_ASSIGN_OR_RETURN(ClusterSpec cluster, MakeClusterOnHost(*counts, opt.host, opt.base_port));
  namespace fs = std::filesystem;
  const fs::path dir(opt.out);

  struct Script {
    fs::path path;
    std::string text;
  };
  std::vector<Script> scripts;
  const nlohmann::json cluster_json = ClusterSpecToJsonValue(cluster, /*always_objects=*/false);
  for (const JobCount& c : *counts) {
    for (int i = 0; i < c.tasks; ++i) {
      nlohmann::json tf_config = {{"cluster", cluster_json},
                                  {"task", {{"type", c.job}, {"index", i}}}};
      scripts.push_back({dir / ("config_" + c.job + "_" + std::to_string(i) + ".sh"),
                         "# TF_CONFIG for task " + c.job + ":" + std::to_string(i) +
                             " of the cluster " + opt.cluster + "; source this file.\n" +
                             "export TF_CONFIG='" + DumpJson(tf_config, 2) + "'\n"});
    }
  }
  std::error_code ec;
  // Check every file before writing any, so a refusal leaves the directory as it was.
  for (const Script& s : scripts) {
    if (!opt.force && fs::exists(s.path, ec)) {
      return errors::AlreadyExists(s.path.string(), " exists; pass --force to overwrite");
    }
  }
  fs::create_directories(dir, ec);
  if (ec) return errors::PermissionDenied("cannot create ", dir.string(), ": ", ec.message());
  for (const Script& s : scripts) {
    std::ofstream file(s.path, std::ios::trunc);
    file << s.text;
    file.close();
    if (!file) return errors::PermissionDenied("cannot write ", s.path.string());
    std::cout << "wrote " << s.path.string() << "\n";
  }
  return OkStatus();
}

}  // namespace

void AddConfigCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<ConfigOptions>();
  CLI::App* cmd = app.add_subcommand(
      "config", "Write a sourceable TF_CONFIG script for every task of a cluster on one host");
  cmd->add_option("--cluster", opt->cluster,
                  "Jobs and their task counts, e.g. files=1,reduce=1,map=2")
      ->required();
  cmd->add_option("--host", opt->host, "Host name in every address")->capture_default_str();
  cmd->add_option("--base-port", opt->base_port,
                  "Port of the first task; the others follow in order")
      ->capture_default_str();
  cmd->add_option("--out", opt->out, "Directory for config_<job>_<index>.sh")->required();
  cmd->add_flag("--force", opt->force, "Overwrite existing scripts");
  cmd->footer(
      "Example:\n"
      "  tw config --cluster files=1,reduce=1,map=2 --out configs\n"
      "  source configs/config_map_0.sh   # in the shell that runs map task 0");
  cmd->callback([opt, exit_code] {
    Status s = WriteConfigs(*opt);
    if (!s.ok()) {
      std::cerr << "tw config: " << s.message() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace tw::tools
