// ResourceMgr: the stateful objects (variables, queues) of one device, found by
// (container, type, name) so that every graph and session that names them shares them.
#ifndef TENSORWEAVE_SRC_FRAMEWORK_RESOURCE_MGR_H_
#define TENSORWEAVE_SRC_FRAMEWORK_RESOURCE_MGR_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tensorweave/status.h"

namespace tw {

// Base of every resource. Resources are shared with shared_ptr: a kernel that holds one
// keeps it alive even if its container is cleared meanwhile.
class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  // "Variable", "FIFOQueue", ...: part of the lookup key.
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const { return TypeName(); }

  // What the resource shows on its task's metrics endpoint (a queue's size, a variable's
  // bytes), labelled there with its container and name; nullopt for nothing.
  struct Gauge {
    const char* name;  // a Prometheus metric name, "tw_queue_size"
    const char* help;
    double value;
  };
  virtual std::optional<Gauge> MetricsGauge() const { return std::nullopt; }

  // Called when the device holding the resource is about to go, while the device's
  // compute pool still runs: a resource whose own threads run work on that pool (a
  // tf.data pipeline's map functions) ends that work here, so that the pool can be joined
  // without it. The resource is only destroyed afterwards.
  virtual void StopWorkOnDevice() {}
};

// Thread-safe. Creation runs outside the lock, so a creator may take time; if two threads
// create the same resource at once, one result wins and both callers get it.
class ResourceMgr {
 public:
  explicit ResourceMgr(std::string default_container)
      : default_container_(std::move(default_container)) {}

  const std::string& default_container() const { return default_container_; }

  // Looks up (container, T's type, name), creating it with `create` if absent. An empty
  // container means the default one.
  template <typename T>
  StatusOr<std::shared_ptr<T>> LookupOrCreate(
      const std::string& container, const std::string& name,
      const std::function<StatusOr<std::shared_ptr<T>>()>& create);

  // The resource (container, T's type, name); NotFound naming it when absent. The type comes
  // from T, never from a caller's string: a resource is only ever cast to its own class.
  template <typename T>
  StatusOr<std::shared_ptr<T>> Lookup(const std::string& container, const std::string& name) const;

  // Destroys every resource of the containers (all of them when `containers` is empty; ""
  // is the default container). Unknown containers are ignored.
  void Clear(const std::vector<std::string>& containers);

  // Calls StopWorkOnDevice on every resource, outside the lock (the device is going).
  void StopWorkOnDevice();

  // Number of resources held, for tests and debugging.
  size_t size() const;
  // Calls `fn(container, name, resource)` for each resource, in key order, under the lock:
  // `fn` must not call back into this ResourceMgr.
  void ForEach(const std::function<void(const std::string&, const std::string&,
                                        const ResourceBase&)>& fn) const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // container, type, name
  std::shared_ptr<ResourceBase> Find(const Key& key) const;
  std::shared_ptr<ResourceBase> Insert(const Key& key, std::shared_ptr<ResourceBase> r);
  std::string Container(const std::string& c) const { return c.empty() ? default_container_ : c; }

  const std::string default_container_;
  mutable absl::Mutex mu_;
  std::map<Key, std::shared_ptr<ResourceBase>> resources_ ABSL_GUARDED_BY(mu_);
};

template <typename T>
StatusOr<std::shared_ptr<T>> ResourceMgr::LookupOrCreate(
    const std::string& container, const std::string& name,
    const std::function<StatusOr<std::shared_ptr<T>>()>& create) {
  const Key key{Container(container), T::kTypeName, name};
  if (auto found = Find(key)) return std::static_pointer_cast<T>(found);
  TW_ASSIGN_OR_RETURN(std::shared_ptr<T> created, create());
  return std::static_pointer_cast<T>(Insert(key, std::move(created)));
}

template <typename T>
StatusOr<std::shared_ptr<T>> ResourceMgr::Lookup(const std::string& container,
                                                 const std::string& name) const {
  auto found = Find(Key{Container(container), T::kTypeName, name});
  if (found == nullptr) {
    return errors::NotFound("Resource ", Container(container), "/", std::string(T::kTypeName), "/",
                            name, " does not exist");
  }
  return std::static_pointer_cast<T>(found);
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_FRAMEWORK_RESOURCE_MGR_H_
