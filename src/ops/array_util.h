// Helpers the array op families' kernels share (reshape_ops.cc, fill_ops.cc, concat_ops.cc,
// slice_ops.cc, gather_scatter_ops.cc), and the convolutions' backprop kernels: reading index
// and shape inputs and writing them in messages.
#ifndef TENSORWEAVE_SRC_OPS_ARRAY_UTIL_H_
#define TENSORWEAVE_SRC_OPS_ARRAY_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_join.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::internal {

// Copies `element` into slot `index` of `batch` (shape [n] + slot dims, the same dtype), at
// the slot's origin: a padded batch (PaddingFIFOQueue's DequeueMany, tf.data's
// padded_batch). Preconditions: the element has the slot's rank and fits in it.
inline void CopyIntoPaddedSlot(const Tensor& element, int64_t index, Tensor* batch) {
  const auto& dims = batch->shape().dims();  // [n, slot dims...]
  const int64_t slot = batch->num_elements() / std::max<int64_t>(dims[0], 1);
  const bool strings = element.dtype() == DT_STRING;
  const size_t width = strings ? 0 : DataTypeSize(element.dtype());
  const int rank = element.rank();
  const int64_t row = rank == 0 ? 1 : element.dim(rank - 1);
  const int64_t rows = row == 0 ? 0 : element.num_elements() / row;
  // The element's innermost rows, each to its place in the slot.
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rest = r, at = 0, stride = 1;
    for (int d = rank - 2; d >= 0; --d) {
      stride *= dims[d + 2];
      at += (rest % element.dim(d)) * stride;
      rest /= element.dim(d);
    }
    const int64_t to = index * slot + at, from = r * row;
    if (strings) {
      std::copy_n(element.flat<std::string>().begin() + from, row,
                  batch->flat<std::string>().begin() + to);
    } else {
      std::memcpy(static_cast<char*>(batch->raw_data()) + to * width,
                  static_cast<const char*>(element.raw_data()) + from * width, row * width);
    }
  }
}

// The values of an int32 or int64 tensor (an index input such as a shape or an axis).
// Precondition: `t` is DT_INT32 or DT_INT64 (the op's definition says so).
inline std::vector<int64_t> IndexValues(const Tensor& t) {
  if (t.dtype() == DT_INT32) {
    auto f = t.flat<int32_t>();
    return std::vector<int64_t>(f.begin(), f.end());
  }
  auto f = t.flat<int64_t>();
  return std::vector<int64_t>(f.begin(), f.end());
}

// A 4-D shape given as an int32 or int64 tensor (the convolution backprops' input_sizes and
// filter_sizes): InvalidArgument naming `node` and `what` unless it has 4 entries, all >= 0.
inline StatusOr<TensorShape> ShapeFromSizesInput(std::string_view node, const Tensor& t,
                                                 const char* what) {
  if (t.rank() != 1 || t.num_elements() != 4) {
    return errors::InvalidArgument("node ", node, ": ", what, " must be a vector of 4 ",
                                   "dimensions, got shape ", t.shape().DebugString());
  }
  const std::vector<int64_t> dims = IndexValues(t);
  for (int64_t d : dims) {
    if (d < 0) {
      return errors::InvalidArgument("node ", node, ": ", what, " has a negative ",
                                     "dimension: ", t.DebugString());
    }
  }
  return TensorShape::Create(dims);
}

// "[2,3]" for error messages about shape or index vectors.
inline std::string VectorString(const std::vector<int64_t>& v) {
  return "[" + absl::StrJoin(v, ",") + "]";
}

}  // namespace tw::internal

#endif  // TENSORWEAVE_SRC_OPS_ARRAY_UTIL_H_
