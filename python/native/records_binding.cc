// TFRecord files from Python: src/io's RecordWriter and RecordReader, which
// tf.python_io.TFRecordWriter and tf_record_iterator (python/tensorweave/lib/io/tf_record.py)
// wrap. The file I/O and compression run without the GIL.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "python/native/errors.h"
#include "python/native/module.h"
#include "src/io/record_reader.h"
#include "src/io/record_writer.h"

namespace py = pybind11;

namespace tw::python {
namespace {

io::Compression CompressionOrThrow(const std::string& name) {
  return ValueOrThrow(io::ParseCompression(name));
}

class PyRecordWriter {
 public:
  PyRecordWriter(const std::string& path, const std::string& compression) {
    const io::Compression c = CompressionOrThrow(compression);
    StatusOr<std::unique_ptr<io::RecordWriter>> writer;
    {
      py::gil_scoped_release release;
      writer = io::RecordWriter::Create(path, {.compression = c, .truncate = true});
    }
    writer_ = ValueOrThrow(std::move(writer));
  }
  void Write(const py::bytes& record) {
    std::string data = record;
    Status s;
    {
      py::gil_scoped_release release;
      s = writer_->Write(data);
    }
    ThrowIfError(s);
  }
  void Flush() {
    Status s;
    {
      py::gil_scoped_release release;
      s = writer_->Flush();
    }
    ThrowIfError(s);
  }
  void Close() {
    Status s;
    {
      py::gil_scoped_release release;
      s = writer_->Close();
    }
    ThrowIfError(s);
  }

 private:
  std::unique_ptr<io::RecordWriter> writer_;
};

class PyRecordReader {
 public:
  PyRecordReader(const std::string& path, const std::string& compression) {
    const io::Compression c = CompressionOrThrow(compression);
    StatusOr<std::unique_ptr<io::RecordReader>> reader;
    {
      py::gil_scoped_release release;
      reader = io::RecordReader::Open(path, {.compression = c});
    }
    reader_ = ValueOrThrow(std::move(reader));
  }
  // The next record, or None at the end of the file.
  py::object Next() {
    Status s;
    {
      py::gil_scoped_release release;
      s = reader_->Next(&record_);
    }
    if (IsOutOfRange(s)) return py::none();
    ThrowIfError(s);
    return py::bytes(record_);
  }
  uint64_t offset() const { return reader_->offset(); }

 private:
  std::unique_ptr<io::RecordReader> reader_;
  std::string record_;
};

}  // namespace

void BindRecords(py::module_& m) {
  py::class_<PyRecordWriter>(m, "RecordWriter")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"),
           py::arg("compression") = "")
      .def("write", &PyRecordWriter::Write)
      .def("flush", &PyRecordWriter::Flush)
      .def("close", &PyRecordWriter::Close);
  py::class_<PyRecordReader>(m, "RecordReader")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"),
           py::arg("compression") = "")
      .def("next", &PyRecordReader::Next)
      .def_property_readonly("offset", &PyRecordReader::offset);
}

}  // namespace tw::python
