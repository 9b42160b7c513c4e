// Parsing ops, as TF 1.x's parsing_ops: ParseExample (tf.train.Example records into dense
// and sparse tensors), DecodeRaw (bytes into numbers), DecodeCSV (lines into columns) and
// StringToNumber. Signatures, attributes and error messages are TensorFlow's, so that
// graphs and programs written for it build and fail the same way here.
#include "tensorweave/ops/parsing_ops.h"

#include <charconv>
#include <cstring>

#include "src/framework/op_kernel.h"
#include "src/framework/parallel_for.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/example_wire.h"

namespace tw {
namespace {

// ---- ParseExample ----

TW_REGISTER_OP("ParseExample")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: Nsparse * string")
    .Input("dense_keys: Ndense * string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: Nsparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: Nsparse * int64")
    .Output("dense_values: Tdense")
    .Attr("Nsparse: int >= 0")
    .Attr("Ndense: int >= 0")
    .Attr("sparse_types: list(type) >= 0")
    .Attr("Tdense: list(type) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .Doc("Parses a vector of serialized tf.train.Example protos into dense and sparse tensors.");

// A tensor whose shape comes from the input: ResourceExhausted rather than a crash when it
// cannot be allocated.
StatusOr<Tensor> NewTensor(DataType dtype, const std::vector<int64_t>& dims) {
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Create(dims));
  return Tensor::Allocate(dtype, shape);
}

bool IsFeatureType(DataType t) { return t == DT_FLOAT || t == DT_INT64 || t == DT_STRING; }

using example_wire::FeatureView;

// Fills out[at, at + n) with the scalar `value` (of out's type).
void FillWith(const Tensor& value, Tensor* out, int64_t at, int64_t n) {
  switch (out->dtype()) {
    case DT_FLOAT:
      std::fill_n(out->flat<float>().begin() + at, n, value.flat<float>()[0]);
      break;
    case DT_INT64:
      std::fill_n(out->flat<int64_t>().begin() + at, n, value.flat<int64_t>()[0]);
      break;
    case DT_STRING:
      std::fill_n(out->flat<std::string>().begin() + at, n, value.flat<std::string>()[0]);
      break;
    default:
      break;
  }
}

// Copies the whole of `from` (a default value) to out[at, ...).
void CopyTensor(const Tensor& from, Tensor* out, int64_t at) {
  if (from.dtype() == DT_STRING) {
    std::copy(from.flat<std::string>().begin(), from.flat<std::string>().end(),
              out->flat<std::string>().begin() + at);
  } else if (from.TotalBytes() > 0) {
    std::memcpy(
        static_cast<char*>(out->raw_data()) + at * (from.TotalBytes() / from.num_elements()),
        from.raw_data(), from.TotalBytes());
  }
}

class ParseExampleOp : public OpKernel {
 public:
  explicit ParseExampleOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("Nsparse", &num_sparse_);
    if (s.ok()) s = c->GetAttr("Ndense", &num_dense_);
    if (s.ok()) s = c->GetAttr("sparse_types", &sparse_types_);
    if (s.ok()) s = c->GetAttr("Tdense", &dense_types_);
    if (s.ok()) s = c->GetAttr("dense_shapes", &dense_shapes_);
    if (s.ok() && (static_cast<int64_t>(sparse_types_.size()) != num_sparse_ ||
                   static_cast<int64_t>(dense_types_.size()) != num_dense_ ||
                   static_cast<int64_t>(dense_shapes_.size()) != num_dense_)) {
      s = errors::InvalidArgument(
          "ParseExample ", c->def().name(), ": len(sparse_types) (", sparse_types_.size(),
          ") != Nsparse (", num_sparse_, ") or len(Tdense) (", dense_types_.size(),
          ") or len(dense_shapes) (", dense_shapes_.size(), ") != Ndense (", num_dense_, ")");
    }
    for (size_t i = 0; s.ok() && i < sparse_types_.size(); ++i) {
      if (!IsFeatureType(sparse_types_[i])) {
        s = errors::InvalidArgument("ParseExample ", c->def().name(), ": sparse_types[", i, "] is ",
                                    DataTypeName(sparse_types_[i]),
                                    "; a feature is float, int64 or string");
      }
    }
    for (size_t i = 0; s.ok() && i < dense_types_.size(); ++i) {
      const PartialShape& shape = dense_shapes_[i];
      if (!IsFeatureType(dense_types_[i])) {
        s = errors::InvalidArgument("ParseExample ", c->def().name(), ": Tdense[", i, "] is ",
                                    DataTypeName(dense_types_[i]),
                                    "; a feature is float, int64 or string");
        break;
      }
      bool ok = !shape.unknown_rank;
      for (size_t d = 0; ok && d < shape.dims.size(); ++d) {
        ok = shape.dims[d] >= 0 || (d == 0 && shape.dims[d] == -1);
      }
      if (!ok) {
        s = errors::InvalidArgument(
            "ParseExample ", c->def().name(), ": dense_shapes[", i, "] is ", shape.DebugString(),
            "; only the first dimension of a dense feature may be unknown (a "
            "FixedLenSequenceFeature)");
      }
    }
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    const Tensor& names = ctx->input(1);
    TW_OP_REQUIRES(ctx, serialized.rank() <= 1,
                   errors::InvalidArgument("Expected serialized to be a scalar or vector, got "
                                           "shape: ",
                                           serialized.shape().DebugString()));
    const int64_t batch = serialized.num_elements();
    TW_OP_REQUIRES(ctx, names.num_elements() == 0 || names.num_elements() == batch,
                   errors::InvalidArgument("Expected len(names) == len(serialized), but got: ",
                                           names.num_elements(), " vs. ", batch));
    std::vector<std::string> sparse_keys, dense_keys;
    const int first_dense_key = 2 + static_cast<int>(num_sparse_);
    const int first_default = first_dense_key + static_cast<int>(num_dense_);
    for (int i = 2; i < first_default; ++i) {
      TW_OP_REQUIRES(ctx, ctx->input(i).num_elements() == 1,
                     errors::InvalidArgument("Expected key ", i - 2, " to be a scalar, got shape ",
                                             ctx->input(i).shape().DebugString()));
      (i < first_dense_key ? sparse_keys : dense_keys)
          .push_back(ctx->input(i).flat<std::string>()[0]);
    }
    // A dense feature's default: empty (required) or its whole value; a
    // FixedLenSequenceFeature's is the scalar it is padded with.
    for (int i = 0; i < num_dense_; ++i) {
      const Tensor& d = ctx->input(first_default + i);
      const PartialShape& shape = dense_shapes_[i];
      const bool variable = !shape.dims.empty() && shape.dims[0] == -1;
      int64_t elements = 1;
      for (int64_t dim : shape.dims) elements *= dim;
      TW_OP_REQUIRES(
          ctx,
          d.num_elements() == 0 ||
              (variable ? d.num_elements() == 1 : d.num_elements() == elements),
          errors::InvalidArgument("dense_defaults[", i, "] (key ", dense_keys[i], ") has ",
                                  d.num_elements(), " values but the feature's shape ",
                                  shape.DebugString(), variable ? " pads with one" : " has ",
                                  variable ? "" : std::to_string(elements)));
    }

