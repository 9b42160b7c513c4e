#include "tensorweave/tensor_shape.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_join.h"

namespace tw {

TensorShape::TensorShape(std::initializer_list<int64_t> dims) {
  auto shape = Create(std::vector<int64_t>(dims));
  if (!shape.ok()) {
    // Only literal shapes written in code reach this constructor: a programming error.
    std::fprintf(stderr, "tensorweave: invalid literal TensorShape: %s\n",
                 std::string(shape.status().message()).c_str());
    std::abort();
  }
  *this = *std::move(shape);
}

StatusOr<TensorShape> TensorShape::Create(absl::Span<const int64_t> dims) {
  TensorShape shape;
  shape.dims_.assign(dims.begin(), dims.end());
  int64_t count = 1;
  bool known = true;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < kUnknownDim) {
      return errors::InvalidArgument("dimension ", i, " of shape [", absl::StrJoin(dims, ","),
                                     "] is ", d, "; dimensions must be >= 0 (or -1 if unknown)");
    }
    if (d == kUnknownDim) {
      known = false;
      continue;
    }
    if (__builtin_mul_overflow(count, d, &count)) {
      return errors::InvalidArgument("shape [", absl::StrJoin(dims, ","),
                                     "] has more elements than fit in int64");
    }
  }
  shape.num_elements_ = known ? count : -1;
  return shape;
}

bool TensorShape::IsFullyDefined() const { return num_elements_ >= 0; }

bool TensorShape::IsCompatibleWith(const TensorShape& other) const {
  if (rank() != other.rank()) return false;
  for (int i = 0; i < rank(); ++i) {
    if (dims_[i] != kUnknownDim && other.dims_[i] != kUnknownDim && dims_[i] != other.dims_[i]) {
      return false;
    }
  }
  return true;
}

std::string TensorShape::DebugString() const {
  std::string out = "[";
  for (int i = 0; i < rank(); ++i) {
    if (i > 0) out += ",";
    out += dims_[i] == kUnknownDim ? std::string("?") : std::to_string(dims_[i]);
  }
  return out + "]";
}

}  // namespace tw
