#include "examples/mnist_model.h"

#include <cmath>
#include <string>
#include <vector>

#include "tensorweave/ops/activation_ops.h"
#include "tensorweave/ops/cwise_math_ops.h"
#include "tensorweave/ops/nn_ops.h"
#include "tensorweave/train/gradients.h"

namespace tw::examples {
namespace {

constexpr int kPixels = 28 * 28;
constexpr int kClasses = 10;

// How a layer's weights start.
enum class Init {
  kScaledNormal,  // truncated normal scaled by 1/sqrt(fan-in): the MLP's
  kGlorot,        // uniform in +-sqrt(6 / (fan-in + fan-out)): tf.layers' default, the conv net's
};

// A layer's weights (of `shape`: HWIO for a convolution, [in, out] for a dense layer) and
// biases; `layer` names them ("hidden/weights", ...).
struct Layer {
  ops::Variable weights, biases;
};

Layer MakeLayer(const Scope& scope, train::ModelVariables* variables, const std::string& layer,
                const std::vector<int64_t>& shape, Init init, float bias, int64_t seed) {
  const Scope s = scope.NewSubScope(layer);
  int64_t size = 1;
  std::vector<int32_t> dims;
  for (int64_t d : shape) {
    size *= d;
    dims.push_back(static_cast<int32_t>(d));
  }
  // A convolution's window counts towards both fans, as in TF's initializers.
  const int64_t out = shape.back();
  const int64_t fan_in = size / out;
  const int64_t fan_out = size / shape[shape.size() - 2];
  const Output dims_tensor =
      ops::Const(s, Tensor::FromVector<int32_t>(dims, {static_cast<int64_t>(dims.size())}));
  const ops::RandomOptions random{.seed = seed, .seed2 = seed == 0 ? 0 : size};
  Output initial;
  if (init == Init::kScaledNormal) {
    initial = ops::Mul(s, ops::TruncatedNormal(s, dims_tensor, random),
                       1.0f / std::sqrt(static_cast<float>(fan_in)));
  } else {
    const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
    initial =
        ops::Sub(s, ops::Mul(s, ops::RandomUniform(s, dims_tensor, random), 2 * limit), limit);
  }
  const int out_units = static_cast<int>(out);
  return Layer{
      .weights = variables->Add(s, "weights", DT_FLOAT, shape, initial),
      .biases = variables->Add(s, "biases", DT_FLOAT, {out}, ops::Fill(s, {out_units}, bias)),
  };
}

Output Dense(const Scope& scope, const Layer& layer, const Output& x) {
  return ops::BiasAdd(scope, ops::MatMul(scope, x, ops::ReadVariable(scope, layer.weights)),
                      ops::ReadVariable(scope, layer.biases));
}

// SAME 5x5 convolution, ReLU, then 2x2 max pooling with stride 2.
Output ConvPool(const Scope& scope, const Layer& layer, const Output& x) {
  const Output conv = ops::Conv2D(scope, x, ops::ReadVariable(scope, layer.weights),
                                  {.strides = {1, 1, 1, 1}, .padding = "SAME"});
  const Output relu =
      ops::Relu(scope, ops::BiasAdd(scope, conv, ops::ReadVariable(scope, layer.biases)));
  return ops::MaxPool(scope, relu,
                      {.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"});
}

// Units kept with probability keep_prob and scaled by 1 / keep_prob, as tf.nn.dropout:
// floor(keep_prob + U[0, 1)) is 1 with probability keep_prob.
Output Dropout(const Scope& scope, const Output& x, const Output& keep_prob, int64_t seed) {
  const Output draw =
      ops::RandomUniform(scope, ops::Shape(scope, x), {.seed = seed, .seed2 = seed == 0 ? 0 : 7});
  const Output mask = ops::Floor(scope, ops::Add(scope, draw, keep_prob));
  return ops::Mul(scope, ops::Div(scope, x, keep_prob), mask);
}

// The logits of the MLP, or of the conv net (whose keep_prob `m` gets).
Output Logits(const Scope& scope, train::ModelVariables* variables,
              const MnistModelOptions& options, MnistModel* m) {
  const int64_t seed = options.seed;
  if (options.architecture == MnistArchitecture::kMlp) {
    const Layer hidden = MakeLayer(scope, variables, "hidden", {kPixels, options.hidden_units},
                                   Init::kScaledNormal, 0.0f, seed);
    const Layer softmax = MakeLayer(scope, variables, "softmax", {options.hidden_units, kClasses},
                                    Init::kScaledNormal, 0.0f, seed);
    return Dense(scope, softmax, ops::Relu(scope, Dense(scope, hidden, m->images)));
  }
  const Layer conv1 =
      MakeLayer(scope, variables, "conv1", {5, 5, 1, 32}, Init::kGlorot, 0.1f, seed);
  const Layer conv2 =
      MakeLayer(scope, variables, "conv2", {5, 5, 32, 64}, Init::kGlorot, 0.1f, seed);
  const Layer dense =
      MakeLayer(scope, variables, "dense", {7 * 7 * 64, 1024}, Init::kGlorot, 0.1f, seed);
  const Layer softmax =
      MakeLayer(scope, variables, "softmax", {1024, kClasses}, Init::kGlorot, 0.0f, seed);
  m->keep_prob =
      ops::PlaceholderWithDefault(scope.WithOpName("keep_prob"), 1.0f, std::vector<int64_t>{});
  const Output images = ops::Reshape(scope, m->images, {-1, 28, 28, 1});
  const Output pooled = ConvPool(scope, conv2, ConvPool(scope, conv1, images));
  const Output flat = ops::Reshape(scope, pooled, {-1, 7 * 7 * 64});
  const Output hidden = ops::Relu(scope, Dense(scope, dense, flat));
  return Dense(scope, softmax, Dropout(scope, hidden, m->keep_prob, seed));
}

}  // namespace

MnistModel BuildMnistModel(const Scope& scope, train::ModelVariables* variables,
                           const MnistModelOptions& options) {
  MnistModel m;
  m.global_step = train::CreateGlobalStep(scope, variables);
  m.step = ops::ReadVariable(scope.WithOpName("step"), m.global_step);
  if (options.images && options.labels) {
    m.images = ops::Identity(scope.WithOpName("images"), *options.images);
    m.labels = ops::Identity(scope.WithOpName("labels"), *options.labels);
  } else {
    m.images =
        ops::Placeholder(scope.WithOpName("images"), DT_FLOAT,
                         ops::PlaceholderOptions{.shape = std::vector<int64_t>{-1, kPixels}});
    m.labels = ops::Placeholder(scope.WithOpName("labels"), DT_INT32,
                                ops::PlaceholderOptions{.shape = std::vector<int64_t>{-1}});
  }
  const Output logits = Logits(scope, variables, options, &m);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(scope, logits, m.labels);
  m.loss = ops::Mean(scope.WithOpName("loss"), xent.loss, 0);
  const Output predicted = ops::ArgMax(scope, logits, 1, {.output_type = DT_INT32});
  const Output hits = ops::Cast(scope, ops::Equal(scope, predicted, m.labels), DT_INT32);
  m.correct = ops::Sum(scope.WithOpName("correct"), hits, 0);
  m.accuracy = ops::Mean(scope.WithOpName("accuracy"), ops::Cast(scope, hits, DT_FLOAT), 0);
  return m;
}

}  // namespace tw::examples
