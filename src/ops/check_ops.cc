// Ops that check values or report them: CheckNumerics, Assert and Print. Definitions, CPU
// kernels, gradients and graph-building functions (declared in tensorweave/ops/index_ops.h);
// shape functions are in src/graph/index_shape_fns.cc. Their errors carry TensorFlow's
// exact text (programs match on it); the executor prefixes the node's name.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/index_ops.h"

namespace tw {
namespace {

// ---- Formatting tensors as TensorFlow 1.x's Tensor::SummarizeValue ----

template <typename T>
std::string OneElement(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return absl::Utf8SafeCEscape(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_integral_v<T>) {
    return absl::StrCat(static_cast<int64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return absl::StrCat(v);
  } else {
    return "?";
  }
}

// Nested brackets per dimension, elements separated by spaces, stopping after `limit`
// elements with "..." (TF's PrintOneDim).
template <typename T>
void OneDim(int d, const std::vector<int64_t>& dims, int64_t limit, const T* data, int64_t* next,
            std::string* out) {
  if (*next >= limit) return;
  const int64_t count = dims[d];
  if (d == static_cast<int>(dims.size()) - 1) {
    for (int64_t i = 0; i < count; ++i) {
      if (*next >= limit) {
        if (d != 0) absl::StrAppend(out, "...");
        return;
      }
      if (i > 0) absl::StrAppend(out, " ");
      absl::StrAppend(out, OneElement(data[(*next)++]));
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    bool opened = false;
    if (*next < limit) {
      absl::StrAppend(out, "[");
      opened = true;
    }
    OneDim(d + 1, dims, limit, data, next, out);
    if (*next < limit || opened) absl::StrAppend(out, "]");
  }
}

// At most `summarize` elements of `t` (all when negative), as TF 1.x prints them in Assert
// and Print: "1 2 3...", "[1 2][3...]...".
std::string Summarize(const Tensor& t, int64_t summarize) {
  const int64_t n = t.num_elements();
  const int64_t limit = summarize < 0 ? n : std::min(summarize, n);
  std::string out;
  DispatchType(t.dtype(), [&]<typename T>() {
    const T* data = t.flat<T>().data();
    if (t.rank() == 0) {
      out = OneElement(data[0]);
      return;
    }
    int64_t next = 0;
    OneDim(0, t.shape().dims(), limit, data, &next, &out);
  });
  if (t.rank() > 0 && n > limit) absl::StrAppend(&out, "...");
  return out;
}

// As TF's Tensor::SummarizeValue(summarize, print_v2=true), what tf.print shows: numpy's
// layout ("[[1 2]\n [3 4]]"), at most `ends` entries at each end of every dimension with
// "..." between.
template <typename T>
std::string ElementV2(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return "\"" + absl::Utf8SafeCEscape(v) + "\"";
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";
  } else {
    return OneElement(v);
  }
}

void DimSpacing(int d, int rank, std::string* out) {
  if (d == rank - 1) {
    out->push_back(' ');
    return;
  }
  out->append(static_cast<size_t>(rank - d - 1), '\n');
  out->append(static_cast<size_t>(d + 1), ' ');
}

template <typename T>
void OneDimV2(int d, const std::vector<int64_t>& dims, int64_t ends, const T* data, int64_t at,
              std::string* out) {
  const int rank = static_cast<int>(dims.size());
  if (d == rank) {
    absl::StrAppend(out, ElementV2(data[at]));
    return;
  }
  out->push_back('[');
  const int64_t count = dims[d];
  int64_t stride = 1;
  for (int i = d + 1; i < rank; ++i) stride *= dims[i];
  for (int64_t i = 0; i < ends && i < count; ++i) {
    if (i > 0) DimSpacing(d, rank, out);
    OneDimV2(d + 1, dims, ends, data, at + stride * i, out);
  }
  if (count > 2 * ends) {
    DimSpacing(d, rank, out);
    absl::StrAppend(out, "...");
  }
  for (int64_t i = std::max(ends, count - ends); i < count; ++i) {
    DimSpacing(d, rank, out);
    OneDimV2(d + 1, dims, ends, data, at + stride * i, out);
  }
  out->push_back(']');
}

std::string SummarizeV2(const Tensor& t, int64_t summarize) {
  std::string out;
  const int64_t ends = summarize < 0 ? t.num_elements() : summarize;
  DispatchType(t.dtype(), [&]<typename T>() {
    OneDimV2(0, t.shape().dims(), ends, t.flat<T>().data(), 0, &out);
  });
  return out;
}

// ---- CheckNumerics ----
TW_REGISTER_OP("CheckNumerics")
    .Input("tensor: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("message: string")
    .Doc(
        "tensor unchanged; InvalidArgument \"<message> : Tensor had NaN values\" (Inf, Inf "
        "and NaN) when it holds any.");

class CheckNumericsOp : public OpKernel {
 public:
  explicit CheckNumericsOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("message", &message_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    bool nan = false, inf = false;
    Dispatch(FloatTypes{}, in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (T v : in.flat<T>()) {
        nan |= std::isnan(v);
        inf |= std::isinf(v);
      }
    });
    const char* what = inf ? (nan ? "Inf and NaN" : "Inf") : "NaN";
    TW_OP_REQUIRES(ctx, !nan && !inf,
                   errors::InvalidArgument(message_, " : Tensor had ", what, " values"));
    ctx->set_output(0, in);
  }

 private:
  std::string message_;
};
TW_REGISTER_KERNEL("CheckNumerics", "CPU", CheckNumericsOp);

// The check passes the gradient through (checked too, as TF does).
Status CheckNumericsGradient(const Scope& scope, const ForwardOp& op,
                             const std::vector<Gradient>& grad_outputs,
                             std::vector<Gradient>* grad_inputs) {
  std::string message;
  TW_RETURN_IF_ERROR(GetNodeAttr(op.def(), "message", &message));
  (*grad_inputs)[0].dense = ops::CheckNumerics(
      scope, grad_outputs[0].dense,
      absl::StrCat("Not a number (NaN) or infinity (Inf) values detected in gradient. ", message));
  return OkStatus();
}
TW_REGISTER_GRADIENT("CheckNumerics", CheckNumericsGradient);

// ---- Assert ----
TW_REGISTER_OP("Assert")
    .Input("condition: bool")
    .Input("data: T")
    .Attr("T: list(type)")
    .Attr("summarize: int = 3")
    .SetIsStateful()
    .Doc(
        "Nothing when condition is true; else InvalidArgument \"assertion failed: [d0] "
        "[d1]\" with at most summarize elements of each data tensor.");

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("summarize", &summarize_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    // TensorFlow's messages.
    TW_OP_REQUIRES(ctx, cond.rank() == 0,
                   errors::InvalidArgument("In[0] expects to be a scalar, got shape ",
                                           cond.shape().DebugString()));
    if (cond.flat<bool>()[0]) return;
    std::string msg = "assertion failed: ";
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&msg, "[", Summarize(ctx->input(i), summarize_), "]");
      if (i < ctx->num_inputs() - 1) absl::StrAppend(&msg, " ");
    }
    ctx->SetStatus(errors::InvalidArgument(msg));
  }

