// Neural-network ops: activations (Relu, Sigmoid, Tanh), Softmax and LogSoftmax over the
// last dimension, and SparseSoftmaxCrossEntropyWithLogits. Definitions, CPU kernels and
// graph-building functions.
#include <cmath>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

// ---- Activations ----

struct ReluF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.max(T(0));
  }
};
struct SigmoidF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    // Eigen's logistic saturates cleanly at both ends instead of computing exp(-x) overflow.
    y = x.logistic();
  }
};
struct TanhF {
  using Types = FloatTypes;
  template <typename T>
  static void Apply(ConstArray<T> x, MutArray<T> y) {
    y = x.tanh();
  }
};

TW_REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {float, double}")
    .Doc("max(features, 0), element-wise.");
TW_REGISTER_KERNEL("Relu", "CPU", UnaryOp<ReluF>);

TW_REGISTER_OP("Sigmoid")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float, double}")
    .Doc("1 / (1 + exp(-x)), element-wise.");
TW_REGISTER_KERNEL("Sigmoid", "CPU", UnaryOp<SigmoidF>);

TW_REGISTER_OP("Tanh")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float, double}")
    .Doc("Hyperbolic tangent, element-wise.");
TW_REGISTER_KERNEL("Tanh", "CPU", UnaryOp<TanhF>);

// ---- Softmax and LogSoftmax ----

// Softmax of one row. Subtracting the row's maximum first keeps exp() in (0, 1], so large
// logits neither overflow to inf nor produce inf/inf = NaN.
template <typename T, bool kLog>
void SoftmaxRow(const T* in, T* out, int64_t classes) {
  ConstArray<T> x(in, classes);
  MutArray<T> y(out, classes);
  const T max = x.maxCoeff();
  if constexpr (kLog) {
    // log softmax = (x - max) - log(sum(exp(x - max)))
    const T log_sum = std::log((x - max).exp().sum());
    y = (x - max) - log_sum;
  } else {
    y = (x - max).exp();
    y /= y.sum();
  }
}

template <bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    TW_OP_REQUIRES(ctx, logits.rank() >= 1,
                   errors::InvalidArgument("node ", name(), ": logits must have at least one ",
                                           "dimension, got shape ", logits.shape().DebugString()));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, logits.shape(), &out));
    const int64_t classes = logits.dim(logits.rank() - 1);
    if (out->num_elements() == 0) return;
    const int64_t rows = logits.num_elements() / classes;
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = logits.flat<T>().data();
      T* o = out->flat<T>().data();
      for (int64_t r = 0; r < rows; ++r) {
        SoftmaxRow<T, kLog>(in + r * classes, o + r * classes, classes);
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};

TW_REGISTER_OP("Softmax")
    .Input("logits: T")
    .Output("softmax: T")
    .Attr("T: {float, double}")
    .Doc("exp(logits) / sum(exp(logits)) over the last dimension, computed stably.");
TW_REGISTER_KERNEL("Softmax", "CPU", SoftmaxOp<false>);

TW_REGISTER_OP("LogSoftmax")
    .Input("logits: T")
    .Output("logsoftmax: T")
    .Attr("T: {float, double}")
    .Doc("logits - log(sum(exp(logits))) over the last dimension, computed stably.");
TW_REGISTER_KERNEL("LogSoftmax", "CPU", SoftmaxOp<true>);

// ---- SparseSoftmaxCrossEntropyWithLogits ----
TW_REGISTER_OP("SparseSoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: Tlabels")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {float, double}")
    .Attr("Tlabels: {int32, int64} = int64")
    .Doc(
        "Per-example cross-entropy of softmax(features) [batch, classes] against class "
        "labels [batch], and its gradient softmax - one_hot(labels).");

class SparseSoftmaxCrossEntropyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    TW_OP_REQUIRES(
        ctx, features.rank() == 2,
        errors::InvalidArgument("node ", name(), ": features must be 2-D ",
                                "[batch, classes], got shape ", features.shape().DebugString()));
    TW_OP_REQUIRES(ctx, labels.rank() == 1 && labels.dim(0) == features.dim(0),
                   errors::InvalidArgument("node ", name(), ": labels must be 1-D [batch] ",
                                           "matching features ", features.shape().DebugString(),
                                           ", got shape ", labels.shape().DebugString()));
    const int64_t batch = features.dim(0);
    const int64_t classes = features.dim(1);

    // Read the labels (as int64) and check them before computing anything.
    std::vector<int64_t> label_values;
    label_values.reserve(static_cast<size_t>(batch));
    Dispatch(TypeList<int32_t, int64_t>{}, labels.dtype(), [&](auto tag) {
      using L = typename decltype(tag)::type;
      for (L v : labels.flat<L>()) label_values.push_back(static_cast<int64_t>(v));
    });
    TW_OP_REQUIRES(ctx, static_cast<int64_t>(label_values.size()) == batch,
                   UnsupportedType(*this, labels.dtype()));
    for (int64_t r = 0; r < batch; ++r) {
      const int64_t label = label_values[r];
      TW_OP_REQUIRES(
          ctx, label >= 0 && label < classes,
          errors::InvalidArgument("node ", name(), ": label ", label, " in row ", r,
                                  " is outside the valid range of classes [0, ", classes, ")"));
    }

    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, features.shape(), &backprop));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = features.flat<T>().data();
      T* grad = backprop->flat<T>().data();
      auto losses = loss->flat<T>();
      for (int64_t r = 0; r < batch; ++r) {
        ConstArray<T> x(in + r * classes, classes);
        MutArray<T> g(grad + r * classes, classes);
        // With e = exp(x - max) and s = sum(e): loss = log(s) - (x[label] - max), and
        // d loss / d x = e / s - one_hot(label).
        const T max = x.maxCoeff();
        g = (x - max).exp();
        const T sum = g.sum();
        const int64_t label = label_values[r];
        losses[r] = std::log(sum) - (x[label] - max);
        g /= sum;
        g[label] -= T(1);
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("SparseSoftmaxCrossEntropyWithLogits", "CPU", SparseSoftmaxCrossEntropyOp);

}  // namespace

namespace ops {

Output Relu(const Scope& scope, Input features) {
  return scope.AddNodeOutput("Relu", {{features}});
}
Output Sigmoid(const Scope& scope, Input x) { return scope.AddNodeOutput("Sigmoid", {{x}}); }
Output Tanh(const Scope& scope, Input x) { return scope.AddNodeOutput("Tanh", {{x}}); }
Output Softmax(const Scope& scope, Input logits) {
  return scope.AddNodeOutput("Softmax", {{logits}});
}
Output LogSoftmax(const Scope& scope, Input logits) {
  return scope.AddNodeOutput("LogSoftmax", {{logits}});
}

SoftmaxCrossEntropyOutputs SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                               Input labels) {
  const Operation op = scope.AddNode("SparseSoftmaxCrossEntropyWithLogits", {{features}, {labels}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

}  // namespace ops
}  // namespace tw
