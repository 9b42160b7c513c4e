// Math ops: element-wise arithmetic and comparisons with NumPy broadcasting, Select, and
// MatMul. Definitions, CPU kernels and graph-building functions. The broadcasting and the
// binary kernel are in cwise_binary.h; more element-wise ops are in arithmetic_ops.cc
// (FloorDiv, FloorMod, Pow, Abs) and comparison_ops.cc (LessEqual, ..., logical ops, Where).
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
#include "absl/strings/str_join.h"
#include "src/framework/op_kernel.h"
#include "src/framework/parallel_for.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/cwise.h"
#include "src/ops/cwise_binary.h"
#include "src/ops/math_grad.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

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
struct DivF : RejectsIntegerZeroDivisor {
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    // Zero divisors were rejected by CheckY; min / -1 overflows (and traps on x86), so negate.
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

// out = lhs * rhs, split across the device's threads along the longer of the result's
// two sides: each shard multiplies a band of lhs's rows (or rhs's columns) by the whole
// of the other operand, so shards write disjoint parts of `out`.
template <typename Lhs, typename Rhs, typename Out>
void ParallelProduct(DeviceBase* device, const Lhs& lhs, const Rhs& rhs, Out& out) {
  const int64_t m = out.rows(), n = out.cols(), k = lhs.cols();
  if (m >= n) {
    ParallelFor(device, m, kMinShardMultiplyAdds / std::max<int64_t>(1, n * k),
                [&](int64_t begin, int64_t end) {
                  out.middleRows(begin, end - begin).noalias() =
                      lhs.middleRows(begin, end - begin) * rhs;
                });
  } else {
    ParallelFor(device, n, kMinShardMultiplyAdds / std::max<int64_t>(1, m * k),
                [&](int64_t begin, int64_t end) {
                  out.middleCols(begin, end - begin).noalias() =
                      lhs * rhs.middleCols(begin, end - begin);
                });
  }
}

template <typename T>
void MatMulImpl(DeviceBase* device, const Tensor& a, const Tensor& b, bool transpose_a,
                bool transpose_b, int64_t inner, Tensor* out) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> ma(a.flat<T>().data(), a.dim(0), a.dim(1));
  Eigen::Map<const Matrix> mb(b.flat<T>().data(), b.dim(0), b.dim(1));
  Eigen::Map<Matrix> mc(out->flat<T>().data(), out->dim(0), out->dim(1));
  if (inner == 0) {  // an empty sum
    mc.setZero();
    return;
  }
  // noalias (in ParallelProduct): the output is a fresh buffer, so Eigen need not evaluate
  // into a temporary.
  if (!transpose_a && !transpose_b) {
    ParallelProduct(device, ma, mb, mc);
  } else if (transpose_a && !transpose_b) {
    ParallelProduct(device, ma.transpose(), mb, mc);
  } else if (!transpose_a && transpose_b) {
    ParallelProduct(device, ma, mb.transpose(), mc);
  } else {
    ParallelProduct(device, ma.transpose(), mb.transpose(), mc);
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
      MatMulImpl<T>(ctx->device(), a, b, transpose_a_, transpose_b_, k, out);
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};
TW_REGISTER_KERNEL("MatMul", "CPU", MatMulOp);

// ---- AddN ----
TW_REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr("T: " TW_NUMERIC)
    .Doc("The element-wise sum of N tensors of one shape (no broadcasting).");

class AddNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < num_inputs(); ++i) {
      TW_OP_REQUIRES(ctx, ctx->input(i).shape() == first.shape(),
                     errors::InvalidArgument("node ", name(),
                                             ": AddN inputs must have one shape: ", "inputs[0] is ",
                                             first.shape().DebugString(), ", inputs[", i, "] is ",
                                             ctx->input(i).shape().DebugString()));
    }
    if (num_inputs() == 1) {
      ctx->set_output(0, first);
      return;
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, first.shape(), &out));
    const bool known = Dispatch(NumericTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto n = static_cast<Eigen::Index>(first.num_elements());
      MutArray<T> o(out->flat<T>().data(), n);
      auto in = [&](int i) { return ConstArray<T>(ctx->input(i).flat<T>().data(), n); };
      if constexpr (std::is_floating_point_v<T>) {
        // Two inputs per pass: one read of the output per pair.
        int i = 2;
        o = in(0) + in(1);
        for (; i + 1 < num_inputs(); i += 2) o += in(i) + in(i + 1);
        if (i < num_inputs()) o += in(i);
      } else {
        for (Eigen::Index j = 0; j < n; ++j) o[j] = in(0)[j];
        for (int i = 1; i < num_inputs(); ++i) {
          const ConstArray<T> x = in(i);
          for (Eigen::Index j = 0; j < n; ++j) o[j] = WrapAdd(o[j], x[j]);
        }
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("AddN", "CPU", AddNOp);

// ---- BroadcastGradientArgs ----
TW_REGISTER_OP("BroadcastGradientArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Output("r1: T")
    .Attr("T: {int32, int64} = int32")
    .Doc(
        "For shapes s0 and s1 broadcast against each other, the axes of the broadcast shape "
        "along which each was stretched: summing a gradient over r0 (then reshaping to s0) "
        "gives the gradient of the first input.");

class BroadcastGradientArgsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    std::array<std::vector<int64_t>, 2> shapes;
    for (int k = 0; k < 2; ++k) {
      const Tensor& s = ctx->input(k);
      TW_OP_REQUIRES(
          ctx, s.rank() == 1,
          errors::InvalidArgument("node ", name(), ": BroadcastGradientArgs s", k,
                                  " must be a shape vector, got shape ", s.shape().DebugString()));
      Dispatch(TypeList<int32_t, int64_t>{}, s.dtype(), [&](auto tag) {
        using I = typename decltype(tag)::type;
        for (I v : s.flat<I>()) shapes[k].push_back(static_cast<int64_t>(v));
      });
    }
    const size_t rank = std::max(shapes[0].size(), shapes[1].size());
    std::array<std::vector<int64_t>, 2> reduce;
    for (size_t d = 0; d < rank; ++d) {
      std::array<int64_t, 2> dim;
      for (int k = 0; k < 2; ++k) {
        const size_t pad = rank - shapes[k].size();
        dim[k] = d < pad ? 1 : shapes[k][d - pad];
      }
      TW_OP_REQUIRES(ctx, dim[0] == dim[1] || dim[0] == 1 || dim[1] == 1,
                     errors::InvalidArgument("node ", name(), ": Incompatible shapes: [",
                                             absl::StrJoin(shapes[0], ","), "] vs. [",
                                             absl::StrJoin(shapes[1], ","), "]"));
      const int64_t out = std::max(dim[0], dim[1]);
      for (int k = 0; k < 2; ++k) {
        if (dim[k] == 1 && out != 1) reduce[k].push_back(static_cast<int64_t>(d));
      }
    }
    for (int k = 0; k < 2; ++k) {
      Tensor* r = nullptr;
      TW_OP_REQUIRES_OK(
          ctx, ctx->allocate_output(k, TensorShape({static_cast<int64_t>(reduce[k].size())}), &r));
      Dispatch(TypeList<int32_t, int64_t>{}, output_type(k), [&](auto tag) {
        using I = typename decltype(tag)::type;
        std::transform(reduce[k].begin(), reduce[k].end(), r->flat<I>().begin(),
                       [](int64_t v) { return static_cast<I>(v); });
      });
    }
  }
};
TW_REGISTER_KERNEL("BroadcastGradientArgs", "CPU", BroadcastGradientArgsOp);

// ---- Gradients ----
// Broadcasting ops reduce their gradients to their inputs' shapes with BinaryGrad
// (math_grad.h, defined below).

Status AddGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  BinaryGrad(
      scope, op, grad_inputs, [&] { return g; }, [&] { return g; });
  return OkStatus();
}
TW_REGISTER_GRADIENT("Add", AddGrad);