 private:
  int64_t summarize_ = 3;
};
TW_REGISTER_KERNEL("Assert", "CPU", AssertOp);
TW_NO_GRADIENT("Assert");

// ---- Print ----
TW_REGISTER_OP("Print")
    .Input("input: T")
    .Input("data: U")
    .Output("output: T")
    .Attr("T: type")
    .Attr("U: list(type) >= 0")
    .Attr("message: string = ''")
    .Attr("first_n: int = -1")
    .Attr("summarize: int = 3")
    .SetIsStateful()
    .Doc(
        "input, passed through, after writing message and each data tensor in brackets to "
        "stderr (only the first first_n times when first_n >= 0).");

class PrintOp : public OpKernel {
 public:
  explicit PrintOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("message", &message_);
    if (s.ok()) s = c->GetAttr("first_n", &first_n_);
    if (s.ok()) s = c->GetAttr("summarize", &summarize_);
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, ctx->input(0));
    if (first_n_ >= 0) {
      absl::MutexLock lock(&mu_);
      if (count_ >= first_n_) return;
      ++count_;
    }
    std::string msg = message_;
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&msg, "[", Summarize(ctx->input(i), summarize_), "]");
    }
    std::cerr << msg << std::endl;
  }

 private:
  std::string message_;
  int64_t first_n_ = -1;
  int64_t summarize_ = 3;
  absl::Mutex mu_;
  int64_t count_ ABSL_GUARDED_BY(mu_) = 0;
};
TW_REGISTER_KERNEL("Print", "CPU", PrintOp);

// Print is the identity for its first input; the logged data get no gradient.
Status PrintGradient(const Scope&, const ForwardOp&, const std::vector<Gradient>& grad_outputs,
                     std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0] = grad_outputs[0];
  return OkStatus();
}
TW_REGISTER_SPARSE_GRADIENT("Print", PrintGradient);

