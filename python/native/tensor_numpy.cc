#include "python/native/tensor_numpy.h"

#include <complex>
#include <cstring>
#include <string>
#include <vector>

namespace py = pybind11;

namespace tw::python {

py::object NumpyDtype(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
      return py::dtype::of<float>();
    case DT_DOUBLE:
      return py::dtype::of<double>();
    case DT_INT32:
      return py::dtype::of<int32_t>();
    case DT_INT64:
      return py::dtype::of<int64_t>();
    case DT_UINT8:
      return py::dtype::of<uint8_t>();
    case DT_INT8:
      return py::dtype::of<int8_t>();
    case DT_INT16:
      return py::dtype::of<int16_t>();
    case DT_UINT16:
      return py::dtype::of<uint16_t>();
    case DT_COMPLEX64:
      return py::dtype::of<std::complex<float>>();
    case DT_COMPLEX128:
      return py::dtype::of<std::complex<double>>();
    case DT_BOOL:
      return py::dtype::of<bool>();
    case DT_STRING:
      return py::dtype("O");
    default:
      return py::none();
  }
}

StatusOr<py::object> TensorToNumpy(Tensor tensor) {
  const std::vector<int64_t>& dims = tensor.shape().dims();
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  if (tensor.dtype() == DT_STRING) {
    py::array out(py::dtype("O"), shape);
    auto** items = static_cast<PyObject**>(out.mutable_data());
    const auto strings = std::as_const(tensor).flat<std::string>();
    for (size_t i = 0; i < strings.size(); ++i) {
      // The array was filled with None references; each is replaced by a new bytes object.
      PyObject* bytes =
          PyBytes_FromStringAndSize(strings[i].data(), static_cast<py::ssize_t>(strings[i].size()));
      if (bytes == nullptr) throw py::error_already_set();
      Py_XDECREF(items[i]);
      items[i] = bytes;
    }
    return py::object(std::move(out));
  }
  py::object dtype = NumpyDtype(tensor.dtype());
  if (dtype.is_none()) {
    return errors::InvalidArgument("a tensor of type ", DataTypeName(tensor.dtype()),
                                   " cannot be fetched into Python");
  }
  // The capsule owns a reference to the buffer; numpy keeps the capsule as the array's base.
  auto* owner = new Tensor(std::move(tensor));
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::object(py::array(py::dtype::from_args(dtype), shape, owner->raw_data(), base));
}

StatusOr<Tensor> NumpyToTensor(const py::handle& value, DataType dtype, const std::string& what) {
  py::object expected = NumpyDtype(dtype);
  if (expected.is_none()) {
    return errors::InvalidArgument(what, ": a value of type ", DataTypeName(dtype),
                                   " cannot be given from Python");
  }
  py::array array = py::array::ensure(value, py::array::c_style);
  if (!array) {
    PyErr_Clear();
    return errors::InvalidArgument(what, ": not an array");
  }
  if (!array.dtype().equal(py::dtype::from_args(expected))) {
    return errors::InvalidArgument(what, ": expected an array of ", std::string(py::str(expected)),
                                   ", got ", std::string(py::str(array.dtype())));
  }
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  auto shape = TensorShape::Create(dims);
  if (!shape.ok()) return errors::InvalidArgument(what, ": ", shape.status().message());
  auto tensor = Tensor::Allocate(dtype, *shape);
  if (!tensor.ok()) return errors::InvalidArgument(what, ": ", tensor.status().message());
  if (dtype == DT_STRING) {
    auto out = tensor->flat<std::string>();
    auto* const* items = static_cast<PyObject* const*>(array.data());
    for (size_t i = 0; i < out.size(); ++i) {
      PyObject* item = items[i];
      if (PyBytes_Check(item)) {
        out[i].assign(PyBytes_AS_STRING(item), static_cast<size_t>(PyBytes_GET_SIZE(item)));
      } else if (PyUnicode_Check(item)) {
        py::ssize_t size = 0;
        const char* utf8 = PyUnicode_AsUTF8AndSize(item, &size);
        if (utf8 == nullptr) {
          PyErr_Clear();
          return errors::InvalidArgument(what, ": a string that is not valid Unicode");
        }
        out[i].assign(utf8, static_cast<size_t>(size));
      } else {
        return errors::Internal("Unable to get element as bytes.");
      }
    }
    return *std::move(tensor);
  }
  if (tensor->TotalBytes() > 0) std::memcpy(tensor->raw_data(), array.data(), tensor->TotalBytes());
  return *std::move(tensor);
}

}  // namespace tw::python
