// Conditional accumulator ops: definitions, CPU kernels and graph-building functions. The
// accumulator itself is ConditionalAccumulatorResource (conditional_accumulator.h);
// AccumulatorTakeGradient is an asynchronous kernel.

#include "src/framework/op_kernel.h"
#include "src/framework/resource_lookup.h"
#include "src/ops/conditional_accumulator.h"
#include "src/ops/resource_attrs.h"
#include "tensorweave/ops/training_ops.h"  // IWYU pragma: associated

namespace tw {
namespace {

using Reduction = ConditionalAccumulatorResource::Reduction;

TW_REGISTER_OP("ConditionalAccumulator")
    .Output("handle: resource")
    .Attr("dtype: {float, double}")
    .Attr("shape: shape = ?")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("reduction_type: string = 'MEAN'")
    .SetIsStateful()
    .Doc("An accumulator of gradients on this device, created on first use, shared by name.");

class ConditionalAccumulatorOp : public OpKernel {
 public:
  explicit ConditionalAccumulatorOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string container, reduction;
    Status s = c->GetAttr("dtype", &dtype_);
    if (s.ok()) s = c->GetAttr("shape", &shape_);
    if (s.ok()) s = c->GetAttr("container", &container);
    if (s.ok()) s = c->GetAttr("shared_name", &name_);
    if (s.ok()) s = c->GetAttr("reduction_type", &reduction);
    if (s.ok()) {
      auto r = ConditionalAccumulatorResource::ParseReduction(reduction);
      if (r.ok()) reduction_ = *r;
      s = r.status();
    }
    if (s.ok()) s = ValidateContainerAttr(container);
    if (s.ok()) s = ValidateSharedNameAttr(name_);
    if (name_.empty()) name_ = c->def().name();
    ResourceMgr* rm = c->device()->resource_manager();
    container_ = container.empty() ? rm->default_container() : container;
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    auto acc = ctx->resource_manager()->LookupOrCreate<ConditionalAccumulatorResource>(
        container_, name_, [&]() -> StatusOr<std::shared_ptr<ConditionalAccumulatorResource>> {
          return std::make_shared<ConditionalAccumulatorResource>(name_, dtype_, shape_,
                                                                  reduction_);
        });
    TW_OP_REQUIRES_OK(ctx, acc.status());
    TW_OP_REQUIRES_OK(ctx, (*acc)->MatchesSpec(dtype_, shape_, reduction_));
    ctx->set_output(0, Tensor::Scalar(ResourceHandle{ctx->device()->name(), container_, name_,
                                                     ConditionalAccumulatorResource::kTypeName}));
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialShape shape_;
  Reduction reduction_ = Reduction::kMean;
  std::string container_, name_;
};
TW_REGISTER_KERNEL("ConditionalAccumulator", "CPU", ConditionalAccumulatorOp);

StatusOr<std::shared_ptr<ConditionalAccumulatorResource>> LookupAccumulator(OpKernelContext* ctx) {
  auto acc = LookupResource<ConditionalAccumulatorResource>(*ctx, ctx->input(0));
  if (IsNotFound(acc.status())) {
    const ResourceHandle& h = ctx->input(0).flat<ResourceHandle>()[0];
    return errors::NotFound("accumulator ", h.name, " does not exist on ", h.device);
  }
  return acc;
}

// The int scalar input `i` named `what`; InvalidArgument naming the node otherwise.
template <typename T>
StatusOr<T> ScalarInput(OpKernelContext* ctx, int i, const char* what) {
  const Tensor& t = ctx->input(i);
  if (t.rank() != 0) {
    return errors::InvalidArgument(ctx->op_kernel().type_string(), " node ",
                                   ctx->op_kernel().name(), ": ", what,
                                   " must be a scalar, got shape ", t.shape().DebugString());
  }
  return t.scalar<T>();
}

TW_REGISTER_OP("AccumulatorApplyGradient")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Input("gradient: dtype")
    .Attr("dtype: {float, double}")
    .SetIsStateful()
    .Doc("Adds the gradient unless local_step is older than the accumulator's global step.");

class AccumulatorApplyGradientOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto acc = LookupAccumulator(ctx);
    TW_OP_REQUIRES_OK(ctx, acc.status());
    auto step = ScalarInput<int64_t>(ctx, 1, "local_step");
    TW_OP_REQUIRES_OK(ctx, step.status());
    TW_OP_REQUIRES_OK(ctx, (*acc)->ApplyGradient(*step, ctx->input(2)));
  }
};
TW_REGISTER_KERNEL("AccumulatorApplyGradient", "CPU", AccumulatorApplyGradientOp);

TW_REGISTER_OP("AccumulatorTakeGradient")
    .Input("handle: resource")
    .Input("num_required: int32")
    .Output("average: dtype")
    .Attr("dtype: {float, double}")
    .SetIsStateful()
    .Doc("Waits for num_required gradients; outputs their mean (or sum) and resets.");

class AccumulatorTakeGradientOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto acc = LookupAccumulator(ctx);
    TW_OP_REQUIRES_OK_ASYNC(ctx, acc.status(), done);
    TW_OP_REQUIRES_ASYNC(
        ctx, (*acc)->dtype() == output_type(0),
        errors::InvalidArgument("node ", name(), " takes ", DataTypeName(output_type(0)),
                                " gradients from accumulator ", (*acc)->name(), " of dtype ",
                                DataTypeName((*acc)->dtype())),
        done);
    auto n = ScalarInput<int32_t>(ctx, 1, "num_required");
    TW_OP_REQUIRES_OK_ASYNC(ctx, n.status(), done);
    TW_OP_REQUIRES_ASYNC(
        ctx, *n >= 1,
        errors::InvalidArgument("node ", name(), ": num_required must be >= 1, got ", *n), done);
    (*acc)->TakeGradient(*n, ctx->cancellation_manager(),
                         [ctx, done = std::move(done)](StatusOr<Tensor> r) {
                           if (r.ok()) {
                             ctx->set_output(0, *std::move(r));
                           } else {
                             ctx->SetStatus(r.status());
                           }
                           done();
                         });
  }
};
TW_REGISTER_KERNEL("AccumulatorTakeGradient", "CPU", AccumulatorTakeGradientOp);

TW_REGISTER_OP("AccumulatorSetGlobalStep")
    .Input("handle: resource")
    .Input("new_global_step: int64")
    .Attr("reset: bool = false")
    .SetIsStateful()
    .Doc(
        "Raises the global step below which gradients are stale; never lowers it. With reset, "
        "sets it exactly, also lower (after a restore from an older checkpoint).");

class AccumulatorSetGlobalStepOp : public OpKernel {
 public:
  explicit AccumulatorSetGlobalStepOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("reset", &reset_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto acc = LookupAccumulator(ctx);
    TW_OP_REQUIRES_OK(ctx, acc.status());
    auto step = ScalarInput<int64_t>(ctx, 1, "new_global_step");
    TW_OP_REQUIRES_OK(ctx, step.status());
    if (reset_) {
      (*acc)->Reset(*step);
    } else {
      (*acc)->SetGlobalStep(*step);
    }
  }

 private:
  bool reset_ = false;
};
TW_REGISTER_KERNEL("AccumulatorSetGlobalStep", "CPU", AccumulatorSetGlobalStepOp);

TW_REGISTER_OP("AccumulatorNumAccumulated")
    .Input("handle: resource")
    .Output("num_accumulated: int32")
    .SetIsStateful()
    .Doc("How many gradients the accumulator holds.");

class AccumulatorNumAccumulatedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto acc = LookupAccumulator(ctx);
    TW_OP_REQUIRES_OK(ctx, acc.status());
    ctx->set_output(0, Tensor::Scalar((*acc)->num_accumulated()));
  }
};
TW_REGISTER_KERNEL("AccumulatorNumAccumulated", "CPU", AccumulatorNumAccumulatedOp);

}  // namespace

namespace ops {

Accumulator ConditionalAccumulator(const Scope& scope, DataType dtype, std::vector<int64_t> shape,
                                   const AccumulatorOptions& options) {
  Accumulator acc;
  acc.dtype = dtype;
  acc.shape = shape;
  acc.handle = scope.AddNodeOutput("ConditionalAccumulator", {},
                                   {{"dtype", MakeAttr(dtype)},
                                    {"shape", MakeAttr(PartialShape::Of(std::move(shape)))},
                                    {"container", MakeAttr(options.container)},
                                    {"shared_name", MakeAttr(options.shared_name)},
                                    {"reduction_type", MakeAttr(options.reduction)}});
  return acc;
}

Operation AccumulatorApplyGradient(const Scope& scope, const Accumulator& acc, Input local_step,
                                   Input gradient) {
  return scope.AddNode("AccumulatorApplyGradient", {{acc.handle}, {local_step}, {gradient}});
}

Output AccumulatorTakeGradient(const Scope& scope, const Accumulator& acc, Input num_required) {
  return scope.AddNodeOutput("AccumulatorTakeGradient", {{acc.handle}, {num_required}},
                             {{"dtype", MakeAttr(acc.dtype)}});
}

Operation AccumulatorSetGlobalStep(const Scope& scope, const Accumulator& acc,
                                   Input new_global_step, bool reset) {
  return scope.AddNode("AccumulatorSetGlobalStep", {{acc.handle}, {new_global_step}},
                       {{"reset", MakeAttr(reset)}});
}

Output AccumulatorNumAccumulated(const Scope& scope, const Accumulator& acc) {
  return scope.AddNodeOutput("AccumulatorNumAccumulated", {{acc.handle}});
}

}  // namespace ops
}  // namespace tw
