// Summary ops: ScalarSummary, HistogramSummary and MergeSummary (definitions, CPU kernels,
// graph-building functions), after TensorFlow 1.x's core/kernels/summary_op.cc: the same
// names, attributes, outputs and error messages, so that programs and TensorBoard see what
// TensorFlow gives them. The event files they end up in: tensorweave/summary.h.
//
// None has a gradient: summaries observe training, they are not part of the model.
#include "tensorweave/ops/summary_ops.h"

#include <cmath>
#include <string>
#include <unordered_set>

#include "src/framework/op_kernel.h"
#include "src/ops/type_dispatch.h"
#include "src/summary/histogram.h"
#include "tensorweave/protobuf/summary.pb.h"

namespace tw {
namespace {

// TensorFlow's realnumbertype, as far as tensorweave has the types.
using SummaryValueTypes = TypeList<float, double, int32_t, int64_t, uint8_t>;

// Every element of `t` (a SummaryValueTypes tensor) as a double.
std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.num_elements()));
  Dispatch(SummaryValueTypes{}, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T v : t.flat<T>()) out.push_back(static_cast<double>(v));
  });
  return out;
}

void OutputSummary(OpKernelContext* ctx, const proto::Summary& summary) {
  ctx->set_output(0, Tensor::Scalar<std::string>(summary.SerializeAsString()));
}

// ---- ScalarSummary ----
TW_REGISTER_OP("ScalarSummary")
    .Input("tags: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr("T: {float, double, int32, int64, uint8}")
    .Doc("A Summary protocol buffer with scalar values, one per tag.");

class ScalarSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tags = ctx->input(0);
    const Tensor& values = ctx->input(1);
    // TensorFlow's message, with the single tag when there is one to name.
    TW_OP_REQUIRES(ctx, tags.shape() == values.shape(),
                   errors::InvalidArgument(
                       "tags and values not the same shape: ", tags.shape().DebugString(),
                       " != ", values.shape().DebugString(),
                       tags.rank() == 0 ? " (tag '" + tags.flat<std::string>()[0] + "')" : ""));
    const std::vector<double> numbers = AsDoubles(values);
    proto::Summary summary;
    for (int64_t i = 0; i < tags.num_elements(); ++i) {
      proto::Summary::Value* v = summary.add_value();
      v->set_tag(tags.flat<std::string>()[i]);
      v->set_simple_value(static_cast<float>(numbers[static_cast<size_t>(i)]));
    }
    OutputSummary(ctx, summary);
  }
};
TW_REGISTER_KERNEL("ScalarSummary", "CPU", ScalarSummaryOp);

// ---- HistogramSummary ----
TW_REGISTER_OP("HistogramSummary")
    .Input("tag: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr("T: {float, double, int32, int64, uint8} = float")
    .Doc("A Summary protocol buffer with a histogram of values.");

class HistogramSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    TW_OP_REQUIRES(ctx, tag.rank() == 0, errors::InvalidArgument("tags must be scalar"));
    summary::Histogram histogram;
    for (double v : AsDoubles(ctx->input(1))) {
      TW_OP_REQUIRES(ctx, !std::isnan(v),
                     errors::InvalidArgument("Nan in summary histogram for: ", name()));
      TW_OP_REQUIRES(ctx, !std::isinf(v),
                     errors::InvalidArgument("Infinity in summary histogram for: ", name()));
      histogram.Add(v);
    }
    proto::Summary summary;
    proto::Summary::Value* v = summary.add_value();
    v->set_tag(tag.flat<std::string>()[0]);
    histogram.EncodeToProto(v->mutable_histo());
    OutputSummary(ctx, summary);
  }
};
TW_REGISTER_KERNEL("HistogramSummary", "CPU", HistogramSummaryOp);

// ---- MergeSummary ----
TW_REGISTER_OP("MergeSummary")
    .Input("inputs: N * string")
    .Output("summary: string")
    .Attr("N: int >= 1")
    .Doc("The union of the values of the input Summary protocol buffers.");

class MergeSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    proto::Summary merged;
    std::unordered_set<std::string> tags;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      for (const std::string& bytes : ctx->input(i).flat<std::string>()) {
        proto::Summary in;
        TW_OP_REQUIRES(ctx, in.ParseFromString(bytes),
                       errors::InvalidArgument("Could not parse one of the summary inputs"));
        for (const proto::Summary::Value& value : in.value()) {
          TW_OP_REQUIRES(
              ctx, value.tag().empty() || tags.insert(value.tag()).second,
              errors::InvalidArgument("Duplicate tag ", value.tag(), " found in summary inputs"));
          *merged.add_value() = value;
        }
      }
    }
    OutputSummary(ctx, merged);
  }
};
TW_REGISTER_KERNEL("MergeSummary", "CPU", MergeSummaryOp);

}  // namespace

namespace ops {

Output ScalarSummary(const Scope& scope, Input tags, Input values) {
  return scope.AddNodeOutput("ScalarSummary", {{tags}, {values}});
}

Output HistogramSummary(const Scope& scope, Input tag, Input values) {
  return scope.AddNodeOutput("HistogramSummary", {{tag}, {values}});
}

Output MergeSummary(const Scope& scope, const std::vector<Output>& inputs) {
  return scope.AddNodeOutput("MergeSummary", {InputList(inputs.begin(), inputs.end())});
}

}  // namespace ops
}  // namespace tw
