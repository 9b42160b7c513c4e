// Basic ops: definitions, CPU kernels, gradients and graph-building functions. The array ops,
// which move elements between tensors (Reshape, Fill, Concat, Slice, Pack, Gather, ...), are
// in files by family (docs/adding_an_op.md, "Array ops").
#include "tensorweave/ops/basic_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/type_dispatch.h"

namespace tw {
namespace {

// ---- Const ----
TW_REGISTER_OP("Const")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .Doc("A constant tensor.");

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("value", &value_);
    if (s.ok() && value_.dtype() != c->output_type(0)) {
      s = errors::InvalidArgument("Const value is ", DataTypeName(value_.dtype()), " but dtype is ",
                                  DataTypeName(c->output_type(0)));
    }
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, value_); }

 private:
  Tensor value_;
};
TW_REGISTER_KERNEL("Const", "CPU", ConstOp);

// ---- Placeholder ----
TW_REGISTER_OP("Placeholder")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape = ?")
    .Doc("A value that must be fed when the graph runs.");

// Runs only when a placeholder is needed but was not fed.
class PlaceholderOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(errors::InvalidArgument("You must feed a value for placeholder tensor '", name(),
                                           "' with dtype ", DataTypeName(output_type(0))));
  }
};
TW_REGISTER_KERNEL("Placeholder", "CPU", PlaceholderOp);

// ---- Identity ----
TW_REGISTER_OP("Identity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Doc("Returns its input (sharing the buffer).");

class IdentityOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};
TW_REGISTER_KERNEL("Identity", "CPU", IdentityOp);

// ---- StopGradient ----
TW_REGISTER_OP("StopGradient")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Doc("Returns its input; gradients do not flow through it (TF's tf.stop_gradient).");
TW_REGISTER_KERNEL("StopGradient", "CPU", IdentityOp);

// ---- PlaceholderWithDefault ----
TW_REGISTER_OP("PlaceholderWithDefault")
    .Input("input: dtype")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Doc(
        "Its input, unless fed; a fed value must have `shape`, which is the output's static "
        "shape.");
TW_REGISTER_KERNEL("PlaceholderWithDefault", "CPU", IdentityOp);

// ---- NoOp ----
TW_REGISTER_OP("NoOp").Doc("Does nothing.");

class NoOpOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};
TW_REGISTER_KERNEL("NoOp", "CPU", NoOpOp);

// ---- Shape ----
TW_REGISTER_OP("Shape")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = int32")
    .Doc("The dimensions of input, as a 1-D tensor.");

class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const TensorShape& shape = ctx->input(0).shape();
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({shape.rank()}), &out));
    if (output_type(0) == DT_INT64) {
      std::copy(shape.dims().begin(), shape.dims().end(), out->flat<int64_t>().begin());
      return;
    }
    auto f = out->flat<int32_t>();
    for (int d = 0; d < shape.rank(); ++d) {
      TW_OP_REQUIRES(
          ctx, shape.dim(d) <= std::numeric_limits<int32_t>::max(),
          errors::InvalidArgument("node ", name(), ": Shape: dimension ", d, " of input shape ",
                                  shape.DebugString(), " does not fit out_type int32; use int64"));
      f[d] = static_cast<int32_t>(shape.dim(d));
    }
  }
};
TW_REGISTER_KERNEL("Shape", "CPU", ShapeOp);

// ---- ZerosLike, OnesLike ----
TW_REGISTER_OP("ZerosLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float, double, int32, int64, uint8, bool}")
    .Doc("A tensor of x's shape and type filled with 0 (false for bool).");
TW_REGISTER_OP("OnesLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float, double, int32, int64, uint8, bool}")
    .Doc("A tensor of x's shape and type filled with 1 (true for bool).");

template <int kValue>
class FillLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, ctx->input(0).shape(), &out));
    DispatchNumeric(output_type(0), [&]<typename T>() {
      auto f = out->flat<T>();
      std::fill(f.begin(), f.end(), static_cast<T>(kValue));
    });
  }
};
TW_REGISTER_KERNEL("ZerosLike", "CPU", FillLikeOp<0>);
TW_REGISTER_KERNEL("OnesLike", "CPU", FillLikeOp<1>);

// ---- Cast ----
TW_REGISTER_OP("Cast")
    .Input("x: SrcT")
    .Output("y: DstT")
    .Attr("SrcT: {float, double, int32, int64, uint8, bool}")
    .Attr("DstT: {float, double, int32, int64, uint8, bool}")
    .Doc(
        "x converted to DstT. To bool: true when nonzero; from bool: 0 or 1. Floating point "
        "to integer truncates toward zero, saturates at the type's limits and maps NaN to 0; "
        "between integers, values wrap modulo the destination's range.");

