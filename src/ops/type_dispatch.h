// Picking a kernel's C++ element type from a DataType at run time. Kernels are registered
// per op, not per type, so each one dispatches on the dtype of its inputs.
#ifndef TENSORWEAVE_SRC_OPS_TYPE_DISPATCH_H_
#define TENSORWEAVE_SRC_OPS_TYPE_DISPATCH_H_

#include <complex>
#include <string>

#include "src/framework/op_kernel.h"

namespace tw {

template <typename... Ts>
struct TypeList {};
template <typename T>
struct TypeTag {
  using type = T;
};

using FloatTypes = TypeList<float, double>;
using NumericTypes = TypeList<float, double, int32_t, int64_t>;
using NumericAndBoolTypes = TypeList<float, double, int32_t, int64_t, uint8_t, bool>;
// Every element type: what kernels that only move elements (slice, concat, gather) take.
using AllTypes =
    TypeList<float, double, int32_t, int64_t, uint8_t, bool, std::string, ResourceHandle, int8_t,
             int16_t, uint16_t, std::complex<float>, std::complex<double>>;

// Calls fn(TypeTag<T>{}) for the T of `Types` matching `dtype`; false when none matches.
template <typename... Ts, typename F>
bool Dispatch(TypeList<Ts...>, DataType dtype, F&& fn) {
  return ((dtype == DataTypeToEnum<Ts>::value ? (fn(TypeTag<Ts>{}), true) : false) || ...);
}

// Calls fn.template operator()<T>() for any tensor dtype (every type, or numeric and bool).
// Types come from op definitions, so a dtype outside the list does nothing.
template <typename Fn>
void DispatchType(DataType dtype, Fn&& fn) {
  Dispatch(AllTypes{}, dtype,
           [&](auto tag) { fn.template operator()<typename decltype(tag)::type>(); });
}
template <typename Fn>
void DispatchNumeric(DataType dtype, Fn&& fn) {
  Dispatch(NumericAndBoolTypes{}, dtype,
           [&](auto tag) { fn.template operator()<typename decltype(tag)::type>(); });
}

// The error for a dtype a kernel's type list does not cover; unreachable while the op
// definitions and the lists agree.
inline Status UnsupportedType(const OpKernel& k, DataType dtype) {
  return errors::Internal("node ", k.name(), ": ", k.type_string(), " has no kernel for ",
                          DataTypeName(dtype));
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_TYPE_DISPATCH_H_
