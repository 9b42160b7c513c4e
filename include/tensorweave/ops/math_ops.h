// Graph-building functions for math ops (element-wise with NumPy broadcasting, MatMul,
// reductions) and neural-network ops (activations, softmax, cross-entropy).
//
// Each returns the node's output; errors are recorded in the scope (see scope.h). The type
// attributes (T, Tidx, Tlabels) are inferred from the inputs, so literal inputs decide them:
// `ops::Add(root, x, 1.0f)` needs a float x, and `ops::Sum(root, x, {0, 1})` sums over an
// int32 axis vector.
#ifndef TENSORWEAVE_OPS_MATH_OPS_H_
#define TENSORWEAVE_OPS_MATH_OPS_H_

#include <string>

#include "tensorweave/scope.h"

namespace tw::ops {

// ---- Element-wise binary ops, NumPy broadcasting (T: float, double, int32, int64) ----
// Integer arithmetic wraps on overflow; integer Div truncates toward zero and fails on a
// zero divisor.
Output Add(const Scope& scope, Input x, Input y);
Output Sub(const Scope& scope, Input x, Input y);
Output Mul(const Scope& scope, Input x, Input y);
Output Div(const Scope& scope, Input x, Input y);
Output Maximum(const Scope& scope, Input x, Input y);
Output Minimum(const Scope& scope, Input x, Input y);
// Floor division, rounding toward -inf (7 // -2 = -4; floats floor(x / y)); integers fail
// on a zero divisor with InvalidArgument "node <name>: Integer division by zero".
Output FloorDiv(const Scope& scope, Input x, Input y);
// x - FloorDiv(x, y) * y: the sign of the divisor (7 mod -2 = -1, -7 mod 2 = 1); integers fail
// on a zero divisor like FloorDiv; a float zero divisor gives NaN.
Output FloorMod(const Scope& scope, Input x, Input y);
// x^y; integers wrap on overflow and fail on a negative exponent with InvalidArgument
// "node <name>: Integers to negative integer powers are not allowed".
Output Pow(const Scope& scope, Input x, Input y);

// The element-wise sum of `inputs`, all of one shape (T: float, double, int32, int64).
Output AddN(const Scope& scope, const InputList& inputs);

// For shape vectors s0 and s1 (int32 or int64) that broadcast against each other, the axes
// of the broadcast shape along which each one was stretched. Gradients of broadcasting ops
// sum over r0 and reshape to s0 to get the first input's gradient.
struct BroadcastGradientArgsOutputs {
  Output r0;
  Output r1;
};
BroadcastGradientArgsOutputs BroadcastGradientArgs(const Scope& scope, Input s0, Input s1);

// ---- Comparisons, NumPy broadcasting, bool output ----
// Equal and NotEqual also take bool and string; the others take the numeric types.
Output Equal(const Scope& scope, Input x, Input y);
Output NotEqual(const Scope& scope, Input x, Input y);
Output Less(const Scope& scope, Input x, Input y);
Output LessEqual(const Scope& scope, Input x, Input y);
Output Greater(const Scope& scope, Input x, Input y);
Output GreaterEqual(const Scope& scope, Input x, Input y);

// ---- Logical ops on bool tensors (LogicalAnd and LogicalOr broadcast) ----
Output LogicalAnd(const Scope& scope, Input x, Input y);
Output LogicalOr(const Scope& scope, Input x, Input y);
Output LogicalNot(const Scope& scope, Input x);

// The coordinates of the true (nonzero) elements of `input` (bool, float, double, int32,
// int64), in row-major order: an int64 matrix [number of true elements, rank of input].
Output Where(const Scope& scope, Input input);

// ---- Element-wise unary ops ----
Output Neg(const Scope& scope, Input x);     // float, double, int32, int64
Output Abs(const Scope& scope, Input x);     // float, double, int32, int64 (lowest wraps)
Output Square(const Scope& scope, Input x);  // float, double, int32, int64
Output Sqrt(const Scope& scope, Input x);    // float, double
Output Exp(const Scope& scope, Input x);     // float, double
Output Log(const Scope& scope, Input x);     // float, double

// Picks from `t` where `condition` is true and from `e` elsewhere; the three inputs broadcast
// against each other NumPy-style (like TensorFlow's SelectV2).
Output Select(const Scope& scope, Input condition, Input t, Input e);

// ---- Matrix product of two matrices (T: float, double, int32, int64) ----
struct MatMulOptions {
  bool transpose_a = false;
  bool transpose_b = false;
};
Output MatMul(const Scope& scope, Input a, Input b, const MatMulOptions& options = {});

// ---- Reductions (T: float, double, int32, int64) ----
// `axis` is an int32 or int64 scalar or vector; negative axes count from the end; an empty
// vector reduces nothing. Over no elements, Sum is 0, Prod 1, Mean NaN (integers 0), Max -inf
// (the lowest integer) and Min +inf (the highest integer). Integer Sum and Prod wrap.
struct ReduceOptions {
  bool keep_dims = false;  // keep reduced dimensions with size 1
};
Output Sum(const Scope& scope, Input input, Input axis, const ReduceOptions& options = {});
Output Mean(const Scope& scope, Input input, Input axis, const ReduceOptions& options = {});
Output Max(const Scope& scope, Input input, Input axis, const ReduceOptions& options = {});
Output Min(const Scope& scope, Input input, Input axis, const ReduceOptions& options = {});
Output Prod(const Scope& scope, Input input, Input axis, const ReduceOptions& options = {});
// Logical and (All) and or (Any) of a bool `input` over the axes; true and false when empty.
Output All(const Scope& scope, Input input, Input axis, const ReduceOptions& options = {});
Output Any(const Scope& scope, Input input, Input axis, const ReduceOptions& options = {});

// Gradients of the reductions (T: float, double): the gradient `grad` of
// Sum/Mean/Max/Min/Prod(input, axis) (shaped with or without keep_dims) spread back over an
// input of shape `input_shape` (an int32 or int64 vector) or over `input` itself. Mean
// divides by the count of reduced elements; MaxGrad, given the reduction's `output` (of Max
// or of Min), gives each extremum the gradient, shared equally among ties; ProdGrad gives
// each element the gradient times the product of the other elements of its product
// (without dividing, so zeros in `input` are exact).
Output SumGrad(const Scope& scope, Input grad, Input input_shape, Input axis);
Output MeanGrad(const Scope& scope, Input grad, Input input_shape, Input axis);
Output MaxGrad(const Scope& scope, Input input, Input output, Input grad, Input axis);
Output ProdGrad(const Scope& scope, Input input, Input grad, Input axis);

// Index of the largest element along the scalar `dimension` (first one on ties).
struct ArgMaxOptions {
  DataType output_type = DT_INT64;  // DT_INT32 or DT_INT64
};
Output ArgMax(const Scope& scope, Input input, Input dimension, const ArgMaxOptions& options = {});
// Index of the smallest element along the scalar `dimension` (first one on ties).
Output ArgMin(const Scope& scope, Input input, Input dimension, const ArgMaxOptions& options = {});

// ---- Neural-network ops (T: float, double) ----
Output Relu(const Scope& scope, Input features);
Output Sigmoid(const Scope& scope, Input x);
Output Tanh(const Scope& scope, Input x);
// Gradients of the activations from their outputs, element-wise (one shape):
// ReluGrad = gradients where activations > 0, else 0; SigmoidGrad = dy * y * (1 - y);
// TanhGrad = dy * (1 - y^2).
Output ReluGrad(const Scope& scope, Input gradients, Input activations);
Output SigmoidGrad(const Scope& scope, Input y, Input dy);
Output TanhGrad(const Scope& scope, Input y, Input dy);

// `value` plus the vector `bias`, added along the channel dimension (the last for
// data_format "NHWC", dimension 1 for "NCHW"; value of rank >= 2); and its gradient with
// respect to the bias, the sum of `out_backprop` over every dimension but the channels'.
Output BiasAdd(const Scope& scope, Input value, Input bias,
               const std::string& data_format = "NHWC");
Output BiasAddGrad(const Scope& scope, Input out_backprop, const std::string& data_format = "NHWC");

// Over the last dimension; numerically stable for large logits.
Output Softmax(const Scope& scope, Input logits);
Output LogSoftmax(const Scope& scope, Input logits);

// Cross-entropy of softmax(features) [batch, classes] against integer class labels [batch]
// (int32 or int64): the per-example loss [batch] and its gradient wrt the features
// [batch, classes]. Both outputs are invalid when the node failed to build.
struct SoftmaxCrossEntropyOutputs {
  Output loss;
  Output backprop;
};
SoftmaxCrossEntropyOutputs SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                               Input labels);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_MATH_OPS_H_
