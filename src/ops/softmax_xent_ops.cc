// SoftmaxCrossEntropyWithLogits with dense labels (TF's op: two outputs, the per-example loss
// and its gradient with respect to the logits), its shape function and its gradient.
// SparseSoftmaxCrossEntropyWithLogits (class-index labels) is in nn_ops.cc.
#include <cmath>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/graph/shape_inference.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/activation_ops.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

TW_REGISTER_OP("SoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: T")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {float, double}")
    .Doc(
        "Per-example cross-entropy -sum(labels * log_softmax(features)) of features and labels "
        "[batch, classes], and its gradient softmax(features) - labels.");

class SoftmaxCrossEntropyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    TW_OP_REQUIRES(ctx, features.shape() == labels.shape(),
                   errors::InvalidArgument("node ", name(),
                                           ": logits and labels must be same size: logits_size=",
                                           features.shape().DebugString(),
                                           " labels_size=", labels.shape().DebugString()));
    TW_OP_REQUIRES(ctx, features.rank() == 2,
                   errors::InvalidArgument("node ", name(), ": logits must be 2-dimensional, ",
                                           "got shape ", features.shape().DebugString()));
    const int64_t batch = features.dim(0);
    const int64_t classes = features.dim(1);
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, features.shape(), &backprop));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto losses = loss->flat<T>();
      if (classes == 0) {
        for (int64_t r = 0; r < batch; ++r) losses[r] = T(0);
        return;
      }
      const T* in = features.flat<T>().data();
      const T* lab = labels.flat<T>().data();
      T* grad = backprop->flat<T>().data();
      for (int64_t r = 0; r < batch; ++r) {
        const ConstArray<T> x(in + r * classes, classes);
        const ConstArray<T> z(lab + r * classes, classes);
        MutArray<T> g(grad + r * classes, classes);
        // With s = x - max: log_softmax = s - log(sum(exp(s))), stable for large logits.
        const T max = x.maxCoeff();
        g = (x - max).exp();
        const T sum = g.sum();
        const T log_sum = std::log(sum);
        losses[r] = (z * (log_sum - (x - max))).sum();
        g = g / sum - z;
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("SoftmaxCrossEntropyWithLogits", "CPU", SoftmaxCrossEntropyOp);

// loss [batch], backprop [batch, classes]; both inputs rank 2 with mergeable dimensions.
Status SoftmaxCrossEntropyShape(ShapeContext* ctx) {
  std::vector<int64_t> dims = {TensorShape::kUnknownDim, TensorShape::kUnknownDim};
  for (int i = 0; i < 2; ++i) {
    const StaticShape& s = ctx->input(i);
    if (!s) continue;
    if (s->rank() != 2) {
      return ctx->Error(absl::StrCat("Shape must be rank 2 but is rank ", s->rank()));
    }
    for (int d = 0; d < 2; ++d) {
      if (!MergeDim(dims[d], s->dim(d), &dims[d])) {
        return ctx->Error(absl::StrCat("Dimension ", d, " in both shapes must be equal, but are ",
                                       dims[d], " and ", s->dim(d)));
      }
    }
  }
  auto batch = TensorShape::Create({dims[0]});
  auto both = TensorShape::Create(dims);
  if (batch.ok()) ctx->set_output(0, *batch);
  if (both.ok()) ctx->set_output(1, *both);
  return OkStatus();
}
TW_REGISTER_SHAPE_FN("SoftmaxCrossEntropyWithLogits", SoftmaxCrossEntropyShape);

// As TF: the logits' gradient is backprop scaled by each example's loss gradient, plus, for a
// gradient arriving at backprop itself (a second derivative), its product with the softmax
// Jacobian; the labels' gradient is -log_softmax(logits) scaled likewise.
Status SoftmaxCrossEntropyGradient(const Scope& scope, const ForwardOp& op,
                                   const std::vector<Gradient>& grad_outputs,
                                   std::vector<Gradient>* grad_inputs) {
  const Output& logits = op.input(0);
  Output column;
  if (grad_outputs[0].exists()) column = ops::Reshape(scope, grad_outputs[0].dense, {-1, 1});
  if (op.needs_gradient(0)) {
    Output grad;
    if (column.op().valid()) grad = ops::Mul(scope, column, op.output(1));
    if (grad_outputs[1].exists()) {
      const Output& gg = grad_outputs[1].dense;
      const Output softmax = ops::Softmax(scope, logits);
      const Output dot = ops::Sum(scope, ops::Mul(scope, gg, softmax), -1, {.keep_dims = true});
      const Output second = ops::Mul(scope, ops::Sub(scope, gg, dot), softmax);
      grad = grad.op().valid() ? ops::Add(scope, grad, second) : second;
    }
    (*grad_inputs)[0].dense = grad;
  }
  if (op.needs_gradient(1) && column.op().valid()) {
    (*grad_inputs)[1].dense =
        ops::Mul(scope, column, ops::Neg(scope, ops::LogSoftmax(scope, logits)));
  }
  return OkStatus();
}
TW_REGISTER_GRADIENT("SoftmaxCrossEntropyWithLogits", SoftmaxCrossEntropyGradient);

}  // namespace

namespace ops {

SoftmaxCrossEntropyOutputs SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                         Input labels) {
  const Operation op = scope.AddNode("SoftmaxCrossEntropyWithLogits", {{features}, {labels}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

}  // namespace ops
}  // namespace tw