    // Parse every example (across the pool: parsing is most of the cost), reading only
    // the features asked for (example_wire.h).
    std::vector<std::string> keys = sparse_keys;
    keys.insert(keys.end(), dense_keys.begin(), dense_keys.end());
    example_wire::ExampleParser parser(keys);
    const int64_t num_keys = static_cast<int64_t>(keys.size());
    std::vector<std::optional<FeatureView>> views(batch * num_keys);
    std::vector<int64_t> bad(1, -1);
    absl::Mutex bad_mu;
    const auto& records = serialized.flat<std::string>();
    ParallelFor(ctx->device(), batch, /*min_shard=*/16, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        if (!parser.Parse(records[b], absl::MakeSpan(views.data() + b * num_keys, num_keys))) {
          absl::MutexLock lock(&bad_mu);
          if (bad[0] < 0 || b < bad[0]) bad[0] = b;
        }
      }
    });
    auto name_of = [&](int64_t b) -> std::string {
      return names.num_elements() > 0 ? names.flat<std::string>()[b] : "<unknown>";
    };
    TW_OP_REQUIRES(ctx, bad[0] < 0,
                   errors::InvalidArgument("Could not parse example input, value: '",
                                           records[bad[0]].substr(0, 64), "' (name ",
                                           name_of(bad[0]), ", index ", bad[0], ")"));
    // Feature `k` (sparse keys first, then dense) of example `b`.
    auto lookup = [&](int64_t b, int64_t k) -> const std::optional<FeatureView>& {
      return views[b * num_keys + k];
    };
    auto check_type = [&](int64_t b, const std::string& key, const FeatureView& v,
                          DataType want) -> Status {
      if (v.dtype == DT_INVALID || v.dtype == want) return OkStatus();
      return errors::InvalidArgument(
          "Name: ", name_of(b), ", Feature: ", key,
          ".  Data types don't match. Data type: ", DataTypeName(v.dtype),
          " but expected type: ", DataTypeName(want));
    };

