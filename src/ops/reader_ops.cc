// Reader ops, as TF 1.x's io_ops: TFRecordReaderV2, TextLineReaderV2,
// FixedLengthRecordReaderV2 and WholeFileReaderV2 make a reader (reader.h); ReaderReadV2 and
// ReaderReadUpToV2 read records from the files named by a string queue, asynchronously;
// ReaderNumRecordsProducedV2, ReaderNumWorkUnitsCompletedV2 and ReaderResetV2. Keys are
// TensorFlow's: "<file>:<byte offset>" (TFRecord), "<file>:<line number>" (text lines,
// counted from 1), "<file>:<record number>" (fixed length, from 0), "<file>" (whole file).
#include "tensorweave/ops/reader_ops.h"

#include <cerrno>
#include <fstream>

#include "src/base/errno_status.h"
#include "src/framework/op_kernel.h"
#include "src/framework/resource_lookup.h"
#include "src/io/compression.h"
#include "src/io/file_contents.h"
#include "src/io/record_reader.h"
#include "src/ops/reader.h"
#include "src/ops/resource_attrs.h"

namespace tw {
namespace {

// ---- The kinds of readers ----

class TFRecordSource : public RecordSource {
 public:
  explicit TFRecordSource(io::Compression compression) : compression_(compression) {}
  Status Open(const std::string& file) override {
    file_ = file;
    TW_ASSIGN_OR_RETURN(reader_, io::RecordReader::Open(file, {.compression = compression_}));
    return OkStatus();
  }
  Status Next(std::string* key, std::string* value, bool* at_end) override {
    const uint64_t offset = reader_->offset();
    Status s = reader_->Next(value);
    if (IsOutOfRange(s)) {
      *at_end = true;
      return OkStatus();
    }
    TW_RETURN_IF_ERROR(s);
    *key = file_ + ":" + std::to_string(offset);
    return OkStatus();
  }
  void Close() override { reader_.reset(); }

 private:
  const io::Compression compression_;
  std::string file_;
  std::unique_ptr<io::RecordReader> reader_;
};

class TextLineSource : public RecordSource {
 public:
  explicit TextLineSource(int64_t skip_header_lines) : skip_(skip_header_lines) {}
  Status Open(const std::string& file) override {
    file_ = file;
    line_ = 0;
    in_ = std::ifstream(file, std::ios::binary);
    if (!in_) return ErrnoStatus(errno, "cannot open", file);
    std::string header;
    for (int64_t i = 0; i < skip_ && std::getline(in_, header); ++i) ++line_;
    return OkStatus();
  }
  Status Next(std::string* key, std::string* value, bool* at_end) override {
    if (!std::getline(in_, *value)) {
      if (in_.bad()) return errors::DataLoss("cannot read ", file_);
      *at_end = true;
      return OkStatus();
    }
    // As TensorFlow: the newline goes, and a carriage return before it too.
    if (!value->empty() && value->back() == '\r') value->pop_back();
    *key = file_ + ":" + std::to_string(++line_);
    return OkStatus();
  }
  void Close() override { in_ = std::ifstream(); }

 private:
  const int64_t skip_;
  std::string file_;
  std::ifstream in_;
  int64_t line_ = 0;
};

class FixedLengthSource : public RecordSource {
 public:
  struct Options {
    int64_t header_bytes = 0, record_bytes = 1, footer_bytes = 0, hop_bytes = 0;
    io::Compression compression = io::Compression::kNone;
  };
  explicit FixedLengthSource(Options options) : options_(options) {}
  Status Open(const std::string& file) override {
    file_ = file;
    TW_ASSIGN_OR_RETURN(contents_, io::ReadFileContents(file, options_.compression));
    next_ = 0;
    return OkStatus();
  }
  Status Next(std::string* key, std::string* value, bool* at_end) override {
    const int64_t hop = options_.hop_bytes > 0 ? options_.hop_bytes : options_.record_bytes;
    const int64_t begin = options_.header_bytes + next_ * hop;
    const int64_t limit = static_cast<int64_t>(contents_.size()) - options_.footer_bytes;
    // As TensorFlow, a partial record at the end (before the footer) is dropped.
    if (begin + options_.record_bytes > limit) {
      *at_end = true;
      return OkStatus();
    }
    value->assign(contents_, begin, options_.record_bytes);
    *key = file_ + ":" + std::to_string(next_++);
    return OkStatus();
  }
  void Close() override { contents_.clear(); }

