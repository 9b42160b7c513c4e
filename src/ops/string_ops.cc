// TF 1.x's string ops for input pipelines: StringSplit (tokens as a sparse tensor),
// Substr (bytes or UTF-8 characters), StringJoin and StringToHashBucketFast (the hash
// buckets of feature columns), with TensorFlow's signatures and messages.
#include "tensorweave/ops/string_ops.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "farmhash.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"

namespace tw {
namespace {

// ---- StringSplit ----

TW_REGISTER_OP("StringSplit")
    .Input("input: string")
    .Input("delimiter: string")
    .Output("indices: int64")
    .Output("values: string")
    .Output("shape: int64")
    .Attr("skip_empty: bool = true")
    .Doc("Splits each string at the delimiter's characters into a sparse tensor of tokens.");

// The tokens of `text` split at any character of `delimiters` (each byte when empty).
std::vector<std::string_view> Tokens(std::string_view text, std::string_view delimiters,
                                     bool skip_empty) {
  std::vector<std::string_view> out;
  if (delimiters.empty()) {
    for (size_t i = 0; i < text.size(); ++i) out.push_back(text.substr(i, 1));
    return out;
  }
  size_t begin = 0;
  while (true) {
    const size_t end = text.find_first_of(delimiters, begin);
    std::string_view token = text.substr(begin, end == std::string_view::npos ? end : end - begin);
    if (!token.empty() || !skip_empty) out.push_back(token);
    if (end == std::string_view::npos) return out;
    begin = end + 1;
  }
}

class StringSplitOp : public OpKernel {
 public:
  explicit StringSplitOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("skip_empty", &skip_empty_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& delimiter = ctx->input(1);
    TW_OP_REQUIRES(ctx, input.rank() == 1,
                   errors::InvalidArgument("input must be a vector, got shape: ",
                                           input.shape().DebugString()));
    TW_OP_REQUIRES(ctx, delimiter.rank() == 0,
                   errors::InvalidArgument("delimiter must be a scalar, got shape: ",
                                           delimiter.shape().DebugString()));
    const std::string& delimiters = delimiter.scalar<std::string>();
    const int64_t rows = input.num_elements();
    std::vector<std::vector<std::string_view>> tokens(static_cast<size_t>(rows));
    int64_t total = 0, widest = 0;
    for (int64_t i = 0; i < rows; ++i) {
      tokens[i] = Tokens(input.flat<std::string>()[i], delimiters, skip_empty_);
      total += static_cast<int64_t>(tokens[i].size());
      widest = std::max(widest, static_cast<int64_t>(tokens[i].size()));
    }
    auto indices = Tensor::Allocate(DT_INT64, TensorShape({total, 2}));
    auto values = Tensor::Allocate(DT_STRING, TensorShape({total}));
    TW_OP_REQUIRES_OK(ctx, indices.status());
    TW_OP_REQUIRES_OK(ctx, values.status());
    int64_t* at = indices->flat<int64_t>().data();
    std::string* value = values->flat<std::string>().data();
    for (int64_t i = 0; i < rows; ++i) {
      for (size_t j = 0; j < tokens[i].size(); ++j) {
        *at++ = i;
        *at++ = static_cast<int64_t>(j);
        *value++ = std::string(tokens[i][j]);
      }
    }
    ctx->set_output(0, *std::move(indices));
    ctx->set_output(1, *std::move(values));
    ctx->set_output(2, Tensor::FromVector<int64_t>({rows, widest}));
  }

 private:
  bool skip_empty_ = true;
};
TW_REGISTER_KERNEL("StringSplit", "CPU", StringSplitOp);
TW_NO_GRADIENT("StringSplit");

// ---- Substr ----

TW_REGISTER_OP("Substr")
    .Input("input: string")
    .Input("pos: T")
    .Input("len: T")
    .Output("output: string")
    .Attr("T: {int32, int64}")
    .Attr("unit: string = 'BYTE'")
    .Doc("The substring of each string from pos, of at most len bytes or UTF-8 characters.");

// The byte offset of each UTF-8 character of `s`, then s.size() (a continuation byte
// belongs to the character before it).
std::vector<size_t> CharOffsets(std::string_view s) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) offsets.push_back(i);
  }
  offsets.push_back(s.size());
  return offsets;
}

