// Test helper for the manifests `tw k8s` prints: a YAML map's keys and a sequence's strings,
// in document order.
#ifndef TENSORWEAVE_TOOLS_K8S_YAML_TEST_UTIL_H_
#define TENSORWEAVE_TOOLS_K8S_YAML_TEST_UTIL_H_

#include <string>
#include <vector>

#include "yaml-cpp/yaml.h"

namespace tw::tools {

inline std::vector<std::string> Keys(const YAML::Node& map) {
  std::vector<std::string> keys;
  for (const auto& kv : map) keys.push_back(kv.first.as<std::string>());
  return keys;
}

inline std::vector<std::string> Strings(const YAML::Node& seq) {
  std::vector<std::string> out;
  for (const auto& item : seq) out.push_back(item.as<std::string>());
  return out;
}

}  // namespace tw::tools

#endif  // TENSORWEAVE_TOOLS_K8S_YAML_TEST_UTIL_H_
