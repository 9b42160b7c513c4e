// The datasets that make elements: from tensors (TensorSlice, Tensors), numbers (Range),
// and files (TFRecord, TextLine, FixedLengthRecord: plain, ZLIB or GZIP, read with
// src/io, one file after the other).
#include <cstring>

#include "src/data/dataset.h"
#include "src/io/file_contents.h"
#include "src/io/record_reader.h"

namespace tw::data {
namespace {

// ---- TensorSlice: the rows of its inputs ----

// Row `i` of `t` as a tensor of its own.
Tensor RowOf(const Tensor& t, int64_t i) {
  std::vector<int64_t> dims(t.shape().dims().begin() + 1, t.shape().dims().end());
  Tensor out(t.dtype(), *TensorShape::Create(dims));
  const int64_t n = out.num_elements();
  if (t.dtype() == DT_STRING) {
    std::copy_n(t.flat<std::string>().begin() + i * n, n, out.flat<std::string>().begin());
  } else if (out.TotalBytes() > 0) {
    std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + i * out.TotalBytes(),
                out.TotalBytes());
  }
  return out;
}

class TensorSliceDataset : public DatasetBase {
 public:
  explicit TensorSliceDataset(Element components) : components_(std::move(components)) {}
  std::string DebugString() const override { return "TensorSlice"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self(), components_));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const DatasetBase> keep, const Element& c) : keep_(keep), c_(c) {}
    Status GetNext(Element* out, bool* end) override {
      if (next_ >= c_[0].dim(0)) {
        *end = true;
        return OkStatus();
      }
      out->clear();
      for (const Tensor& t : c_) out->push_back(RowOf(t, next_));
      ++next_;
      return OkStatus();
    }

   private:
    std::shared_ptr<const DatasetBase> keep_;
    const Element& c_;
    int64_t next_ = 0;
  };
  const Element components_;
};

StatusOr<Element> AllInputs(const proto::DatasetDef& def, const BuildContext& ctx) {
  Element out;
  for (int i = 0; i < def.inputs_size(); ++i) {
    TW_ASSIGN_OR_RETURN(Tensor t, DatasetInput(def, ctx, i));
    out.push_back(std::move(t));
  }
  if (out.empty()) return errors::InvalidArgument("dataset ", def.op(), " has no components");
  return out;
}

TW_REGISTER_DATASET(
    "TensorSlice",
    [](const proto::DatasetDef& def, const BuildContext& ctx,
       auto) -> StatusOr<std::shared_ptr<const DatasetBase>> {
      TW_ASSIGN_OR_RETURN(Element components, AllInputs(def, ctx));
      for (size_t i = 0; i < components.size(); ++i) {
        if (components[i].rank() < 1 || components[i].dim(0) != components[0].dim(0)) {
          return errors::InvalidArgument(
              "Dimensions of the components of Dataset.from_tensor_slices must agree in their "
              "first dimension: component 0 has shape ",
              components[0].shape().DebugString(), ", component ", i, " has shape ",
              components[i].shape().DebugString());
        }
      }
      return std::make_shared<TensorSliceDataset>(std::move(components));
    });

// ---- Tensors: one element ----

class TensorsDataset : public DatasetBase {
 public:
  explicit TensorsDataset(Element components) : components_(std::move(components)) {}
  std::string DebugString() const override { return "Tensors"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self(), components_));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const DatasetBase> keep, const Element& c) : keep_(keep), c_(c) {}
    Status GetNext(Element* out, bool* end) override {
      if (done_) {
        *end = true;
        return OkStatus();
      }
      *out = c_;
      done_ = true;
      return OkStatus();
    }

   private:
    std::shared_ptr<const DatasetBase> keep_;
    const Element& c_;
    bool done_ = false;
  };
  const Element components_;
};

TW_REGISTER_DATASET("Tensors",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       auto) -> StatusOr<std::shared_ptr<const DatasetBase>> {
                      TW_ASSIGN_OR_RETURN(Element components, AllInputs(def, ctx));
                      return std::make_shared<TensorsDataset>(std::move(components));
                    });

// ---- Range ----

class RangeDataset : public DatasetBase {
 public:
  RangeDataset(int64_t start, int64_t stop, int64_t step)
      : start_(start), stop_(stop), step_(step) {}
  std::string DebugString() const override { return "Range"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self(), *this));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const DatasetBase> keep, const RangeDataset& d)
        : keep_(std::move(keep)), d_(d), next_(d.start_) {}
    Status GetNext(Element* out, bool* end) override {
      if (d_.step_ > 0 ? next_ >= d_.stop_ : next_ <= d_.stop_) {
        *end = true;
        return OkStatus();
      }
      *out = {Tensor::Scalar(next_)};
      next_ += d_.step_;
      return OkStatus();
    }

   private:
    std::shared_ptr<const DatasetBase> keep_;
    const RangeDataset& d_;
    int64_t next_;
  };
  const int64_t start_, stop_, step_;
};

