// Neural-network ops: activations (Relu, Sigmoid, Tanh), Softmax and LogSoftmax over the
// last dimension, SparseSoftmaxCrossEntropyWithLogits, BiasAdd, InTopKV2. Definitions, CPU kernels,
// gradients (with their helper ops ReluGrad, SigmoidGrad, TanhGrad, BiasAddGrad) and
// graph-building functions.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
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

// ---- InTopKV2 ----
TW_REGISTER_OP("InTopKV2")
    .Input("predictions: float")
    .Input("targets: T")
    .Input("k: T")
    .Output("precision: bool")
    .Attr("T: {int32, int64} = int32")
    .Doc(
        "Whether each row's target class is among the k largest predictions [batch, "
        "classes]: fewer than k classes score strictly higher (ties at the boundary are all "
        "in). False for a non-finite prediction or a target outside [0, classes).");

class InTopKOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& predictions = ctx->input(0);
    const Tensor& targets = ctx->input(1);
    const Tensor& k_tensor = ctx->input(2);
    TW_OP_REQUIRES(ctx, predictions.rank() == 2,
                   errors::InvalidArgument("node ", name(), ": predictions must be 2-dimensional",
                                           ", got shape ", predictions.shape().DebugString()));
    TW_OP_REQUIRES(ctx, targets.rank() == 1 && targets.dim(0) == predictions.dim(0),
                   errors::InvalidArgument("node ", name(), ": First dimension of predictions ",
                                           predictions.dim(0), " must match length of targets ",
                                           targets.rank() == 1 ? targets.dim(0) : -1));
    TW_OP_REQUIRES(ctx, k_tensor.num_elements() == 1,
                   errors::InvalidArgument("node ", name(), ": k must be a scalar, got shape ",
                                           k_tensor.shape().DebugString()));
    std::vector<int64_t> target_values;
    int64_t k = 0;
    Dispatch(TypeList<int32_t, int64_t>{}, targets.dtype(), [&](auto tag) {
      using L = typename decltype(tag)::type;
      for (L v : targets.flat<L>()) target_values.push_back(static_cast<int64_t>(v));
      k = static_cast<int64_t>(k_tensor.flat<L>()[0]);
    });
    const int64_t batch = predictions.dim(0);
    const int64_t classes = predictions.dim(1);
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &out));
    auto in = predictions.flat<float>();
    auto precision = out->flat<bool>();
    for (int64_t r = 0; r < batch; ++r) {
      const int64_t target = target_values[static_cast<size_t>(r)];
      bool in_top = target >= 0 && target < classes && std::isfinite(in[r * classes + target]);
      if (in_top) {
        const float score = in[r * classes + target];
        int64_t higher = 0;
        for (int64_t c = 0; c < classes; ++c) higher += in[r * classes + c] > score ? 1 : 0;
        in_top = higher < k;
      }
      precision[r] = in_top;
    }
  }
};
TW_REGISTER_KERNEL("InTopKV2", "CPU", InTopKOp);
TW_NO_GRADIENT("InTopKV2");

// ---- Activation gradients ----

// out = f(a, b) element-wise for two inputs of one shape. Functor has
// `template <typename T> static void Apply(ConstArray<T> a, ConstArray<T> b, MutArray<T> out)`.
// g where y > 0, else 0 (NaN and -0 give 0), vectorized: Eigen's select() is not, in the
// Eigen this builds against, and ReluGrad runs on every hidden activation of a step.
template <typename T>
struct ReluGradOp {
  T operator()(const T& g, const T& y) const { return y > T(0) ? g : T(0); }
  template <typename Packet>
  Packet packetOp(const Packet& g, const Packet& y) const {
    namespace ei = Eigen::internal;
    return ei::pand(ei::pcmp_lt(ei::pzero(y), y), g);
  }
};

}  // namespace
}  // namespace tw

template <typename T>
struct Eigen::internal::functor_traits<tw::ReluGradOp<T>> {
  enum { Cost = 2 * NumTraits<T>::AddCost, PacketAccess = packet_traits<T>::HasCmp };
};

