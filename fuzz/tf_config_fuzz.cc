// Fuzzes cluster configuration: any bytes as TF_CONFIG, and as --cluster and
// --worker_hosts flag values, must give a RunConfig or an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tensorweave/run_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto from_env = tw::RunConfig::Resolve({}, text);
  if (from_env.ok()) {
    // Everything derived must be printable without trouble.
    (void)from_env->ToJson();
    (void)from_env->Summary();
  }
  (void)tw::RunConfig::Resolve({"--cluster=" + text, "--job_name=worker"}, std::nullopt);
  (void)tw::RunConfig::Resolve({"--worker_hosts", text, "--task_index=0"}, std::nullopt);
  (void)tw::RunConfig::Resolve({"--cluster_spec=" + text}, std::nullopt);
  return 0;
}