StatusOr<int64_t> ScalarInt(const proto::DatasetDef& def, const BuildContext& ctx, int i,
                            const char* what) {
  TW_ASSIGN_OR_RETURN(Tensor t, DatasetInput(def, ctx, i));
  if (t.num_elements() != 1 || (t.dtype() != DT_INT64 && t.dtype() != DT_INT32)) {
    return errors::InvalidArgument(def.op(), ": ", what, " must be an int scalar, got ",
                                   t.DebugString());
  }
  return t.dtype() == DT_INT64 ? t.flat<int64_t>()[0] : t.flat<int32_t>()[0];
}

TW_REGISTER_DATASET("Range",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       auto) -> StatusOr<std::shared_ptr<const DatasetBase>> {
                      TW_ASSIGN_OR_RETURN(int64_t start, ScalarInt(def, ctx, 0, "start"));
                      TW_ASSIGN_OR_RETURN(int64_t stop, ScalarInt(def, ctx, 1, "stop"));
                      TW_ASSIGN_OR_RETURN(int64_t step, ScalarInt(def, ctx, 2, "step"));
                      if (step == 0)
                        return errors::InvalidArgument("step must be a non-zero integer.");
                      return std::make_shared<RangeDataset>(start, stop, step);
                    });

// ---- Files ----

// One file's records.
class FileRecords {
 public:
  virtual ~FileRecords() = default;
  virtual Status Next(std::string* record, bool* end) = 0;
};

using OpenFile = std::function<StatusOr<std::unique_ptr<FileRecords>>(const std::string&)>;

// The records of every file in turn.
class FilesDataset : public DatasetBase {
 public:
  FilesDataset(std::string kind, std::vector<std::string> files, OpenFile open)
      : kind_(std::move(kind)), files_(std::move(files)), open_(std::move(open)) {}
  std::string DebugString() const override { return kind_; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self(), *this));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const DatasetBase> keep, const FilesDataset& d)
        : keep_(std::move(keep)), d_(d) {}
    Status GetNext(Element* out, bool* end) override {
      std::string record;
      while (true) {
        if (current_ == nullptr) {
          if (next_file_ >= d_.files_.size()) {
            *end = true;
            return OkStatus();
          }
          TW_ASSIGN_OR_RETURN(current_, d_.open_(d_.files_[next_file_++]));
        }
        bool file_end = false;
        Status s = current_->Next(&record, &file_end);
        if (!s.ok()) {
          current_.reset();  // the rest of a damaged file is not trusted
          return s;
        }
        if (!file_end) {
          *out = {Tensor::Scalar(std::move(record))};
          return OkStatus();
        }
        current_.reset();
      }
    }

   private:
    std::shared_ptr<const DatasetBase> keep_;
    const FilesDataset& d_;
    size_t next_file_ = 0;
    std::unique_ptr<FileRecords> current_;
  };
  const std::string kind_;
  const std::vector<std::string> files_;
  const OpenFile open_;
};

class TFRecordFile : public FileRecords {
 public:
  explicit TFRecordFile(std::unique_ptr<io::RecordReader> r) : r_(std::move(r)) {}
  Status Next(std::string* record, bool* end) override {
    Status s = r_->Next(record);
    if (IsOutOfRange(s)) {
      *end = true;
      return OkStatus();
    }
    return s;
  }

 private:
  std::unique_ptr<io::RecordReader> r_;
};

class TextLineFile : public FileRecords {
 public:
  explicit TextLineFile(std::string contents) : contents_(std::move(contents)) {}
  Status Next(std::string* line, bool* end) override {
    if (at_ >= contents_.size()) {
      *end = true;
      return OkStatus();
    }
    size_t newline = contents_.find('\n', at_);
    if (newline == std::string::npos) newline = contents_.size();
    line->assign(contents_, at_, newline - at_);
    if (!line->empty() && line->back() == '\r') line->pop_back();
    at_ = newline + 1;
    return OkStatus();
  }

 private:
  std::string contents_;
  size_t at_ = 0;
};

class FixedLengthFile : public FileRecords {
 public:
  FixedLengthFile(std::string contents, int64_t header, int64_t record, int64_t footer)
      : contents_(std::move(contents)), at_(header), record_(record), footer_(footer) {}
  Status Next(std::string* out, bool* end) override {
    const int64_t limit = static_cast<int64_t>(contents_.size()) - footer_;
    if (at_ + record_ > limit) {
      *end = true;
      return OkStatus();
    }
    out->assign(contents_, at_, record_);
    at_ += record_;
    return OkStatus();
  }

