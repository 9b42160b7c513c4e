// TensorShape: the dimensions of a tensor, possibly partial (a dimension of -1 is unknown).
//
// A value type; thread-compatible. Shapes built by Create() are validated: every dimension
// is >= -1 and the element count of a fully defined shape fits in int64.
#ifndef TENSORWEAVE_TENSOR_SHAPE_H_
#define TENSORWEAVE_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "tensorweave/status.h"

namespace tw {

class TensorShape {
 public:
  static constexpr int64_t kUnknownDim = -1;

  // A scalar (rank 0, one element).
  TensorShape() = default;
  // For shapes written in code, e.g. TensorShape({2, 3}); CHECK-fails on an invalid shape,
  // so use Create() for anything that came from input.
  TensorShape(std::initializer_list<int64_t> dims);

  // InvalidArgument when a dimension is below -1 or the element count overflows int64.
  static StatusOr<TensorShape> Create(absl::Span<const int64_t> dims);

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }

  // True when no dimension is unknown.
  bool IsFullyDefined() const;
  // Product of the dimensions (1 for a scalar); -1 when the shape is not fully defined.
  int64_t num_elements() const { return num_elements_; }

  // True when every known dimension of `this` equals the one of `other` (same rank).
  bool IsCompatibleWith(const TensorShape& other) const;

  // "[2,3]", "[?,3]", "[]".
  std::string DebugString() const;

  friend bool operator==(const TensorShape& a, const TensorShape& b) { return a.dims_ == b.dims_; }

 private:
  std::vector<int64_t> dims_;
  int64_t num_elements_ = 1;
};

}  // namespace tw

#endif  // TENSORWEAVE_TENSOR_SHAPE_H_
