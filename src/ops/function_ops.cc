// _Arg and _Retval: how a step's feeds enter and its fetches leave an executable graph.
// The session's pruning (PruneForStep) adds them; users never build them.
#include "src/framework/op_kernel.h"

namespace tw {
namespace {

TW_REGISTER_OP("_Arg")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .Doc("The step's fed value number `index`.");

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->call_frame();
    TW_OP_REQUIRES(ctx, frame != nullptr && index_ < static_cast<int>(frame->args().size()),
                   errors::Internal("_Arg ", name(), " has no fed value ", index_));
    const Tensor& value = frame->args()[index_];
    TW_OP_REQUIRES(
        ctx, value.dtype() == output_type(0),
        errors::InvalidArgument("fed value for ", name(), " is ", DataTypeName(value.dtype()),
                                ", expected ", DataTypeName(output_type(0))));
    ctx->set_output(0, value);
  }

 private:
  int index_ = 0;
};
TW_REGISTER_KERNEL("_Arg", "CPU", ArgOp);

TW_REGISTER_OP("_Retval")
    .Input("input: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .Doc("Makes its input the step's fetched value number `index`.");

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->call_frame();
    TW_OP_REQUIRES(ctx, frame != nullptr && index_ < static_cast<int>(frame->retvals().size()),
                   errors::Internal("_Retval ", name(), " has no slot ", index_));
    frame->retvals()[index_] = ctx->input(0);
  }

 private:
  int index_ = 0;
};
TW_REGISTER_KERNEL("_Retval", "CPU", RetvalOp);

}  // namespace
}  // namespace tw
