// The Fashion-MNIST classifiers the ps trainer (examples/mnist_ps.cc) and its benchmark
// train: an MLP 784-256-10 with ReLU, or TF's classic "deep MNIST" convolutional net (conv
// 5x5x32, max pool 2x2, conv 5x5x64, max pool 2x2, dense 1024, dropout, dense 10), each
// with softmax cross-entropy.
#ifndef TENSORWEAVE_EXAMPLES_MNIST_MODEL_H_
#define TENSORWEAVE_EXAMPLES_MNIST_MODEL_H_

#include <cstdint>
#include <optional>

#include "tensorweave/tensorweave.h"
#include "tensorweave/train/optimizer.h"
#include "tensorweave/train/variables.h"

namespace tw::examples {

struct MnistModel {
  Output images;    // float [batch, 784], pixels in [0, 1]: fed, or from the pipeline
  Output labels;    // int32 [batch]: likewise
  Output loss;      // mean cross-entropy of the batch
  Output correct;   // int32: how many of the batch are classified right
  Output accuracy;  // float: correct / batch
  // float scalar: the probability that dropout keeps a unit of the conv net's dense layer;
  // 1 unless fed (training feeds e.g. 0.5). Unused by the MLP.
  Output keep_prob;
  ops::Variable global_step;
  Output step;  // the global step's value
};

enum class MnistArchitecture { kMlp, kConv };

struct MnistModelOptions {
  MnistArchitecture architecture = MnistArchitecture::kMlp;
  int hidden_units = 256;  // the MLP's hidden layer; the conv net's dense layer has 1024
  int64_t seed = 0;        // 0: fresh random initial weights
  // Where a step's images (float [batch, 784]) and labels (int32 [batch]) come from: an
  // input pipeline's tensors (tf.data's GetNext); placeholders to feed when not given.
  // Either way `images` and `labels` of the model can be fed (an evaluation feeds them).
  std::optional<Output> images, labels;
};

// Builds the model's variables (the MLP's weights with truncated-normal values scaled by
// 1/sqrt(fan-in), the conv net's Glorot-uniform as tf.layers makes them; zero biases, 0.1
// for the conv net's ReLU layers so that no unit starts dead; and the global step) into
// `variables`, and the forward pass. The variables follow `scope`'s device functions (a replica
// device setter puts them on the ps tasks).
MnistModel BuildMnistModel(const Scope& scope, train::ModelVariables* variables,
                           const MnistModelOptions& options = {});

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_MNIST_MODEL_H_