// ---- StringFormat and PrintV2: tf.print ----
TW_REGISTER_OP("StringFormat")
    .Input("inputs: T")
    .Output("output: string")
    .Attr("T: list(type) >= 0")
    .Attr("template: string = '%s'")
    .Attr("placeholder: string = '%s'")
    .Attr("summarize: int = 3")
    .Doc(
        "template with each placeholder replaced by the next input, formatted as tf.print "
        "shows tensors (at most summarize entries at each end of every dimension).");

class StringFormatOp : public OpKernel {
 public:
  explicit StringFormatOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string tmpl, placeholder;
    Status s = c->GetAttr("template", &tmpl);
    if (s.ok()) s = c->GetAttr("placeholder", &placeholder);
    if (s.ok()) s = c->GetAttr("summarize", &summarize_);
    if (s.ok() && placeholder.empty()) s = errors::InvalidArgument("placeholder must not be empty");
    c->SetStatus(s);
    if (!s.ok()) return;
    // The literal pieces between placeholders: one more than the placeholders.
    for (size_t at = 0;;) {
      const size_t next = tmpl.find(placeholder, at);
      pieces_.push_back(tmpl.substr(at, next == std::string::npos ? next : next - at));
      if (next == std::string::npos) break;
      at = next + placeholder.size();
    }
  }
  void Compute(OpKernelContext* ctx) override {
    // TensorFlow's message.
    TW_OP_REQUIRES(
        ctx, static_cast<int>(pieces_.size()) - 1 == ctx->num_inputs(),
        errors::InvalidArgument("num placeholders in template and num inputs must ",
                                "match: ", pieces_.size() - 1, " vs. ", ctx->num_inputs()));
    std::string out = pieces_[0];
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&out, SummarizeV2(ctx->input(i), summarize_), pieces_[i + 1]);
    }
    ctx->set_output(0, Tensor::Scalar<std::string>(std::move(out)));
  }

 private:
  std::vector<std::string> pieces_;
  int64_t summarize_ = 3;
};
TW_REGISTER_KERNEL("StringFormat", "CPU", StringFormatOp);
TW_NO_GRADIENT("StringFormat");

TW_REGISTER_OP("PrintV2")
    .Input("input: string")
    .Attr("output_stream: string = 'stderr'")
    .Attr("end: string = '\n'")
    .SetIsStateful()
    .Doc(
        "Writes the string scalar input and end to output_stream: stderr or stdout (the "
        "log(...) streams write to stderr).");

class PrintV2Op : public OpKernel {
 public:
  explicit PrintV2Op(OpKernelConstruction* c) : OpKernel(c) {
    std::string stream;
    Status s = c->GetAttr("output_stream", &stream);
    if (s.ok()) s = c->GetAttr("end", &end_);
    if (s.ok() && stream != "stdout" && stream != "stderr" && stream.rfind("log(", 0) != 0) {
      s = errors::InvalidArgument("node ", c->def().name(), ": Unknown output stream: ", stream);
    }
    stdout_ = stream == "stdout";
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_OP_REQUIRES(ctx, in.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": Input is expected to be scalar, ",
                                           "but got ", in.shape().DebugString()));
    std::ostream& os = stdout_ ? std::cout : std::cerr;
    os << in.flat<std::string>()[0] << end_ << std::flush;
  }

 private:
  std::string end_;
  bool stdout_ = false;
};
TW_REGISTER_KERNEL("PrintV2", "CPU", PrintV2Op);
TW_NO_GRADIENT("PrintV2");

}  // namespace

namespace ops {

Output CheckNumerics(const Scope& scope, Input tensor, const std::string& message) {
  return scope.AddNodeOutput("CheckNumerics", {{tensor}}, {{"message", MakeAttr(message)}});
}

Operation Assert(const Scope& scope, Input condition, const InputList& data, int summarize) {
  return scope.AddNode("Assert", {{condition}, data},
                       {{"summarize", MakeAttr(static_cast<int64_t>(summarize))}});
}

Output Print(const Scope& scope, Input input, const InputList& data, const PrintOptions& options) {
  return scope.AddNodeOutput("Print", {{input}, data},
                             {{"message", MakeAttr(options.message)},
                              {"first_n", MakeAttr(static_cast<int64_t>(options.first_n))},
                              {"summarize", MakeAttr(static_cast<int64_t>(options.summarize))}});
}

}  // namespace ops
}  // namespace tw