 private:
  std::string contents_;
  int64_t at_, record_, footer_;
};

// The file names (input 0), each allowed by the building step's policy.
StatusOr<std::vector<std::string>> FileNames(const proto::DatasetDef& def,
                                             const BuildContext& ctx) {
  TW_ASSIGN_OR_RETURN(Tensor names, DatasetInput(def, ctx, 0));
  if (names.dtype() != DT_STRING || names.rank() > 1) {
    return errors::InvalidArgument(def.op(),
                                   ": filenames must be a string scalar or vector, "
                                   "got ",
                                   names.DebugString());
  }
  std::vector<std::string> files(names.flat<std::string>().begin(),
                                 names.flat<std::string>().end());
  for (const auto& f : files) TW_RETURN_IF_ERROR(ctx.file_access.Check(f, "input file"));
  return files;
}

StatusOr<io::Compression> CompressionAttr(const proto::DatasetDef& def) {
  std::string name;
  if (def.attrs().count("compression_type")) {
    TW_RETURN_IF_ERROR(GetDatasetAttr(def, "compression_type", &name));
  }
  return io::ParseCompression(name);
}

TW_REGISTER_DATASET(
    "TFRecord",
    [](const proto::DatasetDef& def, const BuildContext& ctx,
       auto) -> StatusOr<std::shared_ptr<const DatasetBase>> {
      TW_ASSIGN_OR_RETURN(auto files, FileNames(def, ctx));
      TW_ASSIGN_OR_RETURN(io::Compression compression, CompressionAttr(def));
      int64_t buffer = 256 << 10;
      if (def.attrs().count("buffer_size"))
        TW_RETURN_IF_ERROR(GetDatasetAttr(def, "buffer_size", &buffer));
      if (buffer <= 0) buffer = 256 << 10;
      return std::make_shared<FilesDataset>(
          "TFRecord", std::move(files),
          [compression, buffer](const std::string& f) -> StatusOr<std::unique_ptr<FileRecords>> {
            TW_ASSIGN_OR_RETURN(auto reader, io::RecordReader::Open(
                                                 f, {.compression = compression,
                                                     .buffer_bytes = static_cast<size_t>(buffer)}));
            return std::unique_ptr<FileRecords>(new TFRecordFile(std::move(reader)));
          });
    });

TW_REGISTER_DATASET(
    "TextLine",
    [](const proto::DatasetDef& def, const BuildContext& ctx,
       auto) -> StatusOr<std::shared_ptr<const DatasetBase>> {
      TW_ASSIGN_OR_RETURN(auto files, FileNames(def, ctx));
      TW_ASSIGN_OR_RETURN(io::Compression compression, CompressionAttr(def));
      return std::make_shared<FilesDataset>(
          "TextLine", std::move(files),
          [compression](const std::string& f) -> StatusOr<std::unique_ptr<FileRecords>> {
            TW_ASSIGN_OR_RETURN(std::string contents, io::ReadFileContents(f, compression));
            return std::unique_ptr<FileRecords>(new TextLineFile(std::move(contents)));
          });
    });

TW_REGISTER_DATASET("FixedLengthRecord",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       auto) -> StatusOr<std::shared_ptr<const DatasetBase>> {
                      TW_ASSIGN_OR_RETURN(auto files, FileNames(def, ctx));
                      TW_ASSIGN_OR_RETURN(io::Compression compression, CompressionAttr(def));
                      int64_t header = 0, record = 0, footer = 0;
                      TW_RETURN_IF_ERROR(GetDatasetAttr(def, "header_bytes", &header));
                      TW_RETURN_IF_ERROR(GetDatasetAttr(def, "record_bytes", &record));
                      TW_RETURN_IF_ERROR(GetDatasetAttr(def, "footer_bytes", &footer));
                      if (record <= 0 || header < 0 || footer < 0) {
                        return errors::InvalidArgument(
                            "FixedLengthRecordDataset: record_bytes must be > 0 and "
                            "header_bytes, footer_bytes >= 0, got ",
                            record, ", ", header, ", ", footer);
                      }
                      return std::make_shared<FilesDataset>(
                          "FixedLengthRecord", std::move(files),
                          [=](const std::string& f) -> StatusOr<std::unique_ptr<FileRecords>> {
                            TW_ASSIGN_OR_RETURN(std::string contents,
                                                io::ReadFileContents(f, compression));
                            return std::unique_ptr<FileRecords>(
                                new FixedLengthFile(std::move(contents), header, record, footer));
                          });
                    });

}  // namespace
}  // namespace tw::data