 private:
  const Options options_;
  std::string file_, contents_;
  int64_t next_ = 0;
};

class WholeFileSource : public RecordSource {
 public:
  Status Open(const std::string& file) override {
    file_ = file;
    done_ = false;
    return OkStatus();
  }
  Status Next(std::string* key, std::string* value, bool* at_end) override {
    if (done_) {
      *at_end = true;
      return OkStatus();
    }
    TW_ASSIGN_OR_RETURN(*value, io::ReadFileContents(file_, io::Compression::kNone));
    *key = file_;
    done_ = true;
    return OkStatus();
  }
  void Close() override {}

 private:
  std::string file_;
  bool done_ = false;
};

// ---- Making a reader ----

// The kernel of the ops that make a reader: shared by shared_name, else one per session
// and node, as the queues.
class MakeReaderOp : public OpKernel {
 public:
  MakeReaderOp(OpKernelConstruction* c, std::string kind) : OpKernel(c), kind_(std::move(kind)) {
    c->SetStatus(location_.Init(c));
  }
  void Compute(OpKernelContext* ctx) override {
    const std::string container = location_.Container(ctx);
    const std::string name = location_.Name(ctx, this->name());
    auto reader = ctx->resource_manager()->LookupOrCreate<ReaderResource>(
        container, name, [&]() -> StatusOr<std::shared_ptr<ReaderResource>> {
          TW_ASSIGN_OR_RETURN(std::unique_ptr<RecordSource> source, MakeSource());
          return std::make_shared<ReaderResource>(name, kind_, std::move(source));
        });
    TW_OP_REQUIRES_OK(ctx, reader.status());
    TW_OP_REQUIRES(ctx, (*reader)->kind() == kind_,
                   errors::InvalidArgument("shared_name ", name, " is a ", (*reader)->kind(),
                                           ", not a ", kind_));
    ctx->set_output(0, Tensor::Scalar(ResourceHandle{ctx->device()->name(), container, name,
                                                     ReaderResource::kTypeName}));
  }

 protected:
  virtual StatusOr<std::unique_ptr<RecordSource>> MakeSource() const = 0;

