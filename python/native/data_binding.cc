// tf.data's from_generator: registers a Python generator with the C++ datasets
// (src/data/generator_dataset.h). Each pass calls the Python `make_iterator()` and then
// its iterator's __next__ on the tf.data iterator's thread, holding the GIL only for those
// calls; each yielded value is a list of components (flattened by the Python layer)
// converted to the registered types.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "python/native/errors.h"
#include "python/native/gil.h"
#include "python/native/module.h"
#include "python/native/tensor_numpy.h"
#include "src/data/generator_dataset.h"

namespace py = pybind11;

namespace tw::python {
namespace {

Status Finalizing() {
  return errors::Cancelled("the Python interpreter is exiting: from_generator stopped");
}

// The message of the Python exception being handled, which it clears.
std::string PythonError(py::error_already_set& e) { return e.what(); }

class PySource : public data::GeneratorSource {
 public:
  PySource(py::object iterator, std::vector<DataType> types)
      : iterator_(std::move(iterator)), types_(std::move(types)) {}
  ~PySource() override {
    if (InterpreterFinalizing()) {
      iterator_.release();  // Python is going away: nothing to give back
      return;
    }
    py::gil_scoped_acquire gil;
    iterator_ = py::object();
  }

  Status Next(data::Element* out, bool* end) override {
    if (InterpreterFinalizing()) return Finalizing();
    py::gil_scoped_acquire gil;
    try {
      PyObject* item = PyIter_Next(iterator_.ptr());
      if (item == nullptr) {
        if (PyErr_Occurred()) throw py::error_already_set();
        *end = true;
        return OkStatus();
      }
      py::object value = py::reinterpret_steal<py::object>(item);
      py::list components(value);
      if (components.size() != types_.size()) {
        return errors::InvalidArgument("from_generator: the generator yielded ", components.size(),
                                       " components, output_types has ", types_.size());
      }
      out->clear();
      for (size_t i = 0; i < types_.size(); ++i) {
        TW_ASSIGN_OR_RETURN(Tensor t, NumpyToTensor(components[i], types_[i],
                                                    "component " + std::to_string(i) +
                                                        " of a generator's element"));
        out->push_back(std::move(t));
      }
      return OkStatus();
    } catch (py::error_already_set& e) {
      return errors::InvalidArgument("from_generator: the generator raised ", PythonError(e));
    }
  }

 private:
  py::object iterator_;
  const std::vector<DataType> types_;
};

// Registers `make_iterator` (a callable returning a Python iterator of component lists).
int64_t RegisterGenerator(py::object make_iterator, std::vector<int> type_enums) {
  std::vector<DataType> types;
  for (int t : type_enums) types.push_back(static_cast<DataType>(t));
  // The factory (and its copies) hold `make_iterator` for the process's life; its
  // reference is given back only with the GIL held.
  auto holder =
      std::shared_ptr<py::object>(new py::object(std::move(make_iterator)), [](py::object* o) {
        if (InterpreterFinalizing()) {
          o->release();
          delete o;
          return;
        }
        py::gil_scoped_acquire gil;
        delete o;
      });
  return data::RegisterGenerator(
      [holder, types]() -> StatusOr<std::unique_ptr<data::GeneratorSource>> {
        if (InterpreterFinalizing()) return Finalizing();
        py::gil_scoped_acquire gil;
        try {
          py::object iterator = (*holder)();
          return std::unique_ptr<data::GeneratorSource>(new PySource(std::move(iterator), types));
        } catch (py::error_already_set& e) {
          return errors::InvalidArgument("from_generator: calling the generator raised ",
                                         PythonError(e));
        }
      });
}

}  // namespace

void BindData(py::module_& m) {
  m.def("register_generator", &RegisterGenerator, py::arg("make_iterator"), py::arg("types"));
}

}  // namespace tw::python
