// Comparisons and logic beside math_ops.cc's Equal, Less and Greater: LessEqual,
// GreaterEqual, NotEqual, LogicalAnd, LogicalOr and LogicalNot (element-wise, NumPy
// broadcasting, bool output), and Where, the coordinates of the true elements of a tensor.
// Definitions, CPU kernels and graph-building functions; none is differentiable.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/cwise.h"
#include "src/ops/cwise_binary.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

// ---- Comparisons ----

struct LessEqualF {
  using Types = NumericTypes;
  template <typename T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct GreaterEqualF {
  using Types = NumericTypes;
  template <typename T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};
// NaN is not equal to itself, so NotEqual(NaN, NaN) is true, as in TensorFlow.
struct NotEqualF {
  using Types = TypeList<float, double, int32_t, int64_t, bool, std::string>;
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return a != b;
  }
};

#define TW_NUMERIC "{float, double, int32, int64}"
TW_BINARY_OP("LessEqual", LessEqualF, TW_NUMERIC, "bool", "x <= y, with broadcasting.");
TW_BINARY_OP("GreaterEqual", GreaterEqualF, TW_NUMERIC, "bool", "x >= y, with broadcasting.");
TW_BINARY_OP("NotEqual", NotEqualF, "{float, double, int32, int64, bool, string}", "bool",
             "x != y, with broadcasting.");
#undef TW_NUMERIC

// ---- Logical ops ----
// As in TensorFlow their inputs are bool by definition, without a type attribute.

using BoolTypes = TypeList<bool>;

struct LogicalAndF {
  using Types = BoolTypes;
  bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOrF {
  using Types = BoolTypes;
  bool operator()(bool a, bool b) const { return a || b; }
};
struct LogicalNotF {
  using Types = BoolTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = !x[i];
  }
};

TW_REGISTER_OP("LogicalAnd")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .Doc("x AND y, element-wise with broadcasting.");
TW_REGISTER_KERNEL("LogicalAnd", "CPU", BinaryOp<LogicalAndF>);

TW_REGISTER_OP("LogicalOr")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .Doc("x OR y, element-wise with broadcasting.");
TW_REGISTER_KERNEL("LogicalOr", "CPU", BinaryOp<LogicalOrF>);

TW_REGISTER_OP("LogicalNot").Input("x: bool").Output("y: bool").Doc("NOT x, element-wise.");
TW_REGISTER_KERNEL("LogicalNot", "CPU", UnaryOp<LogicalNotF>);

// ---- Where ----

TW_REGISTER_OP("Where")
    .Input("input: T")
    .Output("index: int64")
    .Attr("T: {bool, float, double, int32, int64} = bool")
    .Doc(
        "The coordinates of the true (nonzero) elements of input, one row each in row-major "
        "order: an int64 matrix [number of true elements, rank of input].");

using WhereTypes = TypeList<bool, float, double, int32_t, int64_t>;

class WhereOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const bool known = Dispatch(WhereTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // NaN is nonzero, so true; -0.0 is zero.
      const auto in = input.flat<T>();
      const auto is_true = [](const T& v) { return v != T(0); };
      const int64_t num_true = std::count_if(in.begin(), in.end(), is_true);
      const int rank = input.rank();
      Tensor* out = nullptr;
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({num_true, rank}), &out));
      int64_t* dst = out->flat<int64_t>().data();
      // The coordinates of element i, advanced like an odometer as i goes up.
      std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
      for (size_t i = 0; i < in.size(); ++i) {
        if (is_true(in[i])) dst = std::copy(coord.begin(), coord.end(), dst);
        for (int d = rank - 1; d >= 0; --d) {
          if (++coord[d] < input.dim(d)) break;
          coord[d] = 0;
        }
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("Where", "CPU", WhereOp);

TW_NO_GRADIENT("LessEqual");
TW_NO_GRADIENT("GreaterEqual");
TW_NO_GRADIENT("NotEqual");
TW_NO_GRADIENT("LogicalAnd");
TW_NO_GRADIENT("LogicalOr");
TW_NO_GRADIENT("LogicalNot");
TW_NO_GRADIENT("Where");

}  // namespace

namespace ops {

Output LessEqual(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("LessEqual", {{x}, {y}});
}
Output GreaterEqual(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("GreaterEqual", {{x}, {y}});
}
Output NotEqual(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("NotEqual", {{x}, {y}});
}
Output LogicalAnd(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("LogicalAnd", {{x}, {y}});
}
Output LogicalOr(const Scope& scope, Input x, Input y) {
  return scope.AddNodeOutput("LogicalOr", {{x}, {y}});
}
Output LogicalNot(const Scope& scope, Input x) { return scope.AddNodeOutput("LogicalNot", {{x}}); }
Output Where(const Scope& scope, Input input) { return scope.AddNodeOutput("Where", {{input}}); }

}  // namespace ops
}  // namespace tw
