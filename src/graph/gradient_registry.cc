#include "src/graph/gradient_registry.h"

#include <cstdio>
#include <cstdlib>

namespace tw {

GradientRegistry& GradientRegistry::Global() {
  static GradientRegistry* registry = new GradientRegistry();
  return *registry;
}

Status GradientRegistry::Register(std::string op, Entry entry) {
  absl::MutexLock lock(&mu_);
  if (entries_.count(op) > 0) {
    return errors::AlreadyExists("gradient of op ", op, " registered twice");
  }
  entries_.emplace(std::move(op), std::move(entry));
  return OkStatus();
}

std::optional<GradientRegistry::Entry> GradientRegistry::Find(std::string_view op) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(op);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> GradientRegistry::ListOps() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ops;
  for (const auto& [name, entry] : entries_) ops.push_back(name);
  return ops;
}

namespace internal {
GradientRegistrar::GradientRegistrar(const char* op, GradFunc fn, bool accepts_sparse) {
  Status s = GradientRegistry::Global().Register(op, {std::move(fn), accepts_sparse});
  if (!s.ok()) {
    std::fprintf(stderr, "tensorweave: bad gradient registration: %s\n",
                 std::string(s.message()).c_str());
    std::abort();
  }
}
}  // namespace internal

}  // namespace tw
