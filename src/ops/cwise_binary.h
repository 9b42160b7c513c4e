// Shared pieces of element-wise kernels with NumPy broadcasting: the broadcast plan of N
// input shapes, iteration over its contiguous runs, and the kernel for binary ops
// (BinaryOp<Functor>, registered with TW_BINARY_OP). The unary machinery is in cwise.h.
#ifndef TENSORWEAVE_SRC_OPS_CWISE_BINARY_H_
#define TENSORWEAVE_SRC_OPS_CWISE_BINARY_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "src/framework/op_kernel.h"
#include "src/ops/type_dispatch.h"

namespace tw {

// ---- Broadcasting ----

// How the inputs of an element-wise op map onto its output. The dimensions are collapsed:
// size-1 output dimensions are dropped and neighbours that every input broadcasts (or not)
// alike are merged, so [2,3,4] + [4] runs as [6,4] + [1,4] and inner loops stay long.
template <size_t N>
struct Broadcast {
  TensorShape output_shape;
  std::vector<int64_t> dims;                    // collapsed output dimensions
  std::array<std::vector<int64_t>, N> strides;  // per input and collapsed dim; 0: broadcast
};

namespace internal {

// "[2,3] vs. [4]": the shapes of an error message.
inline std::string ShapesText(absl::Span<const TensorShape* const> shapes) {
  std::string text;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) text += " vs. ";
    text += shapes[i]->DebugString();
  }
  return text;
}

}  // namespace internal

// NumPy rules: shapes are aligned at their last dimension, and in each dimension the sizes
// must agree or be 1. InvalidArgument naming the node and the shapes otherwise
// ("node <name>: Incompatible shapes: [2,3] vs. [4]").
template <size_t N>
Status ComputeBroadcast(const OpKernel& kernel, const std::array<const TensorShape*, N>& shapes,
                        Broadcast<N>* b) {
  int rank = 0;
  for (const TensorShape* s : shapes) rank = std::max(rank, s->rank());
  std::array<std::vector<int64_t>, N> padded;
  for (size_t k = 0; k < N; ++k) {
    padded[k].assign(static_cast<size_t>(rank - shapes[k]->rank()), 1);
    padded[k].insert(padded[k].end(), shapes[k]->dims().begin(), shapes[k]->dims().end());
  }
  std::vector<int64_t> out(static_cast<size_t>(rank), 1);
  for (int d = 0; d < rank; ++d) {
    for (size_t k = 0; k < N; ++k) {
      const int64_t v = padded[k][d];
      if (v == 1) continue;
      if (out[d] == 1) {
        out[d] = v;
      } else if (out[d] != v) {
        return errors::InvalidArgument("node ", kernel.name(),
                                       ": Incompatible shapes: ", internal::ShapesText(shapes));
      }
    }
  }
  auto shape = TensorShape::Create(out);
  if (!shape.ok()) return errors::Annotate(shape.status(), "node " + kernel.name() + ": ");
  b->output_shape = *std::move(shape);

  b->dims.clear();
  std::vector<std::array<bool, N>> patterns;  // per collapsed dim: which inputs broadcast
  for (int d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::array<bool, N> pattern;
    for (size_t k = 0; k < N; ++k) pattern[k] = padded[k][d] == 1;
    if (!patterns.empty() && patterns.back() == pattern) {
      b->dims.back() *= out[d];
    } else {
      b->dims.push_back(out[d]);
      patterns.push_back(pattern);
    }
  }
  for (size_t k = 0; k < N; ++k) {
    b->strides[k].assign(b->dims.size(), 0);
    int64_t stride = 1;
    for (size_t c = b->dims.size(); c-- > 0;) {
      if (patterns[c][k]) continue;
      b->strides[k][c] = stride;
      stride *= b->dims[c];
    }
  }
  return OkStatus();
}

// Calls fn(out_offset, in_offsets, in_strides, n) for each run of n output elements along the
// innermost collapsed dimension; input k's elements of the run are at
// in_offsets[k] + j * in_strides[k] for j in [0, n).
template <size_t N, typename F>
void ForEachRun(const Broadcast<N>& b, F&& fn) {
  const int64_t total = b.output_shape.num_elements();
  std::array<int64_t, N> offsets{};
  std::array<int64_t, N> inner{};
  if (b.dims.empty()) {  // a one-element output
    if (total == 1) fn(int64_t{0}, offsets, inner, int64_t{1});
    return;
  }
  const int r = static_cast<int>(b.dims.size());
  for (size_t k = 0; k < N; ++k) inner[k] = b.strides[k][r - 1];
  const int64_t run = b.dims[r - 1];
  std::vector<int64_t> index(static_cast<size_t>(r), 0);
  for (int64_t o = 0; o < total; o += run) {
    fn(o, offsets, inner, run);
    // Advance the odometer over the outer dimensions.
    for (int d = r - 2; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) offsets[k] += b.strides[k][d];
      if (++index[d] < b.dims[d]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= b.strides[k][d] * b.dims[d];
      index[d] = 0;
    }
  }
}

// ---- Element-wise binary ops ----