namespace tw {
namespace {

template <typename Functor>
class SameShapeBinaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    TW_OP_REQUIRES(ctx, a.shape() == b.shape(),
                   errors::InvalidArgument(
                       "node ", name(), ": ", type_string(), " inputs must have one shape, got ",
                       a.shape().DebugString(), " and ", b.shape().DebugString()));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, a.shape(), &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto n = static_cast<Eigen::Index>(a.num_elements());
      Functor::template Apply<T>(ConstArray<T>(a.flat<T>().data(), n),
                                 ConstArray<T>(b.flat<T>().data(), n),
                                 MutArray<T>(out->flat<T>().data(), n));
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};

struct ReluGradF {
  template <typename T>
  static void Apply(ConstArray<T> g, ConstArray<T> y, MutArray<T> out) {
    out = g.binaryExpr(y, ReluGradOp<T>());
  }
};
struct SigmoidGradF {
  template <typename T>
  static void Apply(ConstArray<T> y, ConstArray<T> dy, MutArray<T> out) {
    out = dy * y * (T(1) - y);
  }
};
struct TanhGradF {
  template <typename T>
  static void Apply(ConstArray<T> y, ConstArray<T> dy, MutArray<T> out) {
    out = dy * (T(1) - y.square());
  }
};

TW_REGISTER_OP("ReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: {float, double}")
    .Doc("gradients where features > 0, else 0 (features may be Relu's input or output).");
TW_REGISTER_KERNEL("ReluGrad", "CPU", SameShapeBinaryOp<ReluGradF>);

TW_REGISTER_OP("SigmoidGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {float, double}")
    .Doc("dy * y * (1 - y): the gradient of y = Sigmoid(x) from y.");
TW_REGISTER_KERNEL("SigmoidGrad", "CPU", SameShapeBinaryOp<SigmoidGradF>);

TW_REGISTER_OP("TanhGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {float, double}")
    .Doc("dy * (1 - y^2): the gradient of y = Tanh(x) from y.");
TW_REGISTER_KERNEL("TanhGrad", "CPU", SameShapeBinaryOp<TanhGradF>);

// ---- BiasAdd and BiasAddGrad ----
// data_format "NHWC": the bias runs along the last dimension; "NCHW": along dimension 1 (TF's
// CPU kernels, any rank >= 2). The value is viewed as [outer, channels, inner] with inner 1
// for NHWC, so both formats are one loop over contiguous runs.
struct BiasLayout {
  int64_t outer = 0, channels = 0, inner = 0;
};

class BiasKernel : public OpKernel {
 public:
  explicit BiasKernel(OpKernelConstruction* c) : OpKernel(c) {
    std::string format = "NHWC";
    if (c->GetAttr("data_format", &format).ok() && format != "NHWC" && format != "NCHW") {
      c->SetStatus(errors::InvalidArgument("node ", name(), ": Invalid data format"));
    }
    nchw_ = format == "NCHW";
  }

