// Kernels that only move elements (Transpose, Tile, BroadcastTo, Split, ReverseV2) are
// written once per element *size*, not per dtype: numeric and bool elements are plain bytes,
// so a float and an int32 move alike as a 4-byte word. Strings and resource handles are
// objects and move with their own assignment.
#ifndef TENSORWEAVE_SRC_OPS_ELEMENT_MOVE_H_
#define TENSORWEAVE_SRC_OPS_ELEMENT_MOVE_H_

#include <cstdint>
#include <string>

#include "src/framework/op_kernel.h"

namespace tw::internal {

// A 16-byte element (complex128) moved as one value.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls fn.template operator()<M>() with M a type of the element size of `dtype` (for
// trivial dtypes) or the element type itself (string, resource). Returns false for a dtype
// of no known size (DT_INVALID), which op definitions never let through.
template <typename Fn>
bool DispatchMove(DataType dtype, Fn&& fn) {
  if (dtype == DT_STRING) return fn.template operator()<std::string>(), true;
  if (dtype == DT_RESOURCE) return fn.template operator()<ResourceHandle>(), true;
  switch (DataTypeSize(dtype)) {
    case 1:
      return fn.template operator()<uint8_t>(), true;
    case 2:
      return fn.template operator()<uint16_t>(), true;
    case 4:
      return fn.template operator()<uint32_t>(), true;
    case 8:
      return fn.template operator()<uint64_t>(), true;
    case 16:
      return fn.template operator()<Bytes16>(), true;
    default:
      return false;
  }
}

template <typename M>
const M* Elements(const Tensor& t) {
  return static_cast<const M*>(t.raw_data());
}
template <typename M>
M* Elements(Tensor* t) {
  return static_cast<M*>(t->raw_data());
}

}  // namespace tw::internal

#endif  // TENSORWEAVE_SRC_OPS_ELEMENT_MOVE_H_