Status SubGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  BinaryGrad(
      scope, op, grad_inputs, [&] { return g; }, [&] { return ops::Neg(scope, g); });
  return OkStatus();
}
TW_REGISTER_GRADIENT("Sub", SubGrad);

Status MulGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  BinaryGrad(
      scope, op, grad_inputs, [&] { return ops::Mul(scope, g, op.input(1)); },
      [&] { return ops::Mul(scope, op.input(0), g); });
  return OkStatus();
}
TW_REGISTER_GRADIENT("Mul", MulGrad);

// d(x/y)/dx = 1/y; d(x/y)/dy = -x/y^2.
Status DivGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  const Output& x = op.input(0);
  const Output& y = op.input(1);
  BinaryGrad(
      scope, op, grad_inputs, [&] { return ops::Div(scope, g, y); },
      [&] {
        return ops::Mul(scope, g, ops::Neg(scope, ops::Div(scope, ops::Div(scope, x, y), y)));
      });
  return OkStatus();
}
TW_REGISTER_GRADIENT("Div", DivGrad);

// The gradient goes to the input that was picked; on a tie, to x (as in TensorFlow).
// `y_wins` is where y was picked.
Status PickGrad(const Scope& scope, const ForwardOp& op, const Output& g, const Output& y_wins,
                std::vector<Gradient>* grad_inputs) {
  const Output zeros = ops::ZerosLike(scope, g);
  BinaryGrad(
      scope, op, grad_inputs, [&] { return ops::Select(scope, y_wins, zeros, g); },
      [&] { return ops::Select(scope, y_wins, g, zeros); });
  return OkStatus();
}
Status MaximumGrad(const Scope& scope, const ForwardOp& op,
                   const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  return PickGrad(scope, op, grad_outputs[0].dense, ops::Less(scope, op.input(0), op.input(1)),
                  grad_inputs);
}
TW_REGISTER_GRADIENT("Maximum", MaximumGrad);
Status MinimumGrad(const Scope& scope, const ForwardOp& op,
                   const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  return PickGrad(scope, op, grad_outputs[0].dense, ops::Greater(scope, op.input(0), op.input(1)),
                  grad_inputs);
}
TW_REGISTER_GRADIENT("Minimum", MinimumGrad);