class SubstrOp : public OpKernel {
 public:
  explicit SubstrOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string unit;
    Status s = c->GetAttr("unit", &unit);
    if (s.ok() && unit != "BYTE" && unit != "UTF8_CHAR") {
      s = errors::InvalidArgument("node ", c->def().name(),
                                  ": unit must be BYTE or UTF8_CHAR, got ", unit);
    }
    c->SetStatus(s);
    utf8_ = unit == "UTF8_CHAR";
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& pos = ctx->input(1);
    const Tensor& len = ctx->input(2);
    TW_OP_REQUIRES(ctx, pos.shape() == len.shape(),
                   errors::InvalidArgument(
                       "pos and len should have the same shape, got: ", pos.shape().DebugString(),
                       " vs. ", len.shape().DebugString()));
    const bool pos_scalar = pos.rank() == 0, input_scalar = input.rank() == 0;
    TW_OP_REQUIRES(ctx, pos_scalar || input_scalar || pos.shape() == input.shape(),
                   errors::InvalidArgument("Incompatible shapes: ", input.shape().DebugString(),
                                           " vs. ", pos.shape().DebugString()));
    const TensorShape& shape = input_scalar ? pos.shape() : input.shape();
    auto out = Tensor::Allocate(DT_STRING, shape);
    TW_OP_REQUIRES_OK(ctx, out.status());
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      const std::string& s = input.flat<std::string>()[input_scalar ? 0 : i];
      const int64_t p = Int(pos, pos_scalar ? 0 : i), n = Int(len, pos_scalar ? 0 : i);
      auto piece = Piece(s, p, n, i);
      TW_OP_REQUIRES_OK(ctx, piece.status());
      out->flat<std::string>()[i] = std::string(*piece);
    }
    ctx->set_output(0, *std::move(out));
  }

 private:
  static int64_t Int(const Tensor& t, int64_t i) {
    return t.dtype() == DT_INT32 ? t.flat<int32_t>()[i] : t.flat<int64_t>()[i];
  }
  // TensorFlow's rule: pos in [-size, size], counted from the end when negative; a
  // negative len takes the rest.
  StatusOr<std::string_view> Piece(std::string_view s, int64_t pos, int64_t len,
                                   int64_t index) const {
    std::vector<size_t> offsets;
    if (utf8_) offsets = CharOffsets(s);
    const int64_t size =
        utf8_ ? static_cast<int64_t>(offsets.size()) - 1 : static_cast<int64_t>(s.size());
    if (pos > size || pos < -size) {
      return errors::InvalidArgument("pos ", pos, " out of range for string b'", s, "' at index ",
                                     index);
    }
    if (pos < 0) pos += size;
    const int64_t end = len < 0 ? size : std::min(size, pos + len);
    if (!utf8_) return s.substr(pos, end - pos);
    return s.substr(offsets[pos], offsets[end] - offsets[pos]);
  }
  bool utf8_ = false;
};
TW_REGISTER_KERNEL("Substr", "CPU", SubstrOp);
TW_NO_GRADIENT("Substr");

// ---- StringJoin ----

TW_REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Output("output: string")
    .Attr("N: int")
    .Attr("separator: string = ''")
    .Doc("The inputs' strings joined element by element; scalars join every element.");