    // Sparse features: the values of every example, concatenated.
    const int out_values = static_cast<int>(num_sparse_);
    const int out_shapes = 2 * static_cast<int>(num_sparse_);
    const int out_dense = 3 * static_cast<int>(num_sparse_);
    for (int i = 0; i < num_sparse_; ++i) {
      std::vector<FeatureView> per(batch);
      int64_t total = 0, longest = 0;
      for (int64_t b = 0; b < batch; ++b) {
        if (const auto& v = lookup(b, i)) {
          TW_OP_REQUIRES_OK(ctx, check_type(b, sparse_keys[i], *v, sparse_types_[i]));
          per[b] = *v;
          per[b].dtype = sparse_types_[i];
        }
        total += per[b].size;
        longest = std::max(longest, per[b].size);
      }
      auto indices_or = NewTensor(DT_INT64, {total, 2});
      TW_OP_REQUIRES_OK(ctx, indices_or.status());
      auto values_or = NewTensor(sparse_types_[i], {total});
      TW_OP_REQUIRES_OK(ctx, values_or.status());
      Tensor& indices = *indices_or;
      Tensor& values = *values_or;
      int64_t at = 0;
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t j = 0; j < per[b].size; ++j) {
          indices.flat<int64_t>()[2 * (at + j)] = b;
          indices.flat<int64_t>()[2 * (at + j) + 1] = j;
        }
        example_wire::CopyValues(per[b], per[b].size, &values, at);
        at += per[b].size;
      }
      ctx->set_output(i, std::move(indices));
      ctx->set_output(out_values + i, std::move(values));
      ctx->set_output(out_shapes + i, Tensor::FromVector<int64_t>({batch, longest}));
    }

    // Dense features: [batch] + shape, a FixedLenSequenceFeature padded to the longest.
    for (int i = 0; i < num_dense_; ++i) {
      const std::string& key = dense_keys[i];
      const Tensor& dflt = ctx->input(first_default + i);
      const PartialShape& shape = dense_shapes_[i];
      const bool variable = !shape.dims.empty() && shape.dims[0] == -1;
      int64_t row = 1;  // values per example (fixed) or per step (variable)
      for (size_t d = variable ? 1 : 0; d < shape.dims.size(); ++d) row *= shape.dims[d];
      std::vector<FeatureView> per(batch);
      std::vector<bool> found(batch, false);
      int64_t rows = variable ? 0 : 1;
      for (int64_t b = 0; b < batch; ++b) {
        const auto& v = lookup(b, num_sparse_ + i);
        if (!v) {
          TW_OP_REQUIRES(ctx, variable || dflt.num_elements() > 0,
                         errors::InvalidArgument("Name: ", name_of(b), ", Feature: ", key,
                                                 " is required but could not be found."));
          continue;
        }
        TW_OP_REQUIRES_OK(ctx, check_type(b, key, *v, dense_types_[i]));
        per[b] = *v;
        per[b].dtype = dense_types_[i];
        found[b] = true;
        if (variable) {
          TW_OP_REQUIRES(ctx, row == 0 ? v->size == 0 : v->size % row == 0,
                         errors::InvalidArgument(
                             "Name: ", name_of(b), ", Key: ", key, ", Index: ", b,
                             ".  Number of values is not a multiple of stride. values size: ",
                             v->size, " but output shape: ", shape.DebugString()));
          if (row > 0) rows = std::max(rows, v->size / row);
        } else {
          TW_OP_REQUIRES(ctx, v->size == row,
                         errors::InvalidArgument("Name: ", name_of(b), ", Key: ", key, ", Index: ",
                                                 b, ".  Number of ", DataTypeName(dense_types_[i]),
                                                 " values != expected.  Values size: ", v->size,
                                                 " but output shape: ", shape.DebugString()));
        }
      }
      // A sequence feature without a default pads with zeros (empty strings), as TF.
      Tensor pad = dflt;
      if (variable && dflt.num_elements() == 0) {
        pad = Tensor(dense_types_[i], TensorShape({}));
        if (dense_types_[i] == DT_FLOAT) pad.flat<float>()[0] = 0;
        if (dense_types_[i] == DT_INT64) pad.flat<int64_t>()[0] = 0;
      }
      std::vector<int64_t> dims{batch};
      if (variable) dims.push_back(rows);
      dims.insert(dims.end(), shape.dims.begin() + (variable ? 1 : 0), shape.dims.end());
      auto out_or = NewTensor(dense_types_[i], dims);
      TW_OP_REQUIRES_OK(ctx, out_or.status());
      Tensor& out = *out_or;
      const int64_t per_example = rows * row;
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t at = b * per_example;
        if (found[b]) {
          example_wire::CopyValues(per[b], per[b].size, &out, at);
          if (per[b].size < per_example) {
            FillWith(pad, &out, at + per[b].size, per_example - per[b].size);
          }
        } else if (variable) {
          if (per_example > 0) FillWith(pad, &out, at, per_example);
        } else {
          CopyTensor(dflt, &out, at);
        }
      }
      ctx->set_output(out_dense + i, std::move(out));
    }
  }

 private:
  int64_t num_sparse_ = 0, num_dense_ = 0;
  std::vector<DataType> sparse_types_, dense_types_;
  std::vector<PartialShape> dense_shapes_;
};
TW_REGISTER_KERNEL("ParseExample", "CPU", ParseExampleOp);
TW_NO_GRADIENT("ParseExample");

