// Basic ops: definitions, CPU kernels and graph-building functions.
#include "tensorweave/ops/basic_ops.h"

#include "src/framework/op_kernel.h"

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
      s = errors::InvalidArgument("Const value is ", DataTypeName(value_.dtype()),
                                  " but dtype is ", DataTypeName(c->output_type(0)));
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
    ctx->SetStatus(errors::InvalidArgument("You must feed a value for placeholder tensor '",
                                           name(), "' with dtype ",
                                           DataTypeName(output_type(0))));
  }
};
TW_REGISTER_KERNEL("Placeholder", "CPU", PlaceholderOp);

// ---- Identity ----
TW_REGISTER_OP("Identity").Input("input: T").Output("output: T").Attr("T: type").Doc(
    "Returns its input (sharing the buffer).");

class IdentityOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};
TW_REGISTER_KERNEL("Identity", "CPU", IdentityOp);

// ---- NoOp ----
TW_REGISTER_OP("NoOp").Doc("Does nothing.");

class NoOpOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};
TW_REGISTER_KERNEL("NoOp", "CPU", NoOpOp);

}  // namespace

namespace ops {

Output Const(const Scope& scope, const Tensor& value) {
  return scope.AddNodeOutput("Const", {}, {{"value", MakeAttr(value)}, {"dtype", MakeAttr(value.dtype())}});
}

Output Placeholder(const Scope& scope, DataType dtype, const PlaceholderOptions& options) {
  AttrMap attrs{{"dtype", MakeAttr(dtype)}};
  if (options.shape) attrs["shape"] = MakeAttr(PartialShape::Of(*options.shape));
  return scope.AddNodeOutput("Placeholder", {}, attrs);
}

Output Identity(const Scope& scope, Input input) {
  return scope.AddNodeOutput("Identity", {{input}});
}

Operation NoOp(const Scope& scope) { return scope.AddNode("NoOp", {}); }

}  // namespace ops
}  // namespace tw
