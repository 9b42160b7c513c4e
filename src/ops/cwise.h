// Shared pieces of element-wise kernels: Eigen views of tensor data, integer arithmetic
// that wraps instead of overflowing, and the kernel for unary element-wise ops.
#ifndef TENSORWEAVE_SRC_OPS_CWISE_H_
#define TENSORWEAVE_SRC_OPS_CWISE_H_

#include <type_traits>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/ops/type_dispatch.h"

namespace tw {

template <typename T>
using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutArray = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// Wrapping integer arithmetic.
// Signed overflow is undefined behaviour, and graphs compute on arbitrary fed values: integer
// ops wrap around (two's complement, well defined for the conversion back in C++20).

template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T>
T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <typename T>
T WrapNeg(T a) {
  return WrapSub(T(0), a);
}

// y = f(x) element-wise. Functor has `Types` (a TypeList) and
// `template <typename T> static void Apply(ConstArray<T> x, MutArray<T> y)`.
template <typename Functor>
class UnaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const bool known = Dispatch(typename Functor::Types{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto in = x.flat<T>();
      auto out = y->flat<T>();
      const auto n = static_cast<Eigen::Index>(in.size());
      Functor::template Apply<T>(ConstArray<T>(in.data(), n), MutArray<T>(out.data(), n));
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};

// Registers op NAME with input x and output y of type attr T in TYPES (an attr type set such
// as "{float, double}"), and its CPU kernel UnaryOp<FUNCTOR>.
#define TW_UNARY_OP(NAME, FUNCTOR, TYPES, DOC)                                  \
  TW_REGISTER_OP(NAME).Input("x: T").Output("y: T").Attr("T: " TYPES).Doc(DOC); \
  TW_REGISTER_KERNEL(NAME, "CPU", UnaryOp<FUNCTOR>)

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_CWISE_H_