// ---- DecodeRaw ----

TW_REGISTER_OP("DecodeRaw")
    .Input("bytes: string")
    .Output("output: out_type")
    .Attr("out_type: {float, double, int32, uint16, uint8, int16, int8, int64}")
    .Attr("little_endian: bool = true")
    .Doc("Reinterprets the bytes of each string as a vector of numbers.");

class DecodeRawOp : public OpKernel {
 public:
  explicit DecodeRawOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("out_type", &out_type_);
    if (s.ok()) s = c->GetAttr("little_endian", &little_endian_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const auto strings = in.flat<std::string>();
    const size_t width = DataTypeSize(out_type_);
    const int64_t bytes = strings.empty() ? 0 : static_cast<int64_t>(strings[0].size());
    for (size_t i = 1; i < strings.size(); ++i) {
      TW_OP_REQUIRES(ctx, static_cast<int64_t>(strings[i].size()) == bytes,
                     errors::InvalidArgument("DecodeRaw requires input strings to all be the "
                                             "same size, but element ",
                                             i, " has size ", strings[i].size(), " != ", bytes));
    }
    TW_OP_REQUIRES(ctx, bytes % static_cast<int64_t>(width) == 0,
                   errors::InvalidArgument("Input to DecodeRaw has length ", bytes,
                                           " that is not a multiple of ", width, ", the size of ",
                                           DataTypeName(out_type_)));
    std::vector<int64_t> dims(in.shape().dims().begin(), in.shape().dims().end());
    dims.push_back(bytes / static_cast<int64_t>(width));
    auto out = NewTensor(out_type_, dims);
    TW_OP_REQUIRES_OK(ctx, out.status());
    char* dst = static_cast<char*>(out->raw_data());
    const bool swap = little_endian_ != (std::endian::native == std::endian::little);
    for (size_t i = 0; i < strings.size(); ++i, dst += bytes) {
      std::memcpy(dst, strings[i].data(), bytes);
      if (swap && width > 1) {
        for (int64_t at = 0; at < bytes; at += static_cast<int64_t>(width)) {
          std::reverse(dst + at, dst + at + width);
        }
      }
    }
    ctx->set_output(0, *std::move(out));
  }

 private:
  DataType out_type_ = DT_FLOAT;
  bool little_endian_ = true;
};
TW_REGISTER_KERNEL("DecodeRaw", "CPU", DecodeRawOp);
TW_NO_GRADIENT("DecodeRaw");

// ---- StringToNumber and DecodeCSV's numbers ----

