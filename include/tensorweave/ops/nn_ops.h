// Convolutional networks' ops: 2-D convolution (also depthwise) and pooling over NHWC
// images, batch normalization and local response normalization, with their gradient ops
// (tw::Gradients uses them; they are also what Conv2DTranspose builds on).
//
//   auto y = ops::Conv2D(scope, images, filter, {.strides = {1, 2, 2, 1}, .padding = "SAME"});
//   auto p = ops::MaxPool(scope, y, {.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}});
//
// As TF on CPU: the window ops take NHWC only (data_format "NCHW" is refused with TF's
// message); strides, dilations and ksize are NHWC lists with 1 for the batch and the depth.
// FusedBatchNorm takes NHWC and NCHW.
#ifndef TENSORWEAVE_OPS_NN_OPS_H_
#define TENSORWEAVE_OPS_NN_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensorweave/scope.h"

namespace tw::ops {

struct Conv2DOptions {
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::string padding = "VALID";  // "SAME", "VALID" or "EXPLICIT"
  // With "EXPLICIT": [before, after] for each of N, H, W, C (zeros for N and C).
  std::vector<int64_t> explicit_paddings;
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  std::string data_format = "NHWC";
};

// input [batch, height, width, in_channels] (float or double) convolved with filter
// [filter_height, filter_width, in_channels, out_channels]: [batch, out_height, out_width,
// out_channels], the output sizes as TF computes them for the padding.
Output Conv2D(const Scope& scope, Input input, Input filter, const Conv2DOptions& options = {});
// Conv2D's gradient with respect to its input, whose shape `input_sizes` (an int32 or int64
// vector) gives; `out_backprop` has Conv2D's output shape. Also the transposed convolution.
Output Conv2DBackpropInput(const Scope& scope, Input input_sizes, Input filter, Input out_backprop,
                           const Conv2DOptions& options = {});
// Conv2D's gradient with respect to its filter, of shape `filter_sizes`.
Output Conv2DBackpropFilter(const Scope& scope, Input input, Input filter_sizes, Input out_backprop,
                            const Conv2DOptions& options = {});

struct PoolOptions {
  std::vector<int64_t> ksize = {1, 2, 2, 1};
  std::vector<int64_t> strides = {1, 2, 2, 1};
  std::string padding = "VALID";  // "SAME" or "VALID"
  std::string data_format = "NHWC";
};

// The maximum of each ksize window of `input` [batch, height, width, channels].
Output MaxPool(const Scope& scope, Input input, const PoolOptions& options = {});
// MaxPool's gradient: `grad` (MaxPool's output shape) routed to the first maximum of each
// window of `orig_input`.
Output MaxPoolGrad(const Scope& scope, Input orig_input, Input orig_output, Input grad,
                   const PoolOptions& options = {});
// The mean of each window of `value`, counting only the elements inside the image.
Output AvgPool(const Scope& scope, Input value, const PoolOptions& options = {});
// AvgPool's gradient, of shape `orig_input_shape` (an int32 vector).
Output AvgPoolGrad(const Scope& scope, Input orig_input_shape, Input grad,
                   const PoolOptions& options = {});

// ---- Batch normalization (src/ops/batch_norm_ops.cc) ----

struct FusedBatchNormOptions {
  float epsilon = 1e-4f;
  std::string data_format = "NHWC";  // or "NCHW"
  bool is_training = true;
};

struct FusedBatchNormOutputs {
  Output y, batch_mean, batch_variance, reserve_space_1, reserve_space_2, reserve_space_3;
};

// Batch normalization of 4-D x per channel (a FusedBatchNormV3 node): y = (x - mean) *
// rsqrt(variance + epsilon) * scale + offset. Training: the batch's mean and variance over
// N, H, W (mean and variance inputs unused, may be empty); batch_variance is
// Bessel-corrected, reserve_space_2 the biased variance. Inference: the given mean and
// variance, passed through as batch_mean and batch_variance.
FusedBatchNormOutputs FusedBatchNorm(const Scope& scope, Input x, Input scale, Input offset,
                                     Input mean, Input variance,
                                     const FusedBatchNormOptions& options = {});

struct FusedBatchNormGradOutputs {
  Output x_backprop, scale_backprop, offset_backprop;
};
// FusedBatchNorm's gradients (a FusedBatchNormGradV2 node) from y's gradient; the reserve
// spaces are the forward op's (training) or its mean and variance inputs (inference).
FusedBatchNormGradOutputs FusedBatchNormGrad(const Scope& scope, Input y_backprop, Input x,
                                             Input scale, Input reserve_space_1,
                                             Input reserve_space_2,
                                             const FusedBatchNormOptions& options = {});
// The same as a FusedBatchNormGradV3 node (reserve_space_3: the forward V3's last output).
FusedBatchNormGradOutputs FusedBatchNormGradV3(const Scope& scope, Input y_backprop, Input x,
                                               Input scale, Input reserve_space_1,
                                               Input reserve_space_2, Input reserve_space_3,
                                               const FusedBatchNormOptions& options = {});

// ---- Depthwise convolution (src/ops/depthwise_conv_ops.cc) ----

struct DepthwiseConv2dOptions {
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::string padding = "VALID";  // "SAME" or "VALID"
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  std::string data_format = "NHWC";  // NHWC only on CPU, as TF
};

// input [batch, h, w, in_c] with filter [kh, kw, in_c, M]: each input channel c convolved
// with its own M filters, output channel c * M + m: [batch, out_h, out_w, in_c * M].
Output DepthwiseConv2dNative(const Scope& scope, Input input, Input filter,
                             const DepthwiseConv2dOptions& options = {});
// Its gradients with respect to the input (shape `input_sizes`, int32) and the filter.
Output DepthwiseConv2dNativeBackpropInput(const Scope& scope, Input input_sizes, Input filter,
                                          Input out_backprop,
                                          const DepthwiseConv2dOptions& options = {});
Output DepthwiseConv2dNativeBackpropFilter(const Scope& scope, Input input, Input filter_sizes,
                                           Input out_backprop,
                                           const DepthwiseConv2dOptions& options = {});

// ---- Local response normalization (src/ops/lrn_ops.cc) ----

struct LrnOptions {
  int64_t depth_radius = 5;
  float bias = 1.0f;
  float alpha = 1.0f;
  float beta = 0.5f;
};
// input [batch, h, w, depth] / (bias + alpha * sqr_sum)^beta, sqr_sum the sum of the
// squares of input[..., d - depth_radius .. d + depth_radius] inside the depth.
Output LRN(const Scope& scope, Input input, const LrnOptions& options = {});
// LRN's gradient from input_grads (the output's gradient), the input and the output.
Output LRNGrad(const Scope& scope, Input input_grads, Input input_image, Input output_image,
               const LrnOptions& options = {});

// ---- Candidate sampling (src/ops/candidate_sampler_ops.cc) ----

struct CandidateSamplerOptions {
  int64_t num_true = 1;     // columns of true_classes
  int64_t num_sampled = 1;  // classes to draw
  bool unique = true;       // without repeats (num_sampled <= range_max)
  int64_t range_max = 1;    // classes are [0, range_max)
  int64_t seed = 0, seed2 = 0;
};
struct CandidateSample {
  Output sampled_candidates;      // int64 [num_sampled]
  Output true_expected_count;     // float, true_classes' shape
  Output sampled_expected_count;  // float [num_sampled]
};
// Classes drawn with P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1), for
// int64 true_classes [batch, num_true], and each class's expected count in such a draw.
CandidateSample LogUniformCandidateSampler(const Scope& scope, Input true_classes,
                                           const CandidateSamplerOptions& options);
// The same with every class equally likely.
CandidateSample UniformCandidateSampler(const Scope& scope, Input true_classes,
                                        const CandidateSamplerOptions& options);
struct AccidentalHits {
  Output indices;  // int32: the row of true_classes
  Output ids;      // int64: the position in sampled_candidates
  Output weights;  // float: -FLT_MAX each
};
// The sampled candidates that are also a true class of a row.
AccidentalHits ComputeAccidentalHits(const Scope& scope, Input true_classes,
                                     Input sampled_candidates, int64_t num_true);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_NN_OPS_H_
