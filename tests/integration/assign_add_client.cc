// A worker task for multiprocess_test: serves its task (role from TF_CONFIG), then runs
// `steps` AssignAdd steps of 1 on the int64 variable "total" of /job:ps/task:0 through a
// session on its own server, and exits 0 (1 on the first failed step, naming it).
//
//   TF_CONFIG=... assign_add_client STEPS
#include <cstdlib>
#include <iostream>

#include "tensorweave/ops.h"
#include "tensorweave/run_config.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: assign_add_client STEPS\n";
    return 1;
  }
  const int steps = std::atoi(argv[1]);
  const char* env = std::getenv("TF_CONFIG");
  auto config = tw::RunConfig::Resolve({}, env ? std::optional<std::string>(env) : std::nullopt);
  if (!config.ok()) {
    std::cerr << config.status() << "\n";
    return 1;
  }
  auto server = tw::Server::Create(config->cluster(), config->task_type(), config->task_index(),
                                   {.bind_host = "127.0.0.1", .num_threads = 1});
  if (!server.ok() || !(*server)->Start().ok()) {
    std::cerr << "cannot start the server\n";
    return 1;
  }
  tw::Scope root = tw::Scope::NewRootScope();
  auto total = tw::ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "total", tw::DT_INT64, {});
  auto add = tw::ops::AssignAdd(root, total, int64_t{1}, {.use_locking = true});
  tw::ClientSession session(
      root, {.target = (*server)->target(), .device_filters = config->device_filters()});
  for (int i = 0; i < steps; ++i) {
    if (auto s = session.Run({}, {}, {add.op()}); !s.ok()) {
      std::cerr << "step " << i << ": " << s.status() << "\n";
      return 1;
    }
  }
  return 0;
}
