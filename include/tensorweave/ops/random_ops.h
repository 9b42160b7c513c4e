// Graph-building functions for random tensors, used to initialize model variables.
//
// Seeds: with seed == 0 and seed2 == 0 each node draws a fresh seed from the system's entropy
// source when its kernel is made; otherwise the sequence is fixed by (seed, seed2). Each run
// of a node continues its sequence, so two runs give different values.
#ifndef TENSORWEAVE_OPS_RANDOM_OPS_H_
#define TENSORWEAVE_OPS_RANDOM_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

struct RandomOptions {
  DataType dtype = DT_FLOAT;  // DT_FLOAT or DT_DOUBLE
  int64_t seed = 0;
  int64_t seed2 = 0;
};

// Uniform in [0, 1); `shape` is an int32 or int64 vector.
Output RandomUniform(const Scope& scope, Input shape, const RandomOptions& options = {});
// Normal with mean 0 and standard deviation 1.
Output RandomNormal(const Scope& scope, Input shape, const RandomOptions& options = {});
// Normal with mean 0 and standard deviation 1, values beyond 2 standard deviations redrawn.
Output TruncatedNormal(const Scope& scope, Input shape, const RandomOptions& options = {});
// `value` with its first dimension in a random order; seeds as RandomOptions'.
Output RandomShuffle(const Scope& scope, Input value, int64_t seed = 0, int64_t seed2 = 0);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_RANDOM_OPS_H_
