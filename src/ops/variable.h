// VariableResource: the value of one variable, held by a device's ResourceMgr.
#ifndef TENSORWEAVE_SRC_OPS_VARIABLE_H_
#define TENSORWEAVE_SRC_OPS_VARIABLE_H_

#include <string>

#include "absl/synchronization/mutex.h"
#include "src/framework/attr_value.h"
#include "src/framework/op_kernel.h"

namespace tw {

// Thread-safe: all access goes through mu().
class VariableResource : public ResourceBase {
 public:
  static constexpr char kTypeName[] = "Variable";

  VariableResource(std::string name, DataType dtype, PartialShape shape)
      : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {}

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override { return "Variable " + name_; }
  std::optional<Gauge> MetricsGauge() const override {
    absl::MutexLock lock(&mu_);
    return Gauge{"tw_variable_bytes", "Bytes of a variable's value (0 before it is initialized).",
                 static_cast<double>(value_.IsInitialized() ? value_.TotalBytes() : 0)};
  }

  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }

  absl::Mutex* mu() ABSL_LOCK_RETURNED(mu_) { return &mu_; }

  // The value; only meaningful when initialized().
  //
  // Copy on write: reads share the value's buffer (a snapshot costs no copy), and an update
  // in place first gives the variable a buffer of its own when a snapshot still holds the
  // current one. So a snapshot never changes, and a variable nobody has read since its last
  // update is updated without any copy. Every update in place must go through
  // mutable_value(); the buffer is only ever shared by tensors taken under the lock.
  const Tensor& value() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return value_; }
  // The value as a tensor of its own that later updates do not change.
  Tensor Snapshot() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return value_; }
  // The value, to be updated in place.
  Tensor* mutable_value() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (value_.BufferIsShared()) value_ = value_.Copy();
    return &value_;
  }
  // Replaces the value; `value` may be shared (a feed, a constant): it is copied before
  // the first update in place.
  void set_value(Tensor value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { value_ = std::move(value); }
  bool initialized() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return value_.IsInitialized(); }

 private:
  const std::string name_;
  const DataType dtype_;
  const PartialShape shape_;
  mutable absl::Mutex mu_;
  Tensor value_ ABSL_GUARDED_BY(mu_);
};

// Finds the variable a DT_RESOURCE handle names on the kernel's device.
StatusOr<std::shared_ptr<VariableResource>> LookupVariable(OpKernelContext* ctx,
                                                           const Tensor& handle);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_VARIABLE_H_
