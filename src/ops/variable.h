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

  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }

  absl::Mutex* mu() ABSL_LOCK_RETURNED(mu_) { return &mu_; }
  // The value; only meaningful when initialized(). Updated in place by AssignAdd and the
  // scatter ops, so readers copy it under the lock.
  Tensor* value() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return &value_; }
  bool initialized() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return value_.IsInitialized(); }

 private:
  const std::string name_;
  const DataType dtype_;
  const PartialShape shape_;
  absl::Mutex mu_;
  Tensor value_ ABSL_GUARDED_BY(mu_);
};

// Finds the variable a DT_RESOURCE handle names on the kernel's device.
StatusOr<std::shared_ptr<VariableResource>> LookupVariable(OpKernelContext* ctx,
                                                           const Tensor& handle);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_VARIABLE_H_
