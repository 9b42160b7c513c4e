// LookupResource: the one way a kernel turns a resource handle it was given (an input: from
// a creating op, a feed or a constant, so from the network) into the object it names.
#ifndef TENSORWEAVE_SRC_FRAMEWORK_RESOURCE_LOOKUP_H_
#define TENSORWEAVE_SRC_FRAMEWORK_RESOURCE_LOOKUP_H_

#include <memory>

#include "src/framework/op_kernel.h"
#include "src/framework/resource_mgr.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw {

// Checks that `handle` is one resource handle of kind `type_name` ("Variable", ...) on the
// kernel's device, and returns it. InvalidArgument otherwise, with TensorFlow's messages:
//   "Expected one resource handle, got ..."
//   "Trying to access resource NAME located in device D from device E"
//   "Trying to access resource using the wrong type. Expected T got U"
// A handle is data a client can forge, so nothing it says is trusted before these checks.
StatusOr<const ResourceHandle*> ValidateResourceHandle(const OpKernelContext& ctx,
                                                       const Tensor& handle, const char* type_name);

// The resource of kind T that `handle` names on the kernel's device: InvalidArgument as
// above, NotFound naming the resource when it does not exist (callers that owe their users
// TensorFlow's wording for a missing resource, such as "uninitialized value", map it).
template <typename T>
StatusOr<std::shared_ptr<T>> LookupResource(const OpKernelContext& ctx, const Tensor& handle) {
  TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ValidateResourceHandle(ctx, handle, T::kTypeName));
  return ctx.resource_manager()->Lookup<T>(h->container, h->name);
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_FRAMEWORK_RESOURCE_LOOKUP_H_
