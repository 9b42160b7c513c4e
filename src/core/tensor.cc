#include "tensorweave/tensor.h"

#include <atomic>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "src/core/buffer_pool.h"

namespace tw {
namespace internal {

// Owns one 64-byte-aligned allocation from BufferPool::Default() holding `count` elements of
// `dtype`. String and resource elements are constructed on allocation and destroyed with the
// buffer.
class TensorBuffer {
 public:
  // nullptr when the memory cannot be had (never throws).
  static std::shared_ptr<TensorBuffer> Create(DataType dtype, int64_t count, size_t bytes) {
    char* data = nullptr;
    if (bytes > 0) {
      data = static_cast<char*>(BufferPool::Default()->Allocate(bytes));
      if (data == nullptr) return nullptr;
    }
    return std::shared_ptr<TensorBuffer>(new TensorBuffer(dtype, count, data, bytes));
  }
  ~TensorBuffer() {
    if (dtype_ == DT_STRING) Destroy<std::string>();
    if (dtype_ == DT_RESOURCE) Destroy<ResourceHandle>();
    BufferPool::Default()->Free(data_, bytes_);
  }
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  char* data() const { return data_; }

 private:
  TensorBuffer(DataType dtype, int64_t count, char* data, size_t bytes)
      : dtype_(dtype), count_(count), data_(data), bytes_(bytes) {
    if (dtype_ == DT_STRING) Construct<std::string>();
    if (dtype_ == DT_RESOURCE) Construct<ResourceHandle>();
  }
  template <typename T>
  void Construct() {
    auto* elements = reinterpret_cast<T*>(data_);
    for (int64_t i = 0; i < count_; ++i) new (&elements[i]) T();
  }
  template <typename T>
  void Destroy() {
    auto* elements = reinterpret_cast<T*>(data_);
    for (int64_t i = 0; i < count_; ++i) elements[i].~T();
  }

  const DataType dtype_;
  const int64_t count_;
  char* const data_;
  const size_t bytes_;
};

void TensorCheckFailed(const std::string& what) {
  std::fprintf(stderr, "tensorweave: Tensor misuse: %s\n", what.c_str());
  std::abort();
}

}  // namespace internal

StatusOr<Tensor> Tensor::Allocate(DataType dtype, const TensorShape& shape) {
  if (!IsValidDataType(dtype)) {
    return errors::InvalidArgument("cannot allocate a tensor of invalid data type ",
                                   static_cast<int>(dtype));
  }
  if (!shape.IsFullyDefined()) {
    return errors::InvalidArgument("cannot allocate a tensor of partial shape ",
                                   shape.DebugString());
  }
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(shape.num_elements()), DataTypeSize(dtype),
                             &bytes)) {
    return errors::InvalidArgument("a ", DataTypeName(dtype), " tensor of shape ",
                                   shape.DebugString(), " is too large to allocate");
  }
  auto buffer = internal::TensorBuffer::Create(dtype, shape.num_elements(), bytes);
  if (buffer == nullptr) {
    return errors::ResourceExhausted("cannot allocate ", bytes, " bytes for a ",
                                     DataTypeName(dtype), " tensor of shape ", shape.DebugString());
  }
  char* data = buffer->data();
  return Tensor(dtype, shape, std::move(buffer), data);
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) {
  auto t = Allocate(dtype, shape);
  if (!t.ok()) internal::TensorCheckFailed(std::string(t.status().message()));
  *this = *std::move(t);
}

size_t Tensor::TotalBytes() const {
  if (!IsInitialized()) return 0;
  return static_cast<size_t>(num_elements()) * DataTypeSize(dtype_);
}

void Tensor::CheckType(DataType requested) const {
  if (requested != dtype_) {
    internal::TensorCheckFailed(internal::StrCatAny("element type ", DataTypeName(requested),
                                                    " requested from a ", DataTypeName(dtype_),
                                                    " tensor"));
  }
}

StatusOr<Tensor> Tensor::Slice(int64_t begin, int64_t end) const {
  if (!IsInitialized() || rank() == 0) {
    return errors::InvalidArgument("Slice needs a tensor of rank >= 1, got shape ",
                                   shape_.DebugString());
  }
  if (begin < 0 || begin > end || end > dim(0)) {
    return errors::InvalidArgument("Slice [", begin, ", ", end, ") is outside dimension 0 of ",
                                   "shape ", shape_.DebugString());
  }
  std::vector<int64_t> dims = shape_.dims();
  const int64_t row_elements = dims[0] == 0 ? 0 : num_elements() / dims[0];
  dims[0] = end - begin;
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Create(dims));
  char* data = data_ + static_cast<size_t>(begin * row_elements) * DataTypeSize(dtype_);
  return Tensor(dtype_, std::move(shape), buffer_, data);
}

StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  if (!IsInitialized() || !shape.IsFullyDefined() || shape.num_elements() != num_elements()) {
    return errors::InvalidArgument("cannot view a tensor of shape ", shape_.DebugString(),
                                   " as shape ", shape.DebugString());
  }
  return Tensor(dtype_, shape, buffer_, data_);
}

Tensor Tensor::Copy() const {
  if (!IsInitialized()) return Tensor();
  Tensor out(dtype_, shape_);
  if (dtype_ == DT_STRING) {
    std::copy_n(flat<std::string>().begin(), num_elements(), out.flat<std::string>().begin());
  } else if (dtype_ == DT_RESOURCE) {
    std::copy_n(flat<ResourceHandle>().begin(), num_elements(), out.flat<ResourceHandle>().begin());
  } else if (TotalBytes() > 0) {
    std::memcpy(out.data_, data_, TotalBytes());
  }
  return out;
}

bool Tensor::SharesBufferWith(const Tensor& other) const {
  return buffer_ != nullptr && buffer_ == other.buffer_;
}

bool Tensor::BufferIsShared() const {
  if (buffer_ == nullptr || buffer_.use_count() > 1) return buffer_ != nullptr;
  // use_count() reads relaxed: order the caller's writes after the other holders' last
  // accesses, which happened before they released their references.
  std::atomic_thread_fence(std::memory_order_acquire);
  return false;
}

namespace {
template <typename T>
void AppendElements(const Tensor& t, int max_entries, std::string* out) {
  auto values = t.flat<T>();
  const size_t n = std::min(values.size(), static_cast<size_t>(max_entries));
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      absl::StrAppend(out, " \"", values[i], "\"");
    } else if constexpr (std::is_same_v<T, ResourceHandle>) {
      absl::StrAppend(out, " ", values[i].DebugString());
    } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> ||
                         std::is_same_v<T, bool>) {
      absl::StrAppend(out, " ", static_cast<int>(values[i]));
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      // As TensorFlow prints complex elements: (real,imaginary).
      absl::StrAppend(out, " (", values[i].real(), ",", values[i].imag(), ")");
    } else {
      absl::StrAppend(out, " ", values[i]);
    }
  }
  if (values.size() > n) absl::StrAppend(out, " ...");
}
}  // namespace

std::string Tensor::DebugString(int max_entries) const {
  if (!IsInitialized()) return "Tensor<uninitialized>";
  std::string out =
      internal::StrCatAny("Tensor<", DataTypeName(dtype_), ", ", shape_.DebugString(), ">:");
  switch (dtype_) {
    case DT_FLOAT:
      AppendElements<float>(*this, max_entries, &out);
      break;
    case DT_DOUBLE:
      AppendElements<double>(*this, max_entries, &out);
      break;
    case DT_INT32:
      AppendElements<int32_t>(*this, max_entries, &out);
      break;
    case DT_INT64:
      AppendElements<int64_t>(*this, max_entries, &out);
      break;
    case DT_UINT8:
      AppendElements<uint8_t>(*this, max_entries, &out);
      break;
    case DT_INT8:
      AppendElements<int8_t>(*this, max_entries, &out);
      break;
    case DT_INT16:
      AppendElements<int16_t>(*this, max_entries, &out);
      break;
    case DT_UINT16:
      AppendElements<uint16_t>(*this, max_entries, &out);
      break;
    case DT_COMPLEX64:
      AppendElements<std::complex<float>>(*this, max_entries, &out);
      break;
    case DT_COMPLEX128:
      AppendElements<std::complex<double>>(*this, max_entries, &out);
      break;
    case DT_BOOL:
      AppendElements<bool>(*this, max_entries, &out);
      break;
    case DT_STRING:
      AppendElements<std::string>(*this, max_entries, &out);
      break;
    case DT_RESOURCE:
      AppendElements<ResourceHandle>(*this, max_entries, &out);
      break;
    case DT_INVALID:
      break;
  }
  return out;
}

bool operator==(const Tensor& a, const Tensor& b) {
  if (a.dtype_ != b.dtype_ || !(a.shape_ == b.shape_)) return false;
  if (!a.IsInitialized()) return true;
  if (a.dtype_ == DT_STRING) {
    auto x = a.flat<std::string>();
    auto y = b.flat<std::string>();
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }
  if (a.dtype_ == DT_RESOURCE) {
    auto x = a.flat<ResourceHandle>();
    auto y = b.flat<ResourceHandle>();
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }
  return a.TotalBytes() == 0 || std::memcmp(a.data_, b.data_, a.TotalBytes()) == 0;
}

}  // namespace tw