 private:
  const std::string kind_;
  ResourceLocation location_;
};

TW_REGISTER_OP("TFRecordReaderV2")
    .Output("reader_handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("compression_type: string = ''")
    .SetIsStateful()
    .Doc("A reader of the records of TFRecord files.");

class TFRecordReaderOp : public MakeReaderOp {
 public:
  explicit TFRecordReaderOp(OpKernelConstruction* c) : MakeReaderOp(c, "TFRecordReader") {
    std::string compression;
    Status s = c->GetAttr("compression_type", &compression);
    if (s.ok()) {
      auto parsed = io::ParseCompression(compression);
      if (parsed.ok()) compression_ = *parsed;
      s = parsed.status();
    }
    if (!s.ok()) c->SetStatus(s);
  }

 protected:
  StatusOr<std::unique_ptr<RecordSource>> MakeSource() const override {
    return std::unique_ptr<RecordSource>(new TFRecordSource(compression_));
  }

 private:
  io::Compression compression_ = io::Compression::kNone;
};
TW_REGISTER_KERNEL("TFRecordReaderV2", "CPU", TFRecordReaderOp);

TW_REGISTER_OP("TextLineReaderV2")
    .Output("reader_handle: resource")
    .Attr("skip_header_lines: int = 0")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A reader of the lines of text files.");

class TextLineReaderOp : public MakeReaderOp {
 public:
  explicit TextLineReaderOp(OpKernelConstruction* c) : MakeReaderOp(c, "TextLineReader") {
    Status s = c->GetAttr("skip_header_lines", &skip_);
    if (s.ok() && skip_ < 0) {
      s = errors::InvalidArgument("skip_header_lines must be >= 0 not ", skip_);
    }
    if (!s.ok()) c->SetStatus(s);
  }

 protected:
  StatusOr<std::unique_ptr<RecordSource>> MakeSource() const override {
    return std::unique_ptr<RecordSource>(new TextLineSource(skip_));
  }

 private:
  int64_t skip_ = 0;
};
TW_REGISTER_KERNEL("TextLineReaderV2", "CPU", TextLineReaderOp);

TW_REGISTER_OP("FixedLengthRecordReaderV2")
    .Output("reader_handle: resource")
    .Attr("header_bytes: int = 0")
    .Attr("record_bytes: int")
    .Attr("footer_bytes: int = 0")
    .Attr("hop_bytes: int = 0")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("encoding: string = ''")
    .SetIsStateful()
    .Doc("A reader of fixed-length records of binary files.");

class FixedLengthReaderOp : public MakeReaderOp {
 public:
  explicit FixedLengthReaderOp(OpKernelConstruction* c)
      : MakeReaderOp(c, "FixedLengthRecordReader") {
    std::string encoding;
    Status s = c->GetAttr("header_bytes", &options_.header_bytes);
    if (s.ok()) s = c->GetAttr("record_bytes", &options_.record_bytes);
    if (s.ok()) s = c->GetAttr("footer_bytes", &options_.footer_bytes);
    if (s.ok()) s = c->GetAttr("hop_bytes", &options_.hop_bytes);
    if (s.ok()) s = c->GetAttr("encoding", &encoding);
    if (s.ok()) {
      auto parsed = io::ParseCompression(encoding);
      if (parsed.ok()) options_.compression = *parsed;
      s = parsed.status();
    }
    if (s.ok() &&
        (options_.header_bytes < 0 || options_.footer_bytes < 0 || options_.hop_bytes < 0)) {
      s = errors::InvalidArgument("header_bytes, footer_bytes and hop_bytes must be >= 0, got ",
                                  options_.header_bytes, ", ", options_.footer_bytes, ", ",
                                  options_.hop_bytes);
    }
    if (s.ok() && options_.record_bytes <= 0) {
      s = errors::InvalidArgument("record_bytes must be > 0 not ", options_.record_bytes);
    }
    if (!s.ok()) c->SetStatus(s);
  }

 protected:
  StatusOr<std::unique_ptr<RecordSource>> MakeSource() const override {
    return std::unique_ptr<RecordSource>(new FixedLengthSource(options_));
  }

 private:
  FixedLengthSource::Options options_;
};
TW_REGISTER_KERNEL("FixedLengthRecordReaderV2", "CPU", FixedLengthReaderOp);

TW_REGISTER_OP("WholeFileReaderV2")
    .Output("reader_handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A reader that gives each file whole, keyed by its name.");

class WholeFileReaderOp : public MakeReaderOp {
 public:
  explicit WholeFileReaderOp(OpKernelConstruction* c) : MakeReaderOp(c, "WholeFileReader") {}

 protected:
  StatusOr<std::unique_ptr<RecordSource>> MakeSource() const override {
    return std::unique_ptr<RecordSource>(new WholeFileSource());
  }
};
TW_REGISTER_KERNEL("WholeFileReaderV2", "CPU", WholeFileReaderOp);

// ---- Reading ----

StatusOr<std::shared_ptr<ReaderResource>> LookupReader(OpKernelContext* ctx) {
  auto reader = LookupResource<ReaderResource>(*ctx, ctx->input(0));
  if (IsNotFound(reader.status())) {
    const ResourceHandle& h = ctx->input(0).flat<ResourceHandle>()[0];
    return errors::NotFound("reader ", h.name, " does not exist on ", h.device);
  }
  return reader;
}

template <bool kUpTo>
class ReaderReadOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto reader = LookupReader(ctx);
    TW_OP_REQUIRES_OK_ASYNC(ctx, reader.status(), done);
    auto queue = LookupResource<FIFOQueueResource>(*ctx, ctx->input(1));
    TW_OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    int64_t n = 1;
    if (kUpTo) {
      const Tensor& num = ctx->input(2);
      TW_OP_REQUIRES_ASYNC(ctx, num.num_elements() == 1,
                           errors::InvalidArgument("num_records must be a scalar, got shape ",
                                                   num.shape().DebugString()),
                           done);
      n = num.flat<int64_t>()[0];
      TW_OP_REQUIRES_ASYNC(ctx, n > 0,
                           errors::InvalidArgument("num_records must be positive, got ", n), done);
    }
    (*reader)->Read(n, kUpTo, *std::move(queue), ctx->cancellation_manager(), &ctx->file_access(),
                    [ctx, done = std::move(done)](StatusOr<ReaderResource::Records> records) {
                      if (!records.ok()) {
                        ctx->SetStatus(records.status());
                      } else if (kUpTo) {
                        ctx->set_output(0, Tensor::FromVector<std::string>(records->keys));
                        ctx->set_output(1, Tensor::FromVector<std::string>(records->values));
                      } else {
                        ctx->set_output(0, Tensor::Scalar(std::move(records->keys[0])));
                        ctx->set_output(1, Tensor::Scalar(std::move(records->values[0])));
                      }
                      done();
                    });
  }
};

TW_REGISTER_OP("ReaderReadV2")
    .Input("reader_handle: resource")
    .Input("queue_handle: resource")
    .Output("key: string")
    .Output("value: string")
    .SetIsStateful()
    .Doc("The next record of the reader, taking file names from the queue as needed.");
TW_REGISTER_KERNEL("ReaderReadV2", "CPU", ReaderReadOp<false>);

TW_REGISTER_OP("ReaderReadUpToV2")
    .Input("reader_handle: resource")
    .Input("queue_handle: resource")
    .Input("num_records: int64")
    .Output("keys: string")
    .Output("values: string")
    .SetIsStateful()
    .Doc("Up to num_records records of one file.");
TW_REGISTER_KERNEL("ReaderReadUpToV2", "CPU", ReaderReadOp<true>);

// kWhat: 0 records produced, 1 work units completed, 2 reset.
template <int kWhat>
class ReaderStateOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto reader = LookupReader(ctx);
    TW_OP_REQUIRES_OK(ctx, reader.status());
    if (kWhat == 0) ctx->set_output(0, Tensor::Scalar((*reader)->num_records_produced()));
    if (kWhat == 1) ctx->set_output(0, Tensor::Scalar((*reader)->num_work_units_completed()));
    if (kWhat == 2) TW_OP_REQUIRES_OK(ctx, (*reader)->Reset());
  }
};

