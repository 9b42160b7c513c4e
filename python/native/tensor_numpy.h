// numpy arrays to and from Tensors.
//
// To numpy: numeric and bool tensors become arrays that borrow the Tensor's buffer (the
// array holds a reference to it, so nothing is copied and the buffer lives as long as the
// array); rank 0 stays a 0-d array here (the Python layer turns it into a numpy scalar).
// Strings become object arrays of bytes. Resource handles cannot be fetched.
// From numpy: the array must already have the tensor's numpy dtype (the Python layer
// converts as TF does); its elements are copied into a fresh, aligned Tensor.
#ifndef TENSORWEAVE_PYTHON_NATIVE_TENSOR_NUMPY_H_
#define TENSORWEAVE_PYTHON_NATIVE_TENSOR_NUMPY_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::python {

// InvalidArgument for a resource tensor. Needs the GIL.
StatusOr<pybind11::object> TensorToNumpy(Tensor tensor);

// InvalidArgument naming `what` for an array whose dtype does not match `dtype`, and for a
// string element that is neither bytes nor str ("Unable to get element as bytes.").
StatusOr<Tensor> NumpyToTensor(const pybind11::handle& value, DataType dtype,
                               const std::string& what);

// The numpy dtype of a DataType (object for strings); nullopt for DT_RESOURCE/INVALID.
pybind11::object NumpyDtype(DataType dtype);

}  // namespace tw::python

#endif  // TENSORWEAVE_PYTHON_NATIVE_TENSOR_NUMPY_H_