// Parses all of `text` as a number of type T (as strtod/strtoll would, with no trailing
// characters; surrounding spaces and "inf"/"nan" allowed for floats, as TensorFlow).
template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty()) return false;
  if constexpr (std::is_floating_point_v<T>) {
    // strtod accepts what TensorFlow's SafeStringToFloat does: exponents, inf, nan, hex.
    std::string copy(text);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) return false;
    *out = static_cast<T>(v);
    return true;
  } else {
    if (text.front() == '+') text.remove_prefix(1);
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
    return ec == std::errc() && ptr == text.data() + text.size();
  }
}

TW_REGISTER_OP("StringToNumber")
    .Input("string_tensor: string")
    .Output("output: out_type")
    .Attr("out_type: {float, double, int32, int64} = float")
    .Doc("Converts each string to a number of out_type.");

class StringToNumberOp : public OpKernel {
 public:
  explicit StringToNumberOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("out_type", &out_type_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    auto out = Tensor::Allocate(out_type_, in.shape());
    TW_OP_REQUIRES_OK(ctx, out.status());
    Status s;
    switch (out_type_) {
      case DT_FLOAT:
        s = Convert<float>(in, &*out);
        break;
      case DT_DOUBLE:
        s = Convert<double>(in, &*out);
        break;
      case DT_INT32:
        s = Convert<int32_t>(in, &*out);
        break;
      default:
        s = Convert<int64_t>(in, &*out);
        break;
    }
    TW_OP_REQUIRES_OK(ctx, s);
    ctx->set_output(0, *std::move(out));
  }

 private:
  template <typename T>
  static Status Convert(const Tensor& in, Tensor* out) {
    auto src = in.flat<std::string>();
    auto dst = out->flat<T>();
    for (size_t i = 0; i < src.size(); ++i) {
      if (!ParseNumber(src[i], &dst[i])) {
        return errors::InvalidArgument("StringToNumberOp could not correctly convert string: ",
                                       src[i]);
      }
    }
    return OkStatus();
  }
  DataType out_type_ = DT_FLOAT;
};
TW_REGISTER_KERNEL("StringToNumber", "CPU", StringToNumberOp);
TW_NO_GRADIENT("StringToNumber");

// ---- DecodeCSV ----

TW_REGISTER_OP("DecodeCSV")
    .Input("records: string")
    .Input("record_defaults: OUT_TYPE")
    .Output("output: OUT_TYPE")
    .Attr("OUT_TYPE: list(type) >= 1")
    .Attr("field_delim: string = ','")
    .Attr("use_quote_delim: bool = true")
    .Attr("na_value: string = ''")
    .Attr("select_cols: list(int) = []")
    .Doc("Splits each CSV record into columns of the defaults' types.");