TW_REGISTER_OP("ReaderNumRecordsProducedV2")
    .Input("reader_handle: resource")
    .Output("records_produced: int64")
    .SetIsStateful()
    .Doc("The number of records the reader has produced.");
TW_REGISTER_KERNEL("ReaderNumRecordsProducedV2", "CPU", ReaderStateOp<0>);

TW_REGISTER_OP("ReaderNumWorkUnitsCompletedV2")
    .Input("reader_handle: resource")
    .Output("units_completed: int64")
    .SetIsStateful()
    .Doc("The number of files the reader has finished.");
TW_REGISTER_KERNEL("ReaderNumWorkUnitsCompletedV2", "CPU", ReaderStateOp<1>);

TW_REGISTER_OP("ReaderResetV2")
    .Input("reader_handle: resource")
    .SetIsStateful()
    .Doc("Forgets the reader's current file and zeroes its counts.");
TW_REGISTER_KERNEL("ReaderResetV2", "CPU", ReaderStateOp<2>);

// ---- ReadFile, WriteFile ----

TW_REGISTER_OP("ReadFile")
    .Input("filename: string")
    .Output("contents: string")
    .Doc("The whole contents of the file.");

class ReadFileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& name = ctx->input(0);
    TW_OP_REQUIRES(ctx, name.num_elements() == 1 && name.rank() == 0,
                   errors::InvalidArgument("Input filename tensor must be scalar, but had shape: ",
                                           name.shape().DebugString()));
    const std::string& file = name.scalar<std::string>();
    TW_OP_REQUIRES_OK(ctx, ctx->file_access().Check(file, "input file"));
    auto contents = io::ReadFileContents(file, io::Compression::kNone);
    TW_OP_REQUIRES_OK(ctx, contents.status());
    ctx->set_output(0, Tensor::Scalar(*std::move(contents)));
  }
};
TW_REGISTER_KERNEL("ReadFile", "CPU", ReadFileOp);