class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("separator", &separator_));
  }
  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;
    bool have_shape = false;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (t.rank() == 0) continue;
      TW_OP_REQUIRES(ctx, !have_shape || t.shape() == shape,
                     errors::InvalidArgument("Input shapes do not match: ", shape.DebugString(),
                                             " vs. ", t.shape().DebugString()));
      shape = t.shape();
      have_shape = true;
    }
    auto out = Tensor::Allocate(DT_STRING, shape);
    TW_OP_REQUIRES_OK(ctx, out.status());
    for (int64_t j = 0; j < shape.num_elements(); ++j) {
      std::string& joined = out->flat<std::string>()[j];
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const Tensor& t = ctx->input(i);
        if (i > 0) joined += separator_;
        joined += t.flat<std::string>()[t.rank() == 0 ? 0 : j];
      }
    }
    ctx->set_output(0, *std::move(out));
  }

 private:
  std::string separator_;
};
TW_REGISTER_KERNEL("StringJoin", "CPU", StringJoinOp);
TW_NO_GRADIENT("StringJoin");

// ---- StringToHashBucketFast ----

TW_REGISTER_OP("StringToHashBucketFast")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .Doc("Each string's bucket: its 64-bit FarmHash fingerprint modulo num_buckets.");

// TensorFlow's buckets exactly: its Fingerprint64 is FarmHash's (Debian's libfarmhash), so
// a model's hashed features land in the same buckets as under TensorFlow.
class StringToHashBucketFastOp : public OpKernel {
 public:
  explicit StringToHashBucketFastOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("num_buckets", &num_buckets_));
    if (c->status().ok() && num_buckets_ < 1) {
      c->SetStatus(errors::InvalidArgument("num_buckets must be at least 1, got ", num_buckets_));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    auto out = Tensor::Allocate(DT_INT64, in.shape());
    TW_OP_REQUIRES_OK(ctx, out.status());
    auto strings = in.flat<std::string>();
    auto buckets = out->flat<int64_t>();
    const auto n = static_cast<uint64_t>(num_buckets_);
    for (size_t i = 0; i < strings.size(); ++i) {
      buckets[i] =
          static_cast<int64_t>(util::Fingerprint64(strings[i].data(), strings[i].size()) % n);
    }
    ctx->set_output(0, *std::move(out));
  }

 private:
  int64_t num_buckets_ = 1;
};
TW_REGISTER_KERNEL("StringToHashBucketFast", "CPU", StringToHashBucketFastOp);
TW_NO_GRADIENT("StringToHashBucketFast");

// ---- AsString ----

TW_REGISTER_OP("AsString")
    .Input("input: T")
    .Output("output: string")
    .Attr("T: {int32, int64, float, double, bool}")
    .Attr("precision: int = -1")
    .Attr("scientific: bool = false")
    .Attr("shortest: bool = false")
    .Attr("width: int = -1")
    .Attr("fill: string = ''")
    .Doc("Each element as text, printf-formatted as TensorFlow's AsString formats it.");