class DecodeCSVOp : public OpKernel {
 public:
  explicit DecodeCSVOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string delim;
    Status s = c->GetAttr("OUT_TYPE", &types_);
    if (s.ok()) s = c->GetAttr("field_delim", &delim);
    if (s.ok()) s = c->GetAttr("use_quote_delim", &use_quote_delim_);
    if (s.ok()) s = c->GetAttr("na_value", &na_value_);
    if (s.ok()) s = c->GetAttr("select_cols", &select_cols_);
    if (s.ok() && delim.size() != 1) {
      s = errors::InvalidArgument("field_delim should be only 1 char");
    }
    if (s.ok()) delim_ = delim[0];
    for (size_t i = 0; s.ok() && i < types_.size(); ++i) {
      const DataType t = types_[i];
      if (t != DT_FLOAT && t != DT_DOUBLE && t != DT_INT32 && t != DT_INT64 && t != DT_STRING) {
        s = errors::InvalidArgument("DecodeCSV ", c->def().name(), ": column ", i, " is ",
                                    DataTypeName(t),
                                    "; columns are float, double, int32, "
                                    "int64 or string");
      }
    }
    for (size_t i = 0; s.ok() && i < select_cols_.size(); ++i) {
      if (select_cols_[i] < 0 || (i > 0 && select_cols_[i] <= select_cols_[i - 1])) {
        s = errors::InvalidArgument("select_cols is not strictly increasing.");
      }
    }
    if (s.ok() && !select_cols_.empty() && select_cols_.size() != types_.size()) {
      s = errors::InvalidArgument(
          "select_cols should match record_defaults. Got select_cols "
          "of length ",
          select_cols_.size(), " and record_defaults of length ", types_.size());
    }
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& records = ctx->input(0);
    const int columns = static_cast<int>(types_.size());
    for (int c = 0; c < columns; ++c) {
      TW_OP_REQUIRES(ctx, ctx->input(1 + c).num_elements() <= 1,
                     errors::InvalidArgument("There should only be 1 default per field but "
                                             "field ",
                                             c, " has ", ctx->input(1 + c).num_elements()));
    }
    std::vector<Tensor> outs;
    for (int c = 0; c < columns; ++c) {
      auto t = Tensor::Allocate(types_[c], records.shape());
      TW_OP_REQUIRES_OK(ctx, t.status());
      outs.push_back(*std::move(t));
    }
    const auto lines = records.flat<std::string>();
    std::vector<std::string> fields;
    for (size_t r = 0; r < lines.size(); ++r) {
      TW_OP_REQUIRES_OK(ctx, Split(lines[r], r, &fields));
      if (select_cols_.empty()) {
        TW_OP_REQUIRES(ctx, static_cast<int>(fields.size()) == columns,
                       errors::InvalidArgument("Expect ", columns, " fields but have ",
                                               fields.size(), " in record ", r));
      } else {
        TW_OP_REQUIRES(
            ctx, static_cast<int64_t>(fields.size()) > select_cols_.back(),
            errors::InvalidArgument("Expect at least ", select_cols_.back() + 1,
                                    " fields but have ", fields.size(), " in record ", r));
      }
      for (int c = 0; c < columns; ++c) {
        const std::string& field = fields[select_cols_.empty() ? c : select_cols_[c]];
        TW_OP_REQUIRES_OK(ctx, Store(field, ctx->input(1 + c), c, r, &outs[c]));
      }
    }
    for (int c = 0; c < columns; ++c) ctx->set_output(c, std::move(outs[c]));
  }

 private:
  // Splits one record into fields; with use_quote_delim a field may be quoted ("a,b"),
  // with "" standing for a quote inside it.
  Status Split(const std::string& line, size_t r, std::vector<std::string>* fields) const {
    fields->clear();
    size_t i = 0;
    while (true) {
      std::string field;
      if (use_quote_delim_ && i < line.size() && line[i] == '"') {
        ++i;
        while (true) {
          if (i >= line.size()) {
            return errors::InvalidArgument(
                "Quoted field has to end with quote followed by "
                "delim or end, in record ",
                r);
          }
          if (line[i] == '"') {
            if (i + 1 < line.size() && line[i + 1] == '"') {
              field.push_back('"');
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          field.push_back(line[i++]);
        }
        if (i < line.size() && line[i] != delim_) {
          return errors::InvalidArgument(
              "Quote inside a string has to be escaped by another "
              "quote, in record ",
              r);
        }
      } else {
        while (i < line.size() && line[i] != delim_) {
          if (use_quote_delim_ && line[i] == '"') {
            return errors::InvalidArgument(
                "Unquoted fields cannot have quotes inside, in "
                "record ",
                r);
          }
          field.push_back(line[i++]);
        }
      }
      fields->push_back(std::move(field));
      if (i >= line.size()) break;
      ++i;  // the delimiter; a line ending in one has an empty last field
    }
    return OkStatus();
  }

  Status Store(const std::string& field, const Tensor& dflt, int c, size_t r, Tensor* out) const {
    if (field.empty() || field == na_value_) {
      if (dflt.num_elements() == 0) {
        return errors::InvalidArgument("Field ", c, " is required but missing in record ", r, "!");
      }
      switch (out->dtype()) {
        case DT_FLOAT:
          out->flat<float>()[r] = dflt.flat<float>()[0];
          break;
        case DT_DOUBLE:
          out->flat<double>()[r] = dflt.flat<double>()[0];
          break;
        case DT_INT32:
          out->flat<int32_t>()[r] = dflt.flat<int32_t>()[0];
          break;
        case DT_INT64:
          out->flat<int64_t>()[r] = dflt.flat<int64_t>()[0];
          break;
        default:
          out->flat<std::string>()[r] = dflt.flat<std::string>()[0];
          break;
      }
      return OkStatus();
    }
    bool ok = true;
    switch (out->dtype()) {
      case DT_FLOAT:
        ok = ParseNumber(field, &out->flat<float>()[r]);
        break;
      case DT_DOUBLE:
        ok = ParseNumber(field, &out->flat<double>()[r]);
        break;
      case DT_INT32:
        ok = ParseNumber(field, &out->flat<int32_t>()[r]);
        break;
      case DT_INT64:
        ok = ParseNumber(field, &out->flat<int64_t>()[r]);
        break;
      default:
        out->flat<std::string>()[r] = field;
        break;
    }
    if (!ok) {
      return errors::InvalidArgument("Field ", c, " in record ", r, " is not a valid ",
                                     DataTypeName(out->dtype()), ": ", field);
    }
    return OkStatus();
  }

  std::vector<DataType> types_;
  char delim_ = ',';
  bool use_quote_delim_ = true;
  std::string na_value_;
  std::vector<int64_t> select_cols_;
};
TW_REGISTER_KERNEL("DecodeCSV", "CPU", DecodeCSVOp);
TW_NO_GRADIENT("DecodeCSV");

}  // namespace