TW_REGISTER_OP("WriteFile")
    .Input("filename: string")
    .Input("contents: string")
    .SetIsStateful()
    .Doc("Writes contents to the file, replacing it.");

class WriteFileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& name = ctx->input(0);
    const Tensor& contents = ctx->input(1);
    TW_OP_REQUIRES(ctx, name.num_elements() == 1 && name.rank() == 0,
                   errors::InvalidArgument("Input filename tensor must be scalar, but had shape: ",
                                           name.shape().DebugString()));
    TW_OP_REQUIRES(ctx, contents.num_elements() == 1 && contents.rank() == 0,
                   errors::InvalidArgument("Contents tensor must be scalar, but had shape: ",
                                           contents.shape().DebugString()));
    const std::string& file = name.scalar<std::string>();
    TW_OP_REQUIRES_OK(ctx, ctx->file_access().Check(file, "output file"));
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (out) out << contents.scalar<std::string>();
    if (out) out.close();
    TW_OP_REQUIRES(ctx, static_cast<bool>(out), ErrnoStatus(errno, "cannot write", file));
  }
};
TW_REGISTER_KERNEL("WriteFile", "CPU", WriteFileOp);

}  // namespace

namespace ops {
namespace {
AttrMap ResourceAttrs(const ReaderOptions& options) {
  return {{"container", MakeAttr(options.container)},
          {"shared_name", MakeAttr(options.shared_name)}};
}
ReadResult Outputs(const Operation& op) {
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}
}  // namespace

Reader TFRecordReader(const Scope& scope, const std::string& compression_type,
                      const ReaderOptions& options) {
  AttrMap attrs = ResourceAttrs(options);
  attrs["compression_type"] = MakeAttr(compression_type);
  return {scope.AddNodeOutput("TFRecordReaderV2", {}, attrs)};
}

Reader TextLineReader(const Scope& scope, int64_t skip_header_lines, const ReaderOptions& options) {
  AttrMap attrs = ResourceAttrs(options);
  attrs["skip_header_lines"] = MakeAttr(skip_header_lines);
  return {scope.AddNodeOutput("TextLineReaderV2", {}, attrs)};
}

Reader FixedLengthRecordReader(const Scope& scope, int64_t record_bytes,
                               const FixedLengthRecordReaderOptions& options) {
  AttrMap attrs = ResourceAttrs(options.reader);
  attrs["record_bytes"] = MakeAttr(record_bytes);
  attrs["header_bytes"] = MakeAttr(options.header_bytes);
  attrs["footer_bytes"] = MakeAttr(options.footer_bytes);
  attrs["hop_bytes"] = MakeAttr(options.hop_bytes);
  attrs["encoding"] = MakeAttr(options.encoding);
  return {scope.AddNodeOutput("FixedLengthRecordReaderV2", {}, attrs)};
}

Reader WholeFileReader(const Scope& scope, const ReaderOptions& options) {
  return {scope.AddNodeOutput("WholeFileReaderV2", {}, ResourceAttrs(options))};
}

ReadResult ReaderRead(const Scope& scope, const Reader& reader, const Queue& queue) {
  return Outputs(scope.AddNode("ReaderReadV2", {{reader.handle}, {queue.handle}}));
}

ReadResult ReaderReadUpTo(const Scope& scope, const Reader& reader, const Queue& queue,
                          Input num_records) {
  return Outputs(
      scope.AddNode("ReaderReadUpToV2", {{reader.handle}, {queue.handle}, {num_records}}));
}

Output ReaderNumRecordsProduced(const Scope& scope, const Reader& reader) {
  return scope.AddNodeOutput("ReaderNumRecordsProducedV2", {{reader.handle}});
}

Output ReaderNumWorkUnitsCompleted(const Scope& scope, const Reader& reader) {
  return scope.AddNodeOutput("ReaderNumWorkUnitsCompletedV2", {{reader.handle}});
}

Operation ReaderReset(const Scope& scope, const Reader& reader) {
  return scope.AddNode("ReaderResetV2", {{reader.handle}});
}

}  // namespace ops
}  // namespace tw
