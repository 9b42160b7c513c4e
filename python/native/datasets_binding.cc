// The examples' data library (examples/fashion_mnist.h) from Python, for
// tensorweave.datasets.fashion_mnist: the IDX reader and Fashion-MNIST loader, whose arrays
// become numpy arrays without a copy, the shard order of BatchIterator (ShardSampler) and
// the scaling of pixels into a batch. Files are read without the GIL.
//
// Errors are raised as the Python built-in exceptions a data-loading function raises (as
// keras' loaders do), not as tensorweave.errors classes: FileNotFoundError for NotFound,
// ValueError for InvalidArgument and DataLoss, PermissionError for PermissionDenied,
// MemoryError for ResourceExhausted, OSError for anything else; the message is the C++ one.
#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "examples/fashion_mnist.h"
#include "python/native/gil.h"
#include "python/native/module.h"

namespace py = pybind11;

namespace tw::python {
namespace {

void RaiseIfError(const Status& status) {
  if (status.ok()) return;
  PyObject* type = PyExc_OSError;
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kDataLoss:
      type = PyExc_ValueError;
      break;
    case absl::StatusCode::kPermissionDenied:
      type = PyExc_PermissionError;
      break;
    case absl::StatusCode::kResourceExhausted:
      type = PyExc_MemoryError;
      break;
    default:
      break;
  }
  PyErr_SetString(type, std::string(status.message()).c_str());
  throw py::error_already_set();
}

template <typename T>
T ValueOrRaise(StatusOr<T> value) {
  RaiseIfError(value.status());
  return *std::move(value);
}

// A numpy array of `dims` over `data`, which it takes over: no copy.
py::array ToNumpy(std::vector<uint8_t> data, const std::vector<int64_t>& dims) {
  auto* owner = new std::vector<uint8_t>(std::move(data));
  py::capsule base(owner, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  return py::array(py::dtype::of<uint8_t>(), std::vector<py::ssize_t>(dims.begin(), dims.end()),
                   owner->data(), base);
}

py::array ReadIdx(const std::string& path) {
  IdxArray array = ValueOrRaise(WithoutGil([&] { return ReadIdxFile(path); }));
  return ToNumpy(std::move(array.data), array.dims);
}

// (images uint8 [N, rows, cols], labels uint8 [N]), as keras' load_data gives them.
py::tuple LoadFashionMnistSplit(const std::string& dir, const std::string& split) {
  ImageDataset dataset = ValueOrRaise(WithoutGil([&] { return LoadFashionMnist(dir, split); }));
  std::vector<uint8_t> labels(dataset.labels.begin(), dataset.labels.end());  // all < 10
  const int64_t size = dataset.size;
  py::array images = ToNumpy(std::move(dataset.pixels), {size, dataset.rows, dataset.cols});
  return py::make_tuple(images, ToNumpy(std::move(labels), {size}));
}

// Rows `rows` of the uint8 array `images` [N, example_size], each pixel as a batch holds it
// (ImageDataset::PixelValue): float32 [len(rows), example_size]. Any strides.
py::array_t<float> ScalePixelRows(
    const py::array& images,
    const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& rows) {
  if (!images.dtype().equal(py::dtype::of<uint8_t>()) || images.ndim() != 2) {
    RaiseIfError(
        errors::InvalidArgument("scale_pixel_rows: images must be a 2-dimensional "
                                "uint8 array, found ",
                                std::string(py::str(images.dtype())), " of rank ", images.ndim()));
  }
  if (rows.ndim() != 1) {
    RaiseIfError(errors::InvalidArgument("scale_pixel_rows: rows must be 1-dimensional"));
  }
  const int64_t size = images.shape(0);
  const int64_t example_size = images.shape(1);
  const int64_t count = rows.shape(0);
  const auto* base = static_cast<const uint8_t*>(images.data());
  const int64_t row_stride = images.strides(0);
  const int64_t column_stride = images.strides(1);
  py::array_t<float> out({count, example_size});
  float* dst = out.mutable_data();
  const int64_t* indices = rows.data();
  for (int64_t r = 0; r < count; ++r, dst += example_size) {
    const int64_t index = indices[r];
    if (index < 0 || index >= size) {
      RaiseIfError(
          errors::InvalidArgument("scale_pixel_rows: row ", index, " is outside [0, ", size, ")"));
    }
    const uint8_t* src = base + index * row_stride;
    if (column_stride == 1) {
      ImageDataset::ScalePixels(src, dst, example_size);
    } else {
      for (int64_t i = 0; i < example_size; ++i) {
        dst[i] = ImageDataset::PixelValue(src[i * column_stride]);
      }
    }
  }
  return out;
}

ShardSampler CreateShardSampler(int64_t dataset_size, int num_shards, int shard_index,
                                const py::int_& seed, bool shuffle) {
  // Any Python int, taken modulo 2**64 as C++'s uint64_t takes a negative one.
  const uint64_t seed_bits = PyLong_AsUnsignedLongLongMask(seed.ptr());
  if (PyErr_Occurred()) throw py::error_already_set();
  return ValueOrRaise(ShardSampler::Create(dataset_size, {.num_shards = num_shards,
                                                          .shard_index = shard_index,
                                                          .seed = seed_bits,
                                                          .shuffle = shuffle}));
}

py::array_t<int64_t> NextIndices(ShardSampler& sampler, int64_t batch_size) {
  std::vector<int64_t> indices = ValueOrRaise(sampler.Next(batch_size));
  py::array_t<int64_t> out(static_cast<py::ssize_t>(indices.size()));
  std::copy(indices.begin(), indices.end(), out.mutable_data());
  return out;
}

}  // namespace

void BindDatasets(py::module_& m) {
  m.attr("FASHION_MNIST_DEFAULT_DIR") = DefaultFashionMnistDir();
  m.attr("FASHION_MNIST_NUM_CLASSES") = ImageDataset::kNumClasses;
  m.def("read_idx", &ReadIdx, py::arg("path"),
        "The IDX file at `path` (gzip or plain) as a writable uint8 array of its dimensions.");
  m.def("load_fashion_mnist", &LoadFashionMnistSplit, py::arg("dir"), py::arg("split"),
        "(images uint8 [N, rows, cols], labels uint8 [N]) of split \"train\" or \"t10k\".");
  m.def("scale_pixel_rows", &ScalePixelRows, py::arg("images"), py::arg("rows"),
        "float32 [len(rows), example_size]: rows of a uint8 [N, example_size] array / 255.");
  py::class_<ShardSampler>(m, "ShardSampler",
                           "One shard's examples in BatchIterator's order (examples/"
                           "fashion_mnist.h), as dataset indices.")
      .def(py::init(&CreateShardSampler), py::arg("dataset_size"), py::arg("num_shards"),
           py::arg("shard_index"), py::arg("seed"), py::arg("shuffle") = true)
      .def("next", &NextIndices, py::arg("batch_size"),
           "The next batch_size indices (int64), spanning epochs as needed.")
      .def_property_readonly("epoch", &ShardSampler::epoch)
      .def_property_readonly("examples_seen", &ShardSampler::examples_seen)
      .def_property_readonly("shard_size", &ShardSampler::shard_size);
}

}  // namespace tw::python
