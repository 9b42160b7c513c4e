// Gradient values as graph-building code passes them around: dense tensors or rows
// (IndexedSlices). Gradient functions of ops (src/graph/gradient_registry.h) and the
// gradients driver (tensorweave/train/gradients.h) both speak in these.
#ifndef TENSORWEAVE_GRADIENT_H_
#define TENSORWEAVE_GRADIENT_H_

#include <optional>

#include "tensorweave/scope.h"

namespace tw {

// Rows of a tensor of shape `dense_shape` (int64 vector): row indices[i] (int32 or int64)
// holds values[i]; rows not listed are zero; a row listed twice is the sum.
struct IndexedSlices {
  Output indices;
  Output values;
  Output dense_shape;
};

// The gradient with respect to one x: dense, sparse, or none when no y depends on x.
struct Gradient {
  Output dense;                         // valid when the gradient is dense
  std::optional<IndexedSlices> sparse;  // set when it is sparse
  bool exists() const { return dense.op().valid() || sparse.has_value(); }
};

}  // namespace tw

#endif  // TENSORWEAVE_GRADIENT_H_
