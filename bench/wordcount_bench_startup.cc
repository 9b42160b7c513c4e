// Cluster start-up probe for bench/wordcount_bench.sh: every task of a `tw launch` cluster
// runs it (e.g. --cluster ps=1,worker=8). worker:0, the chief, creates a session that needs
// every task, runs one step that touches every task, prints
//   all N tasks ready at UNIX_NANOSECONDS
// and stops the cluster with Server::StopCluster; every other task serves until then and
// exits 0. The script subtracts the time it started `tw launch` from the printed time.
#include <stdio.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "tensorweave/tensorweave.h"

namespace {

int Fail(const tw::Status& s) {
  fprintf(stderr, "wordcount_bench_startup: %s\n", std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto config = tw::RunConfig::FromEnvironment(argc, argv);
  if (!config.ok()) return Fail(config.status());
  if (config->is_local()) {
    return Fail(tw::errors::InvalidArgument(
        "run it under tw launch, e.g. tw launch --cluster ps=1,worker=8 -- ", argv[0]));
  }
  const tw::RuntimeSettings& runtime = config->runtime_settings();  // TW_NUM_THREADS, ...
  auto server = tw::Server::Create(config->cluster(), config->task_type(), config->task_index(),
                                   {.bind_host = "127.0.0.1",
                                    .num_threads = runtime.num_threads,
                                    .shared_memory = runtime.shared_memory,
                                    .buffer_pool_mb = runtime.buffer_pool_mb});
  if (!server.ok()) return Fail(server.status());
  if (tw::Status s = (*server)->Start(); !s.ok()) return Fail(s);
  if (!config->is_chief()) {
    (*server)->Join();  // until the chief's StopCluster
    return 0;
  }

  tw::Scope root = tw::Scope::NewRootScope();
  std::vector<tw::Output> touches;
  int tasks = 0;
  for (const auto& [job, indices] : config->cluster().job_map()) {
    for (const auto& [index, address] : indices) {
      const std::string device = "/job:" + job + "/task:" + std::to_string(index);
      touches.push_back(tw::ops::Identity(root.WithDevice(device), index));
      ++tasks;
    }
  }
  // No device filters: the session waits for every task.
  tw::ClientSession session(root, {.target = (*server)->target()});
  auto out = session.Run({}, touches);
  if (!out.ok()) return Fail(out.status());
  printf("all %d tasks ready at %lld\n", tasks,
         static_cast<long long>(absl::ToUnixNanos(absl::Now())));
  fflush(stdout);
  if (tw::Status s = (*server)->StopCluster(); !s.ok()) return Fail(s);
  return 0;
}