// TensorFlow's format: "%" fill width [.precision] then d for integers; f, e (scientific)
// or g (shortest) for floats; booleans are "true" and "false".
class AsStringOp : public OpKernel {
 public:
  explicit AsStringOp(OpKernelConstruction* c) : OpKernel(c) {
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    std::string fill;
    Status s = c->GetAttr("precision", &precision);
    if (s.ok()) s = c->GetAttr("scientific", &scientific);
    if (s.ok()) s = c->GetAttr("shortest", &shortest);
    if (s.ok()) s = c->GetAttr("width", &width);
    if (s.ok()) s = c->GetAttr("fill", &fill);
    if (s.ok()) s = c->GetAttr("T", &dtype_);
    if (s.ok() && fill.size() > 1) {
      s = errors::InvalidArgument("Fill string must be one or fewer characters");
    }
    if (s.ok() && scientific && shortest) {
      s = errors::InvalidArgument("Cannot select both scientific and shortest notation");
    }
    const bool is_float = dtype_ == DT_FLOAT || dtype_ == DT_DOUBLE;
    if (s.ok() && !is_float && (precision > -1 || scientific || shortest)) {
      s = errors::InvalidArgument(
          "precision, scientific and shortest apply to floating "
          "point inputs only, got ",
          DataTypeName(dtype_));
    }
    if (s.ok() && !fill.empty() && std::string_view(" +-0#").find(fill[0]) == std::string::npos) {
      s = errors::InvalidArgument("Fill argument not supported: \"", fill, "\"");
    }
    c->SetStatus(s);
    format_ = "%" + fill;
    if (width > -1) format_ += std::to_string(width);
    if (precision > -1) format_ += "." + std::to_string(precision);
    if (dtype_ == DT_INT32) {
      format_ += "d";
    } else if (dtype_ == DT_INT64) {
      format_ += "lld";
    } else if (is_float) {
      format_ += shortest ? "g" : (scientific ? "e" : "f");
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    auto out = Tensor::Allocate(DT_STRING, in.shape());
    TW_OP_REQUIRES_OK(ctx, out.status());
    auto text = out->flat<std::string>();
    for (size_t i = 0; i < text.size(); ++i) {
      switch (dtype_) {
        case DT_BOOL:
          text[i] = in.flat<bool>()[i] ? "true" : "false";
          break;
        case DT_INT32:
          text[i] = Format(in.flat<int32_t>()[i]);
          break;
        case DT_INT64:
          text[i] = Format(static_cast<long long>(in.flat<int64_t>()[i]));  // NOLINT: %lld
          break;
        case DT_FLOAT:
          text[i] = Format(static_cast<double>(in.flat<float>()[i]));
          break;
        default:
          text[i] = Format(in.flat<double>()[i]);
          break;
      }
    }
    ctx->set_output(0, *std::move(out));
  }

 private:
  template <typename T>
  std::string Format(T value) const {
    char buffer[512];
    const int n = std::snprintf(buffer, sizeof(buffer), format_.c_str(), value);
    if (n < 0) return std::string();
    if (static_cast<size_t>(n) < sizeof(buffer)) return std::string(buffer, n);
    std::string big(static_cast<size_t>(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), format_.c_str(), value);
    big.resize(static_cast<size_t>(n));
    return big;
  }

  DataType dtype_ = DT_INVALID;
  std::string format_;
};
TW_REGISTER_KERNEL("AsString", "CPU", AsStringOp);
TW_NO_GRADIENT("AsString");

}  // namespace

namespace ops {

Output AsString(const Scope& scope, Input input, const AsStringOptions& options) {
  return scope.AddNodeOutput("AsString", {{std::move(input)}},
                             {{"precision", MakeAttr(options.precision)},
                              {"scientific", MakeAttr(options.scientific)},
                              {"shortest", MakeAttr(options.shortest)},
                              {"width", MakeAttr(options.width)},
                              {"fill", MakeAttr(options.fill)}});
}

Output StringToHashBucketFast(const Scope& scope, Input input, int64_t num_buckets) {
  return scope.AddNodeOutput("StringToHashBucketFast", {{std::move(input)}},
                             {{"num_buckets", MakeAttr(num_buckets)}});
}

SparseOutput StringSplit(const Scope& scope, Input input, Input delimiter, bool skip_empty) {
  Operation op = scope.AddNode("StringSplit", {{std::move(input)}, {std::move(delimiter)}},
                               {{"skip_empty", MakeAttr(skip_empty)}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

Output Substr(const Scope& scope, Input input, Input pos, Input len, SubstrUnit unit) {
  return scope.AddNodeOutput(
      "Substr", {{std::move(input)}, {std::move(pos)}, {std::move(len)}},
      {{"unit", MakeAttr(std::string(unit == SubstrUnit::kByte ? "BYTE" : "UTF8_CHAR"))}});
}

Output StringJoin(const Scope& scope, const std::vector<Input>& inputs,
                  const std::string& separator) {
  InputList list(inputs.begin(), inputs.end());
  return scope.AddNodeOutput("StringJoin", {list}, {{"separator", MakeAttr(separator)}});
}

}  // namespace ops
}  // namespace tw
