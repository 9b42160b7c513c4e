// Math ops: element-wise arithmetic and comparisons with NumPy broadcasting, Select, and
// MatMul. Definitions, CPU kernels and graph-building functions.
//
// One kernel class serves every element type of an op (kernels are registered per op and
// device, not per type), so each kernel dispatches on its input type at run time.
#include "tensorweave/ops/math_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"

namespace tw {
namespace {

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

std::string ShapesText(absl::Span<const TensorShape* const> shapes) {
  std::string text;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) text += " vs. ";
    text += shapes[i]->DebugString();
  }
  return text;
}

// NumPy rules: shapes are aligned at their last dimension, and in each dimension the sizes
// must agree or be 1. InvalidArgument naming the node and the shapes otherwise.
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
                                       ": Incompatible shapes: ", ShapesText(shapes));
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

struct AddF {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    return WrapAdd(a, b);
  }
};
struct SubF {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    return WrapSub(a, b);
  }
};
struct MulF {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    return WrapMul(a, b);
  }
};
struct DivF {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    // Zero divisors were rejected before; min / -1 overflows (and traps on x86), so negate.
    if constexpr (std::is_integral_v<T>) {
      if (b == -1) return WrapNeg(a);
    }
    return a / b;
  }
};
// Maximum and Minimum propagate NaN, like TensorFlow.
struct MaximumF {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
    }
    return a > b ? a : b;
  }
};
struct MinimumF {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
    }
    return a < b ? a : b;
  }
};
struct EqualF {
  using Types = TypeList<float, double, int32_t, int64_t, bool, std::string>;
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return a == b;
  }
};
struct LessF {
  using Types = NumericTypes;
  template <typename T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct GreaterF {
  using Types = NumericTypes;
  template <typename T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};

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
      if constexpr (std::is_same_v<Functor, DivF> && std::is_integral_v<T>) {
        const auto ys = y.flat<T>();
        if (z->num_elements() > 0 && std::find(ys.begin(), ys.end(), T(0)) != ys.end()) {
          ctx->SetStatus(errors::InvalidArgument("node ", name(), ": Integer division by zero"));
          return;
        }
      }
      ComputeBinary<T, Out>(x, y, b, z, Functor{});
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};

#define TW_BINARY_OP(NAME, FUNCTOR, TYPES, OUT, DOC)                                             \
  TW_REGISTER_OP(NAME).Input("x: T").Input("y: T").Output("z: " OUT).Attr("T: " TYPES).Doc(DOC); \
  TW_REGISTER_KERNEL(NAME, "CPU", BinaryOp<FUNCTOR>)

#define TW_NUMERIC "{float, double, int32, int64}"
TW_BINARY_OP("Add", AddF, TW_NUMERIC, "T", "x + y, with broadcasting.");
TW_BINARY_OP("Sub", SubF, TW_NUMERIC, "T", "x - y, with broadcasting.");
TW_BINARY_OP("Mul", MulF, TW_NUMERIC, "T", "x * y, with broadcasting.");
TW_BINARY_OP("Div", DivF, TW_NUMERIC, "T",
             "x / y, with broadcasting; integers truncate and reject a zero divisor.");
TW_BINARY_OP("Maximum", MaximumF, TW_NUMERIC, "T", "max(x, y), with broadcasting.");
TW_BINARY_OP("Minimum", MinimumF, TW_NUMERIC, "T", "min(x, y), with broadcasting.");
TW_BINARY_OP("Equal", EqualF, "{float, double, int32, int64, bool, string}", "bool",
             "x == y, with broadcasting.");
TW_BINARY_OP("Less", LessF, TW_NUMERIC, "bool", "x < y, with broadcasting.");
TW_BINARY_OP("Greater", GreaterF, TW_NUMERIC, "bool", "x > y, with broadcasting.");

// ---- Element-wise unary ops ----

struct NegF {
  using Types = NumericTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = WrapNeg(x[i]);
  }
};
struct SquareF {
  using Types = NumericTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = WrapMul(x[i], x[i]);
  }
};
// Eigen's vectorized transcendental functions.
struct SqrtF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.sqrt();
  }
};
struct ExpF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.exp();
  }
};
struct LogF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.log();
  }
};

#define TW_UNARY_OP(NAME, FUNCTOR, TYPES, DOC)                                  \
  TW_REGISTER_OP(NAME).Input("x: T").Output("y: T").Attr("T: " TYPES).Doc(DOC); \
  TW_REGISTER_KERNEL(NAME, "CPU", UnaryOp<FUNCTOR>)

TW_UNARY_OP("Neg", NegF, TW_NUMERIC, "-x, element-wise; integers wrap.");
TW_UNARY_OP("Square", SquareF, TW_NUMERIC, "x * x, element-wise; integers wrap.");
TW_UNARY_OP("Sqrt", SqrtF, "{float, double}", "Square root, element-wise (NaN below 0).");
TW_UNARY_OP("Exp", ExpF, "{float, double}", "e^x, element-wise.");
TW_UNARY_OP("Log", LogF, "{float, double}", "Natural logarithm, element-wise.");

// ---- Select ----
TW_REGISTER_OP("Select")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64, bool, string}")
    .Doc("t where condition is true, else e; the three inputs broadcast NumPy-style.");

class SelectOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    Broadcast<3> b;
    TW_OP_REQUIRES_OK(ctx, ComputeBroadcast<3>(*this, {&cond.shape(), &t.shape(), &e.shape()}, &b));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, b.output_shape, &out));
    using Types = TypeList<float, double, int32_t, int64_t, bool, std::string>;
    const bool known = Dispatch(Types{}, input_type(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto cs = cond.flat<bool>();
      const auto ts = t.flat<T>();
      const auto es = e.flat<T>();
      auto os = out->flat<T>();
      // Inputs that are whole or single elements collapse to one run, so this is a flat
      // loop in the common cases.
      ForEachRun(b, [&](int64_t o, const std::array<int64_t, 3>& off,
                        const std::array<int64_t, 3>& stride, int64_t len) {
        for (int64_t j = 0; j < len; ++j) {
          os[o + j] =
              cs[off[0] + j * stride[0]] ? ts[off[1] + j * stride[1]] : es[off[2] + j * stride[2]];
        }
      });
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(1)));
  }
};
TW_REGISTER_KERNEL("Select", "CPU", SelectOp);

// ---- MatMul ----
TW_REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: " TW_NUMERIC)
    .Doc("Matrix product of a and b, each optionally transposed first.");

template <typename T>
void MatMulImpl(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, int64_t inner,
                Tensor* out) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> ma(a.flat<T>().data(), a.dim(0), a.dim(1));
  Eigen::Map<const Matrix> mb(b.flat<T>().data(), b.dim(0), b.dim(1));
  Eigen::Map<Matrix> mc(out->flat<T>().data(), out->dim(0), out->dim(1));
  if (inner == 0) {  // an empty sum
    mc.setZero();
    return;
  }
  // noalias: the output is a fresh buffer, so Eigen need not evaluate into a temporary.
  if (!transpose_a && !transpose_b) {
    mc.noalias() = ma * mb;
  } else if (transpose_a && !transpose_b) {
    mc.noalias() = ma.transpose() * mb;
  } else if (!transpose_a && transpose_b) {
    mc.noalias() = ma * mb.transpose();
  } else {
    mc.noalias() = ma.transpose() * mb.transpose();
  }
}

class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("transpose_a", &transpose_a_);
    if (s.ok()) s = c->GetAttr("transpose_b", &transpose_b_);
    c->SetStatus(s);
  }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    TW_OP_REQUIRES(
        ctx, a.rank() == 2 && b.rank() == 2,
        errors::InvalidArgument("node ", name(), ": MatMul needs matrices, got a ",
                                a.shape().DebugString(), " and b ", b.shape().DebugString()));
    const int64_t m = a.dim(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim(transpose_a_ ? 0 : 1);
    const int64_t k_b = b.dim(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim(transpose_b_ ? 0 : 1);
    TW_OP_REQUIRES(
        ctx, k == k_b,
        errors::InvalidArgument(
            "node ", name(), ": Matrix size-incompatible: a ", a.shape().DebugString(),
            transpose_a_ ? " (transposed)" : "", " vs. b ", b.shape().DebugString(),
            transpose_b_ ? " (transposed)" : "", ", inner dimensions ", k, " and ", k_b));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({m, n}), &out));
    if (out->num_elements() == 0) return;
    const bool known = Dispatch(NumericTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      MatMulImpl<T>(a, b, transpose_a_, transpose_b_, k, out);
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};
TW_REGISTER_KERNEL("MatMul", "CPU", MatMulOp);

#undef TW_NUMERIC
#undef TW_BINARY_OP
#undef TW_UNARY_OP

}  // namespace

namespace ops {

Output Add(const Scope& scope, Input x, Input y) { return scope.AddNodeOutput("Add", {{x}, {y}}); }
Output Sub(const Scope& scope, Input x, Input y) { return scope.AddNodeOutput("Sub", {{x}, {y}}); }
Output Mul(const Scope& scope, Input x, Input y) { return scope.AddNodeOutput("Mul", {{x}, {y}}); }
Output Div(const Scope& scope, Input x, Input y) { return scope.AddNodeOutput("Div", {{x}, {y}}); }
Output Maximum(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("Maximum", {{x}, {y}});
}
Output Minimum(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("Minimum", {{x}, {y}});
}
Output Equal(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("Equal", {{x}, {y}});
}
Output Less(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("Less", {{x}, {y}});
}
Output Greater(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("Greater", {{x}, {y}});
}

Output Neg(const Scope& scope, Input x) { return scope.AddNodeOutput("Neg", {{x}}); }
Output Square(const Scope& scope, Input x) { return scope.AddNodeOutput("Square", {{x}}); }
Output Sqrt(const Scope& scope, Input x) { return scope.AddNodeOutput("Sqrt", {{x}}); }
Output Exp(const Scope& scope, Input x) { return scope.AddNodeOutput("Exp", {{x}}); }
Output Log(const Scope& scope, Input x) { return scope.AddNodeOutput("Log", {{x}}); }

Output Select(const Scope& scope, Input condition, Input t, Input e) {
  return scope.AddNodeOutput("Select", {{condition}, {t}, {e}});
}

Output MatMul(const Scope& scope, Input a, Input b, const MatMulOptions& options) {
  return scope.AddNodeOutput("MatMul", {{a}, {b}},
                             {{"transpose_a", MakeAttr(options.transpose_a)},
                              {"transpose_b", MakeAttr(options.transpose_b)}});
}

}  // namespace ops
}  // namespace tw
