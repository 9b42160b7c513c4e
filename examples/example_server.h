// What the examples share about starting their task's server.
#ifndef TENSORWEAVE_EXAMPLES_EXAMPLE_SERVER_H_
#define TENSORWEAVE_EXAMPLES_EXAMPLE_SERVER_H_

#include <string>

#include "tensorweave/tensorweave.h"

namespace tw::examples {

// Server options for task `job`:`index` of `cluster`: under tw launch every address is on
// this machine, and then the server listens on loopback only. `runtime` is what the
// environment says (RunConfig::runtime_settings(): TW_NUM_THREADS, which tw launch sets to
// each task's share of the cores, TW_SHARED_MEMORY, TW_BUFFER_POOL_MB).
inline ServerOptions ExampleServerOptions(const ClusterSpec& cluster, const std::string& job,
                                          int index, const RuntimeSettings& runtime) {
  ServerOptions options{.num_threads = runtime.num_threads,
                        .shared_memory = runtime.shared_memory,
                        .buffer_pool_mb = runtime.buffer_pool_mb};
  auto own = cluster.task_address(job, index);
  if (own.ok()) {
    const size_t colon = own->rfind(':');
    const std::string host = colon == std::string::npos ? *own : own->substr(0, colon);
    if (host == "localhost" || host.rfind("127.", 0) == 0) options.bind_host = "127.0.0.1";
  }
  return options;
}

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_EXAMPLE_SERVER_H_