// z[i] = f(x[i'], y[i'']) over the broadcast `b` of x and y; z is allocated with
// b.output_shape and element type Out.
template <typename T, typename Out, typename F>
void ComputeBinary(const Tensor& x, const Tensor& y, const Broadcast<2>& b, Tensor* z, F f) {
  const auto xs = x.flat<T>();
  const auto ys = y.flat<T>();
  auto zs = z->flat<Out>();
  const size_t n = zs.size();
  if (n == 0) return;
  // Fast paths without index arithmetic: each side is either the whole output shape (the
  // flat indices agree) or a single element.
  if (xs.size() == n && ys.size() == n) {
    for (size_t i = 0; i < n; ++i) zs[i] = f(xs[i], ys[i]);
  } else if (xs.size() == n && ys.size() == 1) {
    const T s = ys[0];
    for (size_t i = 0; i < n; ++i) zs[i] = f(xs[i], s);
  } else if (xs.size() == 1 && ys.size() == n) {
    const T s = xs[0];
    for (size_t i = 0; i < n; ++i) zs[i] = f(s, ys[i]);
  } else {
    ForEachRun(b, [&](int64_t o, const std::array<int64_t, 2>& off,
                      const std::array<int64_t, 2>& stride, int64_t len) {
      const T* xp = xs.data() + off[0];
      const T* yp = ys.data() + off[1];
      Out* zp = zs.data() + o;
      if (stride[0] == 1 && stride[1] == 1) {
        for (int64_t j = 0; j < len; ++j) zp[j] = f(xp[j], yp[j]);
      } else if (stride[0] == 1 && stride[1] == 0) {
        for (int64_t j = 0; j < len; ++j) zp[j] = f(xp[j], *yp);
      } else if (stride[0] == 0 && stride[1] == 1) {
        for (int64_t j = 0; j < len; ++j) zp[j] = f(*xp, yp[j]);
      } else {
        for (int64_t j = 0; j < len; ++j) zp[j] = f(xp[j * stride[0]], yp[j * stride[1]]);
      }
    });
  }
}

// The check of integer division and modulo: InvalidArgument "node <name>: Integer division
// by zero" (TensorFlow's message) when any element of the divisor `y` is 0.
template <typename T>
Status RejectZeroDivisor(const OpKernel& kernel, absl::Span<const T> y) {
  if (std::find(y.begin(), y.end(), T(0)) != y.end()) {
    return errors::InvalidArgument("node ", kernel.name(), ": Integer division by zero");
  }
  return OkStatus();
}

// A base for the functors of integer division and modulo: their CheckY (below) rejects a
// zero integer divisor; floating-point divisors are not checked.
struct RejectsIntegerZeroDivisor {
  template <typename T>
  static Status CheckY(const OpKernel& kernel, absl::Span<const T> y) {
    if constexpr (std::is_integral_v<T>) {
      return RejectZeroDivisor(kernel, y);
    } else {
      return OkStatus();
    }
  }
};

// z = f(x, y) element-wise with broadcasting. Functor has:
// - `Types`, a TypeList of the input element types it takes;
// - `template <typename T> Out operator()(T x, T y) const` (Out is T or bool);
// - optionally `template <typename T> static Status CheckY(const OpKernel&, absl::Span<const
//   T> y)`, run on the second input before computing (when the output is not empty): an
//   error there (a zero integer divisor) fails the step without computing anything.
// Inputs are named x and y, the output z; the kernel dispatches on x's type.
// Whether Functor has the optional CheckY for element type T (at namespace scope, so a
// functor without it is a substitution failure, not an error, for every compiler).
template <typename Functor, typename T>
concept HasCheckY = requires(const OpKernel& k, absl::Span<const T> s) {
  Functor::template CheckY<T>(k, s);
};

// Functor's CheckY when it has one, else OK. A function of its own, not an `if constexpr`
// in the kernel's generic lambda, where clang 14 instantiates the discarded branch too.
template <typename Functor, typename T>
Status CheckSecondInput(const OpKernel& kernel, absl::Span<const T> y) {
  if constexpr (HasCheckY<Functor, T>) {
    return Functor::template CheckY<T>(kernel, y);
  } else {
    return OkStatus();
  }
}

template <typename Functor>
class BinaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    Broadcast<2> b;
    TW_OP_REQUIRES_OK(ctx, ComputeBroadcast<2>(*this, {&x.shape(), &y.shape()}, &b));
    Tensor* z = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, b.output_shape, &z));
    const bool known = Dispatch(typename Functor::Types{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Out = std::decay_t<decltype(Functor{}(std::declval<T>(), std::declval<T>()))>;
      if (z->num_elements() > 0) {
        TW_OP_REQUIRES_OK(ctx, (CheckSecondInput<Functor, T>(*this, y.flat<T>())));
      }
      ComputeBinary<T, Out>(x, y, b, z, Functor{});
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};

// Registers op NAME with inputs x and y of type attr T in TYPES (an attr type set such as
// "{float, double}"), output z of type OUT ("T" or "bool"), and its CPU kernel
// BinaryOp<FUNCTOR>.
#define TW_BINARY_OP(NAME, FUNCTOR, TYPES, OUT, DOC)                                             \
  TW_REGISTER_OP(NAME).Input("x: T").Input("y: T").Output("z: " OUT).Attr("T: " TYPES).Doc(DOC); \
  TW_REGISTER_KERNEL(NAME, "CPU", BinaryOp<FUNCTOR>)

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_CWISE_BINARY_H_
