#include "examples/mnist_model.h"

#include <cmath>

#include "tensorweave/train/gradients.h"

namespace tw::examples {
namespace {

constexpr int kPixels = 28 * 28;
constexpr int kClasses = 10;

// A dense layer's weights and biases; `layer` names them ("hidden/weights", ...).
struct Dense {
  ops::Variable weights, biases;
};

Dense MakeDense(const Scope& scope, train::ModelVariables* variables, const std::string& layer,
                int64_t in, int64_t out, int64_t seed) {
  const Scope s = scope.NewSubScope(layer);
  const float scale = 1.0f / std::sqrt(static_cast<float>(in));
  Output init = ops::Mul(s,
                         ops::TruncatedNormal(s, {static_cast<int>(in), static_cast<int>(out)},
                                              {.seed = seed, .seed2 = seed == 0 ? 0 : in * out}),
                         scale);
  return Dense{
      .weights = variables->Add(s, "weights", DT_FLOAT, {in, out}, init),
      .biases =
          variables->Add(s, "biases", DT_FLOAT, {out}, ops::Fill(s, {static_cast<int>(out)}, 0.0f)),
  };
}

Output Apply(const Scope& scope, const Dense& layer, const Output& x) {
  return ops::BiasAdd(scope, ops::MatMul(scope, x, ops::ReadVariable(scope, layer.weights)),
                      ops::ReadVariable(scope, layer.biases));
}

}  // namespace

MnistModel BuildMnistModel(const Scope& scope, train::ModelVariables* variables,
                           const MnistModelOptions& options) {
  MnistModel m;
  m.global_step = train::CreateGlobalStep(scope, variables);
  m.step = ops::ReadVariable(scope.WithOpName("step"), m.global_step);
  const Dense hidden =
      MakeDense(scope, variables, "hidden", kPixels, options.hidden_units, options.seed);
  const Dense softmax =
      MakeDense(scope, variables, "softmax", options.hidden_units, kClasses, options.seed);
  m.images = ops::Placeholder(scope.WithOpName("images"), DT_FLOAT,
                              ops::PlaceholderOptions{.shape = std::vector<int64_t>{-1, kPixels}});
  m.labels = ops::Placeholder(scope.WithOpName("labels"), DT_INT32,
                              ops::PlaceholderOptions{.shape = std::vector<int64_t>{-1}});
  const Output h = ops::Relu(scope, Apply(scope, hidden, m.images));
  const Output logits = Apply(scope, softmax, h);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(scope, logits, m.labels);
  m.loss = ops::Mean(scope.WithOpName("loss"), xent.loss, 0);
  const Output predicted = ops::ArgMax(scope, logits, 1, {.output_type = DT_INT32});
  const Output hits = ops::Cast(scope, ops::Equal(scope, predicted, m.labels), DT_INT32);
  m.correct = ops::Sum(scope.WithOpName("correct"), hits, 0);
  m.accuracy = ops::Mean(scope.WithOpName("accuracy"), ops::Cast(scope, hits, DT_FLOAT), 0);
  return m;
}

}  // namespace tw::examples