 protected:
  StatusOr<BiasLayout> Layout(const TensorShape& value) const {
    if (value.rank() < 2) {
      return errors::InvalidArgument("node ", name(),
                                     ": Input tensor must be at least 2D: ", value.DebugString());
    }
    const int axis = nchw_ ? 1 : value.rank() - 1;
    BiasLayout l;
    l.channels = value.dim(axis);
    l.outer = 1;
    l.inner = 1;
    for (int i = 0; i < axis; ++i) l.outer *= value.dim(i);
    for (int i = axis + 1; i < value.rank(); ++i) l.inner *= value.dim(i);
    return l;
  }
  bool nchw_ = false;
};

TW_REGISTER_OP("BiasAdd")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("data_format: string = 'NHWC'")
    .Doc(
        "value + bias, bias a vector added along value's channel dimension (last for NHWC, "
        "1 for NCHW).");

class BiasAddOp : public BiasKernel {
 public:
  using BiasKernel::BiasKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    auto l = Layout(value.shape());
    TW_OP_REQUIRES_OK(ctx, l.status());
    TW_OP_REQUIRES(ctx, bias.rank() == 1 && bias.dim(0) == l->channels,
                   errors::InvalidArgument("node ", name(), ": BiasAdd needs a bias vector as ",
                                           "long as value's channel dimension, got value ",
                                           value.shape().DebugString(), " and bias ",
                                           bias.shape().DebugString()));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, value.shape(), &out));
    if (out->num_elements() == 0) return;
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* b = bias.flat<T>().data();
      const T* in = value.flat<T>().data();
      T* o = out->flat<T>().data();
      const int64_t c = l->channels, inner = l->inner;
      for (int64_t r = 0; r < l->outer; ++r) {
        if (inner == 1) {
          MutArray<T>(o + r * c, c) = ConstArray<T>(in + r * c, c) + ConstArray<T>(b, c);
          continue;
        }
        for (int64_t k = 0; k < c; ++k) {
          const int64_t at = (r * c + k) * inner;
          MutArray<T>(o + at, inner) = ConstArray<T>(in + at, inner) + b[k];
        }
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("BiasAdd", "CPU", BiasAddOp);

TW_REGISTER_OP("BiasAddGrad")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("data_format: string = 'NHWC'")
    .Doc(
        "The sum of out_backprop over every dimension but the channels': BiasAdd's bias "
        "gradient.");

class BiasAddGradOp : public BiasKernel {
 public:
  using BiasKernel::BiasKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    auto l = Layout(g.shape());
    TW_OP_REQUIRES_OK(ctx, l.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({l->channels}), &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t c = l->channels, inner = l->inner;
      MutArray<T> o(out->flat<T>().data(), c);
      o.setZero();
      if (c == 0 || inner == 0) return;
      const T* in = g.flat<T>().data();
      // Row by row, so the additions run along contiguous memory in vector lanes.
      for (int64_t r = 0; r < l->outer; ++r) {
        if (inner == 1) {
          o += ConstArray<T>(in + r * c, c);
          continue;
        }
        for (int64_t k = 0; k < c; ++k)
          o[k] += ConstArray<T>(in + (r * c + k) * inner, inner).sum();
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("BiasAddGrad", "CPU", BiasAddGradOp);

// ---- Gradients ----

Status ReluGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::ReluGrad(scope, grad_outputs[0].dense, op.output(0));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Relu", ReluGradient);

Status SigmoidGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::SigmoidGrad(scope, op.output(0), grad_outputs[0].dense);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Sigmoid", SigmoidGradient);

Status TanhGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::TanhGrad(scope, op.output(0), grad_outputs[0].dense);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Tanh", TanhGradient);

// With y = softmax(x) over the last dimension: dx = (g - sum(g * y)) * y.
Status SoftmaxGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  const Output& y = op.output(0);
  const Output dot = ops::Sum(scope, ops::Mul(scope, g, y), -1, {.keep_dims = true});
  (*grad_inputs)[0].dense = ops::Mul(scope, ops::Sub(scope, g, dot), y);
  return OkStatus();
}
TW_REGISTER_GRADIENT("Softmax", SoftmaxGradient);

// With y = log_softmax(x): dx = g - sum(g) * exp(y).
Status LogSoftmaxGradient(const Scope& scope, const ForwardOp& op,
                          const std::vector<Gradient>& grad_outputs,
                          std::vector<Gradient>* grad_inputs) {
  const Output& g = grad_outputs[0].dense;
  const Output total = ops::Sum(scope, g, -1, {.keep_dims = true});
  (*grad_inputs)[0].dense =
      ops::Sub(scope, g, ops::Mul(scope, total, ops::Exp(scope, op.output(0))));
  return OkStatus();
}
TW_REGISTER_GRADIENT("LogSoftmax", LogSoftmaxGradient);

// The op computes its own gradient (output 1); scale each example's row by the gradient of
// its loss. The labels are integers and have none.
Status SparseSoftmaxCrossEntropyGradient(const Scope& scope, const ForwardOp& op,
                                         const std::vector<Gradient>& grad_outputs,
                                         std::vector<Gradient>* grad_inputs) {
  if (grad_outputs[1].exists()) {
    return errors::InvalidArgument(
        "the gradient through output 1 (backprop) of SparseSoftmaxCrossEntropyWithLogits is "
        "not defined (a second derivative)");
  }
  const Output column = ops::Reshape(scope, grad_outputs[0].dense, {-1, 1});
  (*grad_inputs)[0].dense = ops::Mul(scope, op.output(1), column);
  return OkStatus();
}
TW_REGISTER_GRADIENT("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxCrossEntropyGradient);

Status BiasAddGradient(const Scope& scope, const ForwardOp& op,
                       const std::vector<Gradient>& grad_outputs,
                       std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0] = grad_outputs[0];
  std::string format = "NHWC";
  (void)op.GetAttr("data_format", &format);  // absent in graphs from before the attr
  if (op.needs_gradient(1))
    (*grad_inputs)[1].dense = ops::BiasAddGrad(scope, grad_outputs[0].dense, format);
  return OkStatus();
}
TW_REGISTER_GRADIENT("BiasAdd", BiasAddGradient);

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

Output ReluGrad(const Scope& scope, Input gradients, Input activations) {
  return scope.AddNodeOutput("ReluGrad", {{gradients}, {activations}});
}
Output SigmoidGrad(const Scope& scope, Input y, Input dy) {
  return scope.AddNodeOutput("SigmoidGrad", {{y}, {dy}});
}
Output TanhGrad(const Scope& scope, Input y, Input dy) {
  return scope.AddNodeOutput("TanhGrad", {{y}, {dy}});
}
Output BiasAdd(const Scope& scope, Input value, Input bias, const std::string& data_format) {
  return scope.AddNodeOutput("BiasAdd", {{value}, {bias}},
                             {{"data_format", MakeAttr(data_format)}});
}
Output BiasAddGrad(const Scope& scope, Input out_backprop, const std::string& data_format) {
  return scope.AddNodeOutput("BiasAddGrad", {{out_backprop}},
                             {{"data_format", MakeAttr(data_format)}});
}

SoftmaxCrossEntropyOutputs SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                               Input labels) {
  const Operation op = scope.AddNode("SparseSoftmaxCrossEntropyWithLogits", {{features}, {labels}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

}  // namespace ops
}  // namespace tw
