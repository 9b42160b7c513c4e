// Kubernetes' rules for names and quantities, as the TFJob manifest builder checks them.
#ifndef TENSORWEAVE_TOOLS_K8S_K8S_NAMES_H_
#define TENSORWEAVE_TOOLS_K8S_K8S_NAMES_H_

#include <cstddef>
#include <set>
#include <string_view>

namespace tw::tools::k8s {

// Kubernetes names: Services must be DNS-1035 labels, and the operator names each task's
// pod and Service `<job name>-<replica type>-<index>`.
inline constexpr size_t kMaxLabelLength = 63;

inline bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters: namespaces.
inline bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelLength) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// The same starting with a letter: names of Services (and so of TFJobs).
inline bool IsDns1035Label(std::string_view s) {
  return IsDns1123Label(s) && s[0] >= 'a' && s[0] <= 'z';
}

// Kubernetes' env var name rule: [-._a-zA-Z][-._a-zA-Z0-9]*.
inline bool IsEnvName(std::string_view s) {
  if (s.empty() || IsDigit(s[0])) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '-' ||
                    c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// A resource.Quantity without a sign: "2", "0.5", "500m", "4Gi", "1e3".
inline bool IsQuantity(std::string_view s) {
  size_t i = 0;
  size_t digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  const std::string_view suffix = s.substr(i);
  static const std::set<std::string_view> kSuffixes = {
      "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (kSuffixes.contains(suffix)) return true;
  if (suffix[0] != 'e' && suffix[0] != 'E') return false;
  size_t j = 1;
  if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) ++j;
  if (j == suffix.size()) return false;
  for (; j < suffix.size(); ++j) {
    if (!IsDigit(suffix[j])) return false;
  }
  return true;
}

}  // namespace tw::tools::k8s

#endif  // TENSORWEAVE_TOOLS_K8S_K8S_NAMES_H_