// One element of a Cast.
template <typename Dst, typename Src>
Dst CastValue(Src v) {
  if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src(0);
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    // An out-of-range floating-point to integer conversion is undefined behaviour in C++,
    // so the limits are handled before converting (every bound is exact in double).
    const double d = static_cast<double>(v);
    if (std::isnan(d)) return Dst(0);
    if (d >= static_cast<double>(std::numeric_limits<Dst>::max()) + 1.0) {
      return std::numeric_limits<Dst>::max();
    }
    if (d <= static_cast<double>(std::numeric_limits<Dst>::min()) - 1.0) {
      return std::numeric_limits<Dst>::min();
    }
    return static_cast<Dst>(d);
  } else {
    return static_cast<Dst>(v);
  }
}

class CastOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (input_type(0) == output_type(0)) {
      ctx->set_output(0, x);
      return;
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    DispatchNumeric(input_type(0), [&]<typename Src>() {
      DispatchNumeric(output_type(0), [&]<typename Dst>() {
        auto in = x.flat<Src>();
        std::transform(in.begin(), in.end(), out->flat<Dst>().begin(), CastValue<Dst, Src>);
      });
    });
  }
};
TW_REGISTER_KERNEL("Cast", "CPU", CastOp);

// ---- Gradients ----

// Identity passes the gradient on as it is, IndexedSlices included.
Status IdentityGradient(const Scope&, const ForwardOp&, const std::vector<Gradient>& grad_outputs,
                        std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0] = grad_outputs[0];
  return OkStatus();
}
TW_REGISTER_SPARSE_GRADIENT("Identity", IdentityGradient);
TW_REGISTER_SPARSE_GRADIENT("PlaceholderWithDefault", IdentityGradient);

// Between floating-point types the gradient is cast back; a cast from or to an integer or
// bool ends the path (the driver never asks for integer gradients).
Status CastGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  DataType src = DT_INVALID, dst = DT_INVALID;
  TW_RETURN_IF_ERROR(op.GetAttr("SrcT", &src));
  TW_RETURN_IF_ERROR(op.GetAttr("DstT", &dst));
  auto is_float = [](DataType t) { return t == DT_FLOAT || t == DT_DOUBLE; };
  if (is_float(src) && is_float(dst)) {
    (*grad_inputs)[0].dense = ops::Cast(scope, grad_outputs[0].dense, src);
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("Cast", CastGradient);

TW_NO_GRADIENT("Const");
TW_NO_GRADIENT("StopGradient");
TW_NO_GRADIENT("Placeholder");
TW_NO_GRADIENT("Shape");
TW_NO_GRADIENT("ZerosLike");
TW_NO_GRADIENT("OnesLike");

}  // namespace

namespace ops {

Output Const(const Scope& scope, const Tensor& value) {
  return scope.AddNodeOutput("Const", {},
                             {{"value", MakeAttr(value)}, {"dtype", MakeAttr(value.dtype())}});
}

Output Placeholder(const Scope& scope, DataType dtype, const PlaceholderOptions& options) {
  AttrMap attrs{{"dtype", MakeAttr(dtype)}};
  if (options.shape) attrs["shape"] = MakeAttr(PartialShape::Of(*options.shape));
  return scope.AddNodeOutput("Placeholder", {}, attrs);
}

Output PlaceholderWithDefault(const Scope& scope, Input default_value,
                              const std::vector<int64_t>& shape) {
  return scope.AddNodeOutput("PlaceholderWithDefault", {{default_value}},
                             {{"shape", MakeAttr(PartialShape::Of(shape))}});
}

Output Identity(const Scope& scope, Input input) {
  return scope.AddNodeOutput("Identity", {{input}});
}

Output StopGradient(const Scope& scope, Input input) {
  return scope.AddNodeOutput("StopGradient", {{input}});
}

Operation NoOp(const Scope& scope) { return scope.AddNode("NoOp", {}); }

Output Shape(const Scope& scope, Input input, DataType out_type) {
  return scope.AddNodeOutput("Shape", {{input}}, {{"out_type", MakeAttr(out_type)}});
}

Output ZerosLike(const Scope& scope, Input x) { return scope.AddNodeOutput("ZerosLike", {{x}}); }

Output OnesLike(const Scope& scope, Input x) { return scope.AddNodeOutput("OnesLike", {{x}}); }

Output Cast(const Scope& scope, Input x, DataType dst) {
  return scope.AddNodeOutput("Cast", {{x}}, {{"DstT", MakeAttr(dst)}});
}

}  // namespace ops
}  // namespace tw
