// Array ops whose output depends on comparing the values themselves, not only on shapes and
// indices: Unique. Coming here: Where and TopKV2. Definitions, CPU kernels and
// graph-building functions (declared in tensorweave/ops/basic_ops.h).
//
// The kernels are written once as templates over the C++ element type and dispatched on the
// dtype at run time; most take every type, strings and resource handles included.
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/types/span.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

// ---- Unique ----
TW_REGISTER_OP("Unique")
    .Input("x: T")
    .Output("y: T")
    .Output("idx: out_idx")
    .Attr("T: {float, double, int32, int64, uint8, bool, string}")
    .Attr("out_idx: {int32, int64} = int32")
    .Doc(
        "The distinct elements of the vector x in order of first occurrence (y), and for each "
        "element of x its position in y (idx): x[i] == y[idx[i]]. NaNs are all distinct.");

// Fills idx and returns the position in x of each distinct value's first occurrence. The
// table holds positions, not values, so strings are never copied.
template <typename T, typename Index>
std::vector<int64_t> FirstOccurrences(absl::Span<const T> x, absl::Span<Index> idx) {
  auto hash = [x](int64_t i) { return std::hash<T>{}(x[i]); };
  auto equal = [x](int64_t a, int64_t b) { return x[a] == x[b]; };
  std::unordered_map<int64_t, Index, decltype(hash), decltype(equal)> seen(x.size(), hash, equal);
  std::vector<int64_t> firsts;
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    auto [it, inserted] = seen.try_emplace(i, static_cast<Index>(firsts.size()));
    if (inserted) firsts.push_back(i);
    idx[i] = it->second;
  }
  return firsts;
}

class UniqueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    // TensorFlow's messages.
    TW_OP_REQUIRES(ctx, x.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": unique expects a 1D vector."));
    TW_OP_REQUIRES(
        ctx, output_type(1) == DT_INT64 || x.num_elements() <= std::numeric_limits<int32_t>::max(),
        errors::InvalidArgument("node ", name(),
                                ": unique does not support input tensors larger than ",
                                std::numeric_limits<int32_t>::max(), " elements"));
    Tensor* idx = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, x.shape(), &idx));
    using Types = TypeList<float, double, int32_t, int64_t, uint8_t, bool, std::string>;
    const bool known = Dispatch(Types{}, x.dtype(), [&](auto value_tag) {
      using T = typename decltype(value_tag)::type;
      std::vector<int64_t> firsts;
      Dispatch(TypeList<int32_t, int64_t>{}, output_type(1), [&](auto tag) {
        using Index = typename decltype(tag)::type;
        firsts = FirstOccurrences<T, Index>(x.flat<T>(), idx->flat<Index>());
      });
      Tensor* y = nullptr;
      TW_OP_REQUIRES_OK(
          ctx, ctx->allocate_output(0, TensorShape({static_cast<int64_t>(firsts.size())}), &y));
      auto src = x.flat<T>();
      auto dst = y->flat<T>();
      for (size_t j = 0; j < firsts.size(); ++j) dst[j] = src[firsts[j]];
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, x.dtype()));
  }
};
TW_REGISTER_KERNEL("Unique", "CPU", UniqueOp);

// ---- Gradients ----

// As in TensorFlow, which registers no gradient for it: idx is integer, and y is usually
// taken of integer ids (an optimizer's deduplication of sparse rows).
TW_NO_GRADIENT("Unique");

}  // namespace

namespace ops {

UniqueOutputs Unique(const Scope& scope, Input x, const UniqueOptions& options) {
  const Operation op = scope.AddNode("Unique", {{x}}, {{"out_idx", MakeAttr(options.out_idx)}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

}  // namespace ops
}  // namespace tw
