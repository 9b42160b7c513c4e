#include "src/framework/resource_mgr.h"

#include <algorithm>

namespace tw {

std::shared_ptr<ResourceBase> ResourceMgr::Find(const Key& key) const {
  absl::MutexLock lock(&mu_);
  auto it = resources_.find(key);
  return it == resources_.end() ? nullptr : it->second;
}

std::shared_ptr<ResourceBase> ResourceMgr::Insert(const Key& key, std::shared_ptr<ResourceBase> r) {
  absl::MutexLock lock(&mu_);
  return resources_.emplace(key, std::move(r)).first->second;  // first creator wins
}

void ResourceMgr::Clear(const std::vector<std::string>& containers) {
  std::vector<std::string> named;  // "" is the default container, as for resource ops
  for (const std::string& c : containers) named.push_back(Container(c));
  std::vector<std::shared_ptr<ResourceBase>> doomed;  // destroyed after the lock is released
  absl::MutexLock lock(&mu_);
  for (auto it = resources_.begin(); it != resources_.end();) {
    const std::string& container = std::get<0>(it->first);
    if (named.empty() || std::find(named.begin(), named.end(), container) != named.end()) {
      doomed.push_back(std::move(it->second));
      it = resources_.erase(it);
    } else {
      ++it;
    }
  }
}

void ResourceMgr::StopWorkOnDevice() {
  std::vector<std::shared_ptr<ResourceBase>> all;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, resource] : resources_) all.push_back(resource);
  }
  for (const auto& r : all) r->StopWorkOnDevice();
}

size_t ResourceMgr::size() const {
  absl::MutexLock lock(&mu_);
  return resources_.size();
}

void ResourceMgr::ForEach(const std::function<void(const std::string&, const std::string&,
                                                   const ResourceBase&)>& fn) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [key, resource] : resources_) fn(std::get<0>(key), std::get<2>(key), *resource);
}

}  // namespace tw
