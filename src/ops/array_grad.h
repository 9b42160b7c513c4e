// Gradient pieces shared by the op families (gather_scatter_ops.cc defines them).
#ifndef TENSORWEAVE_SRC_OPS_ARRAY_GRAD_H_
#define TENSORWEAVE_SRC_OPS_ARRAY_GRAD_H_

#include "tensorweave/gradient.h"
#include "tensorweave/scope.h"

namespace tw {

// The gradient of rows picked from a tensor of shape `dense_shape` (an int64 vector) by
// `indices` (any shape), given the gradient `grad` of the picked rows (shape
// indices.shape + dense_shape[1:]): indices flattened, grad reshaped to one row per index.
IndexedSlices GatherGradientSlices(const Scope& scope, const Output& grad, const Output& indices,
                                   const Output& dense_shape);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_ARRAY_GRAD_H_