namespace ops {

ParsedExamples ParseExample(const Scope& scope, Input serialized,
                            const std::vector<VarLenFeature>& sparse,
                            const std::vector<FixedLenFeature>& dense, std::optional<Input> names) {
  InputList sparse_keys, dense_keys, defaults;
  std::vector<DataType> sparse_types, dense_types;
  std::vector<PartialShape> shapes;
  for (const auto& f : sparse) {
    sparse_keys.push_back(Tensor::Scalar(f.key));
    sparse_types.push_back(f.dtype);
  }
  for (const auto& f : dense) {
    dense_keys.push_back(Tensor::Scalar(f.key));
    dense_types.push_back(f.dtype);
    shapes.push_back(PartialShape::Of(f.shape));
    defaults.push_back(f.default_value ? *f.default_value : Tensor(f.dtype, TensorShape({0})));
  }
  const Input no_names = Tensor(DT_STRING, TensorShape({0}));
  Operation op =
      scope.AddNode("ParseExample",
                    {{serialized}, {names ? *names : no_names}, sparse_keys, dense_keys, defaults},
                    {{"Nsparse", MakeAttr(static_cast<int64_t>(sparse.size()))},
                     {"Ndense", MakeAttr(static_cast<int64_t>(dense.size()))},
                     {"sparse_types", MakeAttr(sparse_types)},
                     {"Tdense", MakeAttr(dense_types)},
                     {"dense_shapes", MakeAttr(shapes)}});
  ParsedExamples out;
  const int n = static_cast<int>(sparse.size());
  auto output = [&](int i) { return op.valid() ? Output(op, i) : Output(); };
  for (int i = 0; i < n; ++i) out.sparse.push_back({output(i), output(n + i), output(2 * n + i)});
  for (int i = 0; i < static_cast<int>(dense.size()); ++i) out.dense.push_back(output(3 * n + i));
  return out;
}

Output DecodeRaw(const Scope& scope, Input bytes, DataType out_type, bool little_endian) {
  return scope.AddNodeOutput(
      "DecodeRaw", {{bytes}},
      {{"out_type", MakeAttr(out_type)}, {"little_endian", MakeAttr(little_endian)}});
}

Output StringToNumber(const Scope& scope, Input strings, DataType out_type) {
  return scope.AddNodeOutput("StringToNumber", {{strings}}, {{"out_type", MakeAttr(out_type)}});
}

std::vector<Output> DecodeCSV(const Scope& scope, Input records,
                              const std::vector<Tensor>& record_defaults,
                              const DecodeCSVOptions& options) {
  InputList defaults(record_defaults.begin(), record_defaults.end());
  Operation op = scope.AddNode("DecodeCSV", {{records}, defaults},
                               {{"field_delim", MakeAttr(std::string(1, options.field_delim))},
                                {"use_quote_delim", MakeAttr(options.use_quote_delim)},
                                {"na_value", MakeAttr(options.na_value)},
                                {"select_cols", MakeAttr(options.select_cols)}});
  std::vector<Output> out;
  for (size_t i = 0; i < record_defaults.size(); ++i) {
    out.push_back(op.valid() ? Output(op, static_cast<int>(i)) : Output());
  }
  return out;
}

}  // namespace ops
}  // namespace tw
