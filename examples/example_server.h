// What the examples share about starting their task's server.
#ifndef TENSORWEAVE_EXAMPLES_EXAMPLE_SERVER_H_
#define TENSORWEAVE_EXAMPLES_EXAMPLE_SERVER_H_

#include <string>

#include "tensorweave/tensorweave.h"

namespace tw::examples {

// Server options for task `job`:`index` of `cluster`: under tw launch every address is on
// this machine, and then the server listens on loopback only. `runtime` is what the
// environment says (RunConfig::runtime_settings(): TW_NUM_THREADS, which tw launch sets to
// each task's share of the cores, TW_SHARED_MEMORY, TW_CHUNK_SOCKETS, TW_BUFFER_POOL_MB,
// TW_METRICS_PORT).
inline ServerOptions ExampleServerOptions(const ClusterSpec& cluster, const std::string& job,
                                          int index, const RuntimeSettings& runtime) {
  ServerOptions options{.num_threads = runtime.num_threads,
                        .shared_memory = runtime.shared_memory,
                        .chunk_sockets = runtime.chunk_sockets,
                        .buffer_pool_mb = runtime.buffer_pool_mb,
                        .metrics_port = runtime.metrics_port};
  auto own = cluster.task_address(job, index);
  if (own.ok()) {
    const size_t colon = own->rfind(':');
    const std::string host = colon == std::string::npos ? *own : own->substr(0, colon);
    if (host == "localhost" || host.rfind("127.", 0) == 0) options.bind_host = "127.0.0.1";
  }
  return options;
}

// The mutual TLS of an example's server and sessions, from its --tls_ca, --tls_cert,
// --tls_key and --tls_server_name flags (tensorweave/tls.h): none when all four are empty.
// InvalidArgument naming the flag that is missing, or the file that cannot be used.
inline StatusOr<TlsOptions> ExampleTls(const std::string& ca, const std::string& cert,
                                       const std::string& key, const std::string& server_name) {
  if (ca.empty() && cert.empty() && key.empty() && server_name.empty()) return TlsOptions{};
  for (const auto& [flag, value] :
       {std::pair{"--tls_ca", &ca}, {"--tls_cert", &cert}, {"--tls_key", &key}}) {
    if (value->empty()) {
      return errors::InvalidArgument(
          flag, " is missing: mutual TLS needs --tls_ca, --tls_cert and --tls_key together");
    }
  }
  TW_ASSIGN_OR_RETURN(TlsOptions tls, LoadTlsFiles(ca, cert, key));
  tls.server_name = server_name;
  return tls;
}

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_EXAMPLE_SERVER_H_