Status NegGrad(const Scope& scope, const ForwardOp&, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Neg(scope, grad_outputs[0].dense);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Neg", NegGrad);

Status SquareGrad(const Scope& scope, const ForwardOp& op,
                  const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  const Output two_x = ops::Mul(scope, op.input(0), FloatConst(scope, 2, op.input(0).type()));
  (*grad_inputs)[0].dense = ops::Mul(scope, grad_outputs[0].dense, two_x);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Square", SquareGrad);

// d sqrt(x) = 1 / (2 sqrt(x)), from the output.
Status SqrtGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
                std::vector<Gradient>* grad_inputs) {
  const Output two_y = ops::Mul(scope, op.output(0), FloatConst(scope, 2, op.output(0).type()));
  (*grad_inputs)[0].dense = ops::Div(scope, grad_outputs[0].dense, two_y);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Sqrt", SqrtGrad);

Status ExpGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Mul(scope, grad_outputs[0].dense, op.output(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Exp", ExpGrad);

Status LogGrad(const Scope& scope, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
               std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::Div(scope, grad_outputs[0].dense, op.input(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Log", LogGrad);

// The gradient of t where the condition holds and of e elsewhere, each summed back to its
// input's shape (the three inputs broadcast).
Status SelectGrad(const Scope& scope, const ForwardOp& op,
                  const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  const Output& cond = op.input(0);
  const Output zeros = ops::ZerosLike(scope, g);
  const Output sg = ops::Shape(scope, g);
  for (int i = 1; i <= 2; ++i) {
    if (!op.needs_gradient(i)) continue;
    const Output picked =
        i == 1 ? ops::Select(scope, cond, g, zeros) : ops::Select(scope, cond, zeros, g);
    const Output si = ops::Shape(scope, op.input(i));
    const auto r = ops::BroadcastGradientArgs(scope, si, sg);
    (*grad_inputs)[i].dense = ops::Reshape(scope, ops::Sum(scope, picked, r.r0), si);
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("Select", SelectGrad);

// MatMul's gradients are MatMuls with transpose flags; the kernel reads transposed operands
// in place, so no transpose is ever materialized.
Status MatMulGrad(const Scope& scope, const ForwardOp& op,
                  const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  bool ta = false, tb = false;
  TW_RETURN_IF_ERROR(op.GetAttr("transpose_a", &ta));
  TW_RETURN_IF_ERROR(op.GetAttr("transpose_b", &tb));
  const Output& g = grad_outputs[0].dense;
  const Output& a = op.input(0);
  const Output& b = op.input(1);
  auto matmul = [&](const Output& p, const Output& q, bool tp, bool tq) {
    return ops::MatMul(scope, p, q, {.transpose_a = tp, .transpose_b = tq});
  };
  if (op.needs_gradient(0)) {
    (*grad_inputs)[0].dense = !ta ? (!tb ? matmul(g, b, false, true) : matmul(g, b, false, false))
                                  : (!tb ? matmul(b, g, false, true) : matmul(b, g, true, true));
  }
  if (op.needs_gradient(1)) {
    (*grad_inputs)[1].dense = !tb ? (!ta ? matmul(a, g, true, false) : matmul(a, g, false, false))
                                  : (!ta ? matmul(g, a, true, false) : matmul(g, a, true, true));
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("MatMul", MatMulGrad);

Status AddNGrad(const Scope&, const ForwardOp& op, const std::vector<Gradient>& grad_outputs,
                std::vector<Gradient>* grad_inputs) {
  for (int i = 0; i < op.num_inputs(); ++i) (*grad_inputs)[i] = grad_outputs[0];
  return OkStatus();
}
TW_REGISTER_SPARSE_GRADIENT("AddN", AddNGrad);

TW_NO_GRADIENT("Equal");
TW_NO_GRADIENT("Less");
TW_NO_GRADIENT("Greater");
TW_NO_GRADIENT("BroadcastGradientArgs");

#undef TW_NUMERIC

}  // namespace

Output FloatConst(const Scope& scope, double v, DataType dtype) {
  return ops::Const(scope,
                    dtype == DT_FLOAT ? Tensor::Scalar(static_cast<float>(v)) : Tensor::Scalar(v));
}

void ReduceToInputShapes(const Scope& scope, const ForwardOp& op, const Output& gx,
                         const Output& gy, std::vector<Gradient>* grad_inputs) {
  const Output sx = ops::Shape(scope, op.input(0));
  const Output sy = ops::Shape(scope, op.input(1));
  const auto r = ops::BroadcastGradientArgs(scope, sx, sy);
  if (gx.op().valid()) (*grad_inputs)[0].dense = ops::Reshape(scope, ops::Sum(scope, gx, r.r0), sx);
  if (gy.op().valid()) (*grad_inputs)[1].dense = ops::Reshape(scope, ops::Sum(scope, gy, r.r1), sy);
}

namespace ops {

Output AddN(const Scope& scope, const InputList& inputs) {
  return scope.AddNodeOutput("AddN", {inputs});
}

BroadcastGradientArgsOutputs BroadcastGradientArgs(const Scope& scope, Input s0, Input s1) {
  const Operation op = scope.AddNode("BroadcastGradientArgs", {{s0}, {s1}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

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
