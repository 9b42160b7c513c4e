#include "src/framework/resource_lookup.h"

namespace tw {

StatusOr<const ResourceHandle*> ValidateResourceHandle(const OpKernelContext& ctx,
                                                       const Tensor& handle,
                                                       const char* type_name) {
  if (handle.dtype() != DT_RESOURCE || handle.num_elements() != 1) {
    return errors::InvalidArgument("Expected one resource handle, got ", handle.DebugString());
  }
  const ResourceHandle& h = handle.flat<ResourceHandle>()[0];
  if (h.device != ctx.device()->name()) {
    return errors::InvalidArgument("Trying to access resource ", h.name, " located in device ",
                                   h.device, " from device ", ctx.device()->name());
  }
  if (h.type != type_name) {
    return errors::InvalidArgument("Trying to access resource using the wrong type. Expected ",
                                   std::string(type_name), " got ", h.type);
  }
  return &h;
}

}  // namespace tw
