// Checks of the `container` and `shared_name` attributes that every stateful op holding a
// resource (Variable, FIFOQueue, ConditionalAccumulator) carries, so that all of them accept
// and refuse the same names, as TensorFlow's ContainerInfo does for all its resources.
#ifndef TENSORWEAVE_SRC_OPS_RESOURCE_ATTRS_H_
#define TENSORWEAVE_SRC_OPS_RESOURCE_ATTRS_H_

#include <string>

#include "src/framework/op_kernel.h"
#include "tensorweave/status.h"

namespace tw {

// OK for "" (the device's default container) and for names matching TensorFlow's
// [A-Za-z0-9.][A-Za-z0-9_.\-/]*; otherwise InvalidArgument
// `container "<container>" contains invalid characters`. Names starting with '_', '-' or
// '/' are refused like TensorFlow refuses them, so that no graph can name the containers
// the runtime keeps for itself.
Status ValidateContainerAttr(const std::string& container);

// OK unless `shared_name` starts with '_' (reserved for the names the runtime makes for
// private resources, "_<session>_<node>"): InvalidArgument
// `shared_name "<shared_name>" must not start with '_'`.
Status ValidateSharedNameAttr(const std::string& shared_name);

// Where the resource of an op that makes one (a queue, a reader, an iterator) lives: its
// `container` and `shared_name` attributes, read and checked when the kernel is made.
struct ResourceLocation {
  // Reads both attributes; their errors, or the checks' above.
  Status Init(OpKernelConstruction* c);
  // The container: the attribute, or the device's default for "".
  std::string Container(OpKernelContext* ctx) const;
  // The name: shared_name, or "_<session>_<node>" for a resource private to the session
  // (one per session and node, whichever steps use it).
  std::string Name(OpKernelContext* ctx, const std::string& node) const;

  std::string container, shared_name;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_RESOURCE_ATTRS_H_
