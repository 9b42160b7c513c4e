// Tensor: a typed, n-dimensional array whose storage is reference counted.
//
// Copying a Tensor is cheap and shares the buffer (like TensorFlow's Tensor); writes through
// one copy are visible in the others. Storage is 64-byte aligned. Slice() gives a view of
// rows [begin, end) along dimension 0 that shares the buffer without copying.
// Thread safety: a Tensor object is thread-compatible; copies of one Tensor may be used and
// destroyed on different threads (the reference count is atomic), but the shared buffer does
// no locking, so concurrent writers must synchronize (variables do, see the state ops).
//
// Errors: functions that take sizes or shapes from data (Allocate, Slice, Reshaped) return
// InvalidArgument. The accessors (flat, scalar) and the constructors for values written in
// code check their preconditions and abort the process with a message on misuse, like an
// out-of-bounds index: they are programming errors, never reachable from a file, a flag or
// the network, whose tensors the runtime validates before kernels see them.
//
// Memory: buffers of 1 MiB and more come from a process-wide pool (src/core/buffer_pool.h)
// and go back to it when the last Tensor sharing them is destroyed.
#ifndef TENSORWEAVE_TENSOR_H_
#define TENSORWEAVE_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor_shape.h"
#include "tensorweave/types.h"

namespace tw {

namespace internal {
class TensorBuffer;
// Reports misuse of a Tensor in code (wrong element type, wrong count) and aborts.
[[noreturn]] void TensorCheckFailed(const std::string& what);
}  // namespace internal

class Tensor {
 public:
  // An uninitialized tensor (dtype DT_INVALID, no storage).
  Tensor() = default;

  // Allocates a tensor. Numeric elements are unspecified until written; strings are empty.
  // InvalidArgument when the dtype is invalid, the shape is not fully defined, or the byte
  // size overflows.
  static StatusOr<Tensor> Allocate(DataType dtype, const TensorShape& shape);

  // Same as Allocate for arguments known valid in code; CHECK-fails otherwise.
  Tensor(DataType dtype, const TensorShape& shape);

  template <typename T>
  static Tensor Scalar(T value);
  // A tensor of `shape` holding `values` in row-major order; a 1-D tensor when no shape is
  // given. CHECK-fails when the counts differ (for values written in code).
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values);
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, const TensorShape& shape);

  bool IsInitialized() const { return dtype_ != DT_INVALID; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int64_t num_elements() const { return shape_.num_elements(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int rank() const { return shape_.rank(); }

  // Bytes of element storage this tensor covers (num_elements * DataTypeSize).
  size_t TotalBytes() const;

  // The elements in row-major order; CHECK-fails when T does not match dtype().
  template <typename T>
  absl::Span<T> flat();
  template <typename T>
  absl::Span<const T> flat() const;
  // The single element of a tensor with one element.
  template <typename T>
  T& scalar();
  template <typename T>
  const T& scalar() const;

  // Raw element storage; for numeric types, TotalBytes() bytes.
  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  // A view of rows [begin, end) along dimension 0 sharing this tensor's buffer.
  // InvalidArgument on a scalar or when not 0 <= begin <= end <= dim(0).
  StatusOr<Tensor> Slice(int64_t begin, int64_t end) const;

  // A view of the same buffer under another shape with the same number of elements;
  // InvalidArgument otherwise.
  StatusOr<Tensor> Reshaped(const TensorShape& shape) const;

  // A deep copy in a buffer of its own.
  Tensor Copy() const;

  // True when both tensors view the same allocation.
  bool SharesBufferWith(const Tensor& other) const;
  // True when another tensor (a copy, a view) also holds this tensor's allocation. Only a
  // tensor no other can see may be updated in place.
  bool BufferIsShared() const;

  // "Tensor<float, [2,2]>: 1 2 3 4", at most `max_entries` elements.
  std::string DebugString(int max_entries = 10) const;

  // Same dtype, shape and element values (bitwise for floating point, so NaN == NaN).
  friend bool operator==(const Tensor& a, const Tensor& b);
  friend bool operator!=(const Tensor& a, const Tensor& b) { return !(a == b); }

 private:
  Tensor(DataType dtype, TensorShape shape, std::shared_ptr<internal::TensorBuffer> buffer,
         char* data)
      : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), data_(data) {}
  void CheckType(DataType requested) const;

  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  std::shared_ptr<internal::TensorBuffer> buffer_;
  char* data_ = nullptr;  // first element of this view, inside buffer_
};

// ---- implementation details of the templates above ----

template <typename T>
absl::Span<T> Tensor::flat() {
  CheckType(DataTypeToEnum<T>::value);
  return absl::Span<T>(reinterpret_cast<T*>(data_), static_cast<size_t>(num_elements()));
}

template <typename T>
absl::Span<const T> Tensor::flat() const {
  CheckType(DataTypeToEnum<T>::value);
  return absl::Span<const T>(reinterpret_cast<const T*>(data_),
                             static_cast<size_t>(num_elements()));
}

template <typename T>
T& Tensor::scalar() {
  auto f = flat<T>();
  if (f.size() != 1)
    internal::TensorCheckFailed("scalar() of a tensor of shape " + shape_.DebugString());
  return f[0];
}

template <typename T>
const T& Tensor::scalar() const {
  auto f = flat<T>();
  if (f.size() != 1)
    internal::TensorCheckFailed("scalar() of a tensor of shape " + shape_.DebugString());
  return f[0];
}

template <typename T>
Tensor Tensor::Scalar(T value) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape());
  t.flat<T>()[0] = std::move(value);
  return t;
}

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values) {
  return FromVector(values, TensorShape({static_cast<int64_t>(values.size())}));
}

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values, const TensorShape& shape) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  auto out = t.flat<T>();
  if (out.size() != values.size()) {
    internal::TensorCheckFailed("FromVector: " + std::to_string(values.size()) +
                                " values for shape " + shape.DebugString());
  }
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace tw

#endif  // TENSORWEAVE_TENSOR_H_
