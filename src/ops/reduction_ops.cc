// Reduction ops: Sum, Mean, Max, Min and Prod over a set of axes (All and Any over bools),
// and ArgMax along one dimension. Definitions, CPU kernels, graph-building functions, and
// the gradients of the reductions (with their helper ops SumGrad, MeanGrad, MaxGrad (for
// Max and Min), ProdGrad).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"

namespace tw {
namespace {

using IndexTypes = TypeList<int32_t, int64_t>;

// Reads the int32 or int64 elements of an axis tensor.
std::vector<int64_t> ReadIndices(const Tensor& t) {
  std::vector<int64_t> values;
  Dispatch(IndexTypes{}, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T v : t.flat<T>()) values.push_back(static_cast<int64_t>(v));
  });
  return values;
}

// ---- Reduction plan ----

// The input's dimensions collapsed for iteration: size-1 dimensions are dropped and
// neighbours that are both reduced or both kept are merged, so [2,3,4] over axis {1,2}
// runs as [2,12] with the second reduced.
struct ReductionPlan {
  TensorShape output_shape;
  bool reduces_nothing = false;
  std::vector<int64_t> dims;         // collapsed input dimensions
  std::vector<bool> reduced;         // per collapsed dimension
  std::vector<int64_t> out_strides;  // per collapsed dimension; 0 when reduced
  int64_t count = 1;                 // input elements folded into each output element
};

Status PlanReduction(const OpKernel& kernel, const TensorShape& input, const Tensor& axis,
                     bool keep_dims, ReductionPlan* plan) {
  if (axis.rank() > 1) {
    return errors::InvalidArgument("node ", kernel.name(),
                                   ": reduction axis must be a scalar or a vector, got shape ",
                                   axis.shape().DebugString());
  }
  const int rank = input.rank();
  std::vector<bool> reduce(static_cast<size_t>(rank), false);
  for (int64_t a : ReadIndices(axis)) {
    if (a < -rank || a >= rank) {
      return errors::InvalidArgument("node ", kernel.name(), ": Invalid reduction axis ", a,
                                     " for input of shape ", input.DebugString(),
                                     " (axes must be in [", -rank, ", ", rank, "))");
    }
    const int64_t d = a < 0 ? a + rank : a;
    if (reduce[d]) {
      return errors::InvalidArgument("node ", kernel.name(), ": reduction axis ", a, " (dimension ",
                                     d, ") is given more than once");
    }
    reduce[d] = true;
  }
  plan->reduces_nothing = std::find(reduce.begin(), reduce.end(), true) == reduce.end();

  std::vector<int64_t> out_dims;
  plan->count = 1;
  for (int d = 0; d < rank; ++d) {
    if (!reduce[d]) {
      out_dims.push_back(input.dim(d));
    } else {
      plan->count *= input.dim(d);
      if (keep_dims) out_dims.push_back(1);
    }
  }
  // Cannot fail: the output never has more elements than the input.
  auto shape = TensorShape::Create(out_dims);
  if (!shape.ok()) return shape.status();
  plan->output_shape = *std::move(shape);

  plan->dims.clear();
  plan->reduced.clear();
  for (int d = 0; d < rank; ++d) {
    if (input.dim(d) == 1) continue;
    if (!plan->dims.empty() && plan->reduced.back() == reduce[d]) {
      plan->dims.back() *= input.dim(d);
    } else {
      plan->dims.push_back(input.dim(d));
      plan->reduced.push_back(reduce[d]);
    }
  }
  plan->out_strides.assign(plan->dims.size(), 0);
  int64_t stride = 1;
  for (size_t c = plan->dims.size(); c-- > 0;) {
    if (plan->reduced[c]) continue;
    plan->out_strides[c] = stride;
    stride *= plan->dims[c];
  }
  return OkStatus();
}

// ---- Reducers ----
// Each has Identity(), Combine(acc, x), and ReduceRun(p, n) folding a contiguous run.

template <typename T>
struct SumReducer {
  static T Identity() { return T(0); }
  static T Combine(T acc, T x) { return WrapAdd(acc, x); }
  static T ReduceRun(const T* p, int64_t n) {
    if constexpr (std::is_floating_point_v<T>) {
      // Eigen sums in several vector lanes: faster and more accurate than one chain.
      return Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(p, n).sum();
    } else {
      T acc = 0;
      for (int64_t i = 0; i < n; ++i) acc = WrapAdd(acc, p[i]);
      return acc;
    }
  }
  // acc[j] += p[j] for j in [0, n): the reduction over an outer axis (a bias gradient's
  // sum over the batch), in vector lanes.
  static void CombineRun(T* acc, const T* p, int64_t n) {
    if constexpr (std::is_floating_point_v<T>) {
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(acc, n) +=
          Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(p, n);
    } else {
      for (int64_t j = 0; j < n; ++j) acc[j] = WrapAdd(acc[j], p[j]);
    }
  }
};

// Max (kMax) and Min. The extremum of nothing is the lowest value for Max and the highest
// for Min (-inf and +inf for floating point), as in TensorFlow; NaN propagates.
template <typename T, bool kMax>
struct ExtremumReducer {
  static T Identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    } else {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  static T Combine(T acc, T x) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return x;
    }
    return (kMax ? x > acc : x < acc) ? x : acc;
  }
  static T ReduceRun(const T* p, int64_t n) {
    T acc = Identity();
    for (int64_t i = 0; i < n; ++i) acc = Combine(acc, p[i]);
    return acc;
  }
  static void CombineRun(T* acc, const T* p, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] = Combine(acc[j], p[j]);
  }
};
template <typename T>
using MaxReducer = ExtremumReducer<T, true>;
template <typename T>
using MinReducer = ExtremumReducer<T, false>;

template <typename T>
struct ProdReducer {
  static T Identity() { return T(1); }  // the product of nothing
  static T Combine(T acc, T x) { return WrapMul(acc, x); }
  static T ReduceRun(const T* p, int64_t n) {
    if constexpr (std::is_floating_point_v<T>) {
      return Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(p, n).prod();
    } else {
      T acc = 1;
      for (int64_t i = 0; i < n; ++i) acc = WrapMul(acc, p[i]);
      return acc;
    }
  }
  static void CombineRun(T* acc, const T* p, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] = WrapMul(acc[j], p[j]);
  }
};

// All (kAll) and Any over bools: true and false when empty, as in TensorFlow.
template <bool kAll>
struct LogicalReducer {
  static bool Identity() { return kAll; }
  static bool Combine(bool acc, bool x) { return kAll ? acc && x : acc || x; }
  static bool ReduceRun(const bool* p, int64_t n) {
    auto is_true = [](bool b) { return b; };
    return kAll ? std::all_of(p, p + n, is_true) : std::any_of(p, p + n, is_true);
  }
  static void CombineRun(bool* acc, const bool* p, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] = Combine(acc[j], p[j]);
  }
};

// Calls fn(in_offset, out_offset, run, inner_reduced) for each run of `run` contiguous
// input elements (of `total`), in order: the run folds into output element out_offset when
// inner_reduced, else element-wise into the run at out_offset.
template <typename F>
void ForEachInputRun(const ReductionPlan& plan, int64_t total, F&& fn) {
  if (total == 0) return;
  const int r = static_cast<int>(plan.dims.size());
  if (r == 0) {  // one element
    fn(int64_t{0}, int64_t{0}, int64_t{1}, true);
    return;
  }
  const int64_t run = plan.dims[r - 1];
  const bool inner_reduced = plan.reduced[r - 1];
  std::vector<int64_t> index(static_cast<size_t>(r), 0);
  int64_t o = 0;
  for (int64_t i = 0; i < total; i += run) {
    fn(i, o, run, inner_reduced);
    // Advance the odometer over the outer dimensions, tracking the output offset.
    for (int d = r - 2; d >= 0; --d) {
      o += plan.out_strides[d];
      if (++index[d] < plan.dims[d]) break;
      o -= plan.out_strides[d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

// Folds `in` into `out` (already holding Reducer::Identity()) following the plan.
template <typename T, typename Reducer>
void Reduce(const ReductionPlan& plan, absl::Span<const T> in, absl::Span<T> out) {
  ForEachInputRun(plan, static_cast<int64_t>(in.size()),
                  [&](int64_t i, int64_t o, int64_t run, bool inner_reduced) {
                    const T* p = in.data() + i;
                    if (inner_reduced) {
                      out[o] = Reducer::Combine(out[o], Reducer::ReduceRun(p, run));
                    } else {
                      Reducer::CombineRun(out.data() + o, p, run);
                    }
                  });
}

enum class ReductionKind { kSum, kMean, kMax, kMin, kProd, kAll, kAny };

// The reducer of each kind; Mean sums, then divides.
template <ReductionKind kKind, typename T>
struct ReducerFor {
  using type = SumReducer<T>;
};
template <typename T>
struct ReducerFor<ReductionKind::kMax, T> {
  using type = MaxReducer<T>;
};
template <typename T>
struct ReducerFor<ReductionKind::kMin, T> {
  using type = MinReducer<T>;
};
template <typename T>
struct ReducerFor<ReductionKind::kProd, T> {
  using type = ProdReducer<T>;
};

template <typename T>
struct ReducerFor<ReductionKind::kAll, T> {
  using type = LogicalReducer<true>;
};
template <typename T>
struct ReducerFor<ReductionKind::kAny, T> {
  using type = LogicalReducer<false>;
};

template <ReductionKind kKind>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& axis = ctx->input(1);
    ReductionPlan plan;
    TW_OP_REQUIRES_OK(ctx, PlanReduction(*this, input.shape(), axis, keep_dims_, &plan));
    if (plan.reduces_nothing && plan.output_shape == input.shape()) {
      ctx->set_output(0, input);  // nothing to do; share the buffer like Identity
      return;
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan.output_shape, &out));
    constexpr bool kLogical = kKind == ReductionKind::kAll || kKind == ReductionKind::kAny;
    using Types = std::conditional_t<kLogical, TypeList<bool>, NumericTypes>;
    const bool known = Dispatch(Types{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Reducer = typename ReducerFor<kKind, T>::type;
      auto o = out->flat<T>();
      std::fill(o.begin(), o.end(), Reducer::Identity());
      Reduce<T, Reducer>(plan, input.flat<T>(), o);
      if constexpr (kKind == ReductionKind::kMean) {
        if constexpr (std::is_floating_point_v<T>) {
          // The mean of nothing is 0/0 = NaN, as in TensorFlow.
          const T scale = T(1) / static_cast<T>(plan.count);
          for (T& v : o) v *= scale;
        } else if (plan.count > 0) {  // integers truncate; nothing to average leaves 0
          for (T& v : o) v = static_cast<T>(static_cast<int64_t>(v) / plan.count);
        }
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }

 private:
  bool keep_dims_ = false;
};

#define TW_REDUCTION_OP(NAME, KIND, DOC)        \
  TW_REGISTER_OP(NAME)                          \
      .Input("input: T")                        \
      .Input("axis: Tidx")                      \
      .Output("output: T")                      \
      .Attr("keep_dims: bool = false")          \
      .Attr("T: {float, double, int32, int64}") \
      .Attr("Tidx: {int32, int64} = int32")     \
      .Doc(DOC);                                \
  TW_REGISTER_KERNEL(NAME, "CPU", ReductionOp<ReductionKind::KIND>)

TW_REDUCTION_OP("Sum", kSum,
                "Sum over the axes (a scalar or vector, negative from the end; an empty "
                "vector reduces nothing).");
TW_REDUCTION_OP("Mean", kMean, "Mean over the axes; integers truncate.");
TW_REDUCTION_OP("Max", kMax, "Maximum over the axes; -inf (or the lowest integer) when empty.");
TW_REDUCTION_OP("Min", kMin, "Minimum over the axes; +inf (or the highest integer) when empty.");
TW_REDUCTION_OP("Prod", kProd, "Product over the axes; integers wrap; 1 when empty.");
#undef TW_REDUCTION_OP

#define TW_LOGICAL_REDUCTION_OP(NAME, KIND, DOC) \
  TW_REGISTER_OP(NAME)                           \
      .Input("input: bool")                      \
      .Input("axis: Tidx")                       \
      .Output("output: bool")                    \
      .Attr("keep_dims: bool = false")           \
      .Attr("Tidx: {int32, int64} = int32")      \
      .Doc(DOC);                                 \
  TW_REGISTER_KERNEL(NAME, "CPU", ReductionOp<ReductionKind::KIND>)

TW_LOGICAL_REDUCTION_OP("All", kAll, "Logical and over the axes; true when empty.");
TW_LOGICAL_REDUCTION_OP("Any", kAny, "Logical or over the axes; false when empty.");
#undef TW_LOGICAL_REDUCTION_OP

// ---- ArgMax ----
TW_REGISTER_OP("ArgMax")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: {float, double, int32, int64}")
    .Attr("Tidx: {int32, int64} = int32")
    .Attr("output_type: {int32, int64} = int64")
    .Doc("Index of the largest element along a dimension (the first one on ties).");
TW_REGISTER_OP("ArgMin")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: {float, double, int32, int64}")
    .Attr("Tidx: {int32, int64} = int32")
    .Attr("output_type: {int32, int64} = int64")
    .Doc("Index of the smallest element along a dimension (the first one on ties).");

// kMin: ArgMin (the same walk, keeping the smallest).
template <typename T, typename Index, bool kMin = false>
void ArgMaxImpl(absl::Span<const T> in, int64_t outer, int64_t n, int64_t inner,
                absl::Span<Index> out) {
  // Walk rows of the reduced dimension in memory order, keeping the best of each column.
  std::vector<T> best(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* base = in.data() + o * n * inner;
    Index* idx = out.data() + o * inner;
    std::copy(base, base + inner, best.begin());
    std::fill(idx, idx + inner, Index(0));
    for (int64_t k = 1; k < n; ++k) {
      const T* row = base + k * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if (kMin ? row[i] < best[i] : row[i] > best[i]) {
          best[i] = row[i];
          idx[i] = static_cast<Index>(k);
        }
      }
    }
  }
}

template <bool kMin>
class ArgMaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dimension = ctx->input(1);
    TW_OP_REQUIRES(ctx, dimension.rank() == 0,
                   errors::InvalidArgument("node ", name(), ": dimension must be a scalar, got ",
                                           "shape ", dimension.shape().DebugString()));
    const int rank = input.rank();
    const int64_t a = ReadIndices(dimension)[0];
    TW_OP_REQUIRES(ctx, a >= -rank && a < rank,
                   errors::InvalidArgument("node ", name(), ": Invalid dimension ", a,
                                           " for input of shape ", input.shape().DebugString(),
                                           " (must be in [", -rank, ", ", rank, "))"));
    const int d = static_cast<int>(a < 0 ? a + rank : a);
    const int64_t n = input.dim(d);
    TW_OP_REQUIRES(
        ctx, n > 0,
        errors::InvalidArgument("node ", name(), ": cannot take ", type_string(), " along empty ",
                                "dimension ", d, " of shape ", input.shape().DebugString()));
    std::vector<int64_t> out_dims;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < rank; ++i) {
      if (i == d) continue;
      out_dims.push_back(input.dim(i));
      (i < d ? outer : inner) *= input.dim(i);
    }
    auto shape = TensorShape::Create(out_dims);
    TW_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const bool known = Dispatch(NumericTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Dispatch(IndexTypes{}, output_type(0), [&](auto index_tag) {
        using Index = typename decltype(index_tag)::type;
        ArgMaxImpl<T, Index, kMin>(input.flat<T>(), outer, n, inner, out->flat<Index>());
      });
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("ArgMax", "CPU", ArgMaxOp<false>);
TW_REGISTER_KERNEL("ArgMin", "CPU", ArgMaxOp<true>);

// ---- Gradients of the reductions ----

// Reads a shape vector input; InvalidArgument for another rank or a negative dimension.
Status ReadShape(const OpKernel& kernel, const Tensor& t, TensorShape* shape) {
  if (t.rank() != 1) {
    return errors::InvalidArgument("node ", kernel.name(), ": input_shape must be a vector, got ",
                                   "shape ", t.shape().DebugString());
  }
  const std::vector<int64_t> dims = ReadIndices(t);
  for (int64_t d : dims) {
    if (d < 0) {
      return errors::InvalidArgument("node ", kernel.name(), ": input_shape has negative ",
                                     "dimension ", d);
    }
  }
  auto created = TensorShape::Create(dims);
  if (!created.ok()) return errors::Annotate(created.status(), "node " + kernel.name() + ": ");
  *shape = *std::move(created);
  return OkStatus();
}

// Plans the reduction of `input_shape` over `axis` and checks that `grad` (any shape) has
// one element per output element.
Status PlanGradient(const OpKernel& kernel, const TensorShape& input_shape, const Tensor& axis,
                    const std::vector<const Tensor*>& reduced, ReductionPlan* plan) {
  TW_RETURN_IF_ERROR(PlanReduction(kernel, input_shape, axis, /*keep_dims=*/true, plan));
  for (const Tensor* t : reduced) {
    if (t->num_elements() != plan->output_shape.num_elements()) {
      return errors::InvalidArgument(
          "node ", kernel.name(), ": a tensor of shape ", t->shape().DebugString(),
          " is not the reduction of shape ", input_shape.DebugString(), " over axes ",
          axis.DebugString(), " (", plan->output_shape.DebugString(), " with kept dimensions)");
    }
  }
  return OkStatus();
}

template <bool kMean>
class SumGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    TensorShape shape;
    TW_OP_REQUIRES_OK(ctx, ReadShape(*this, ctx->input(1), &shape));
    ReductionPlan plan;
    TW_OP_REQUIRES_OK(ctx, PlanGradient(*this, shape, ctx->input(2), {&grad}, &plan));
    if (!kMean && grad.num_elements() == shape.num_elements()) {
      auto view = grad.Reshaped(shape);  // reduced nothing (or only size-1 dimensions)
      TW_OP_REQUIRES_OK(ctx, view.status());
      ctx->set_output(0, *std::move(view));
      return;
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T scale = kMean ? T(1) / static_cast<T>(plan.count) : T(1);
      const T* g = grad.flat<T>().data();
      T* dst = out->flat<T>().data();
      ForEachInputRun(plan, shape.num_elements(),
                      [&](int64_t i, int64_t o, int64_t run, bool inner_reduced) {
                        MutArray<T> p(dst + i, run);
                        if (inner_reduced) {
                          p.setConstant(g[o] * scale);
                        } else {
                          p = ConstArray<T>(g + o, run) * scale;
                        }
                      });
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};

#define TW_SUM_GRAD_OP(NAME, MEAN, DOC)       \
  TW_REGISTER_OP(NAME)                        \
      .Input("grad: T")                       \
      .Input("input_shape: Tshape")           \
      .Input("axis: Tidx")                    \
      .Output("output: T")                    \
      .Attr("T: {float, double}")             \
      .Attr("Tshape: {int32, int64} = int32") \
      .Attr("Tidx: {int32, int64} = int32")   \
      .Doc(DOC);                              \
  TW_REGISTER_KERNEL(NAME, "CPU", SumGradOp<MEAN>)

TW_SUM_GRAD_OP("SumGrad", false,
               "The gradient of Sum(input, axis) with respect to an input of shape input_shape: "
               "grad (with or without the reduced dimensions) repeated along the axes.");
TW_SUM_GRAD_OP("MeanGrad", true,
               "The gradient of Mean(input, axis): SumGrad divided by the reduced count.");
#undef TW_SUM_GRAD_OP

TW_REGISTER_OP("MaxGrad")
    .Input("input: T")
    .Input("output: T")
    .Input("grad: T")
    .Input("axis: Tidx")
    .Output("backprop: T")
    .Attr("T: {float, double}")
    .Attr("Tidx: {int32, int64} = int32")
    .Doc(
        "The gradient of output = Max(input, axis) or Min(input, axis): each element equal "
        "to its extremum gets that extremum's gradient, divided by the number of such "
        "elements; the others 0.");

class MaxGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& output = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    ReductionPlan plan;
    TW_OP_REQUIRES_OK(ctx,
                      PlanGradient(*this, input.shape(), ctx->input(3), {&output, &grad}, &plan));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = input.flat<T>().data();
      const T* y = output.flat<T>().data();
      const T* g = grad.flat<T>().data();
      T* dst = out->flat<T>().data();
      const int64_t total = input.num_elements();
      // Pass 1 counts the elements equal to each maximum; pass 2 shares its gradient.
      std::vector<T> ties(static_cast<size_t>(output.num_elements()), T(0));
      ForEachInputRun(plan, total, [&](int64_t i, int64_t o, int64_t run, bool inner_reduced) {
        for (int64_t j = 0; j < run; ++j) {
          const int64_t k = inner_reduced ? o : o + j;
          if (x[i + j] == y[k]) ties[k] += T(1);
        }
      });
      ForEachInputRun(plan, total, [&](int64_t i, int64_t o, int64_t run, bool inner_reduced) {
        for (int64_t j = 0; j < run; ++j) {
          const int64_t k = inner_reduced ? o : o + j;
          dst[i + j] = x[i + j] == y[k] ? g[k] / ties[k] : T(0);
        }
      });
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("MaxGrad", "CPU", MaxGradOp);

TW_REGISTER_OP("ProdGrad")
    .Input("input: T")
    .Input("grad: T")
    .Input("axis: Tidx")
    .Output("backprop: T")
    .Attr("T: {float, double}")
    .Attr("Tidx: {int32, int64} = int32")
    .Doc(
        "The gradient of Prod(input, axis): each element gets its product's gradient times "
        "the product of the other elements of that product. Computed without division, so "
        "zeros in the input are exact.");

// TensorFlow multiplies exclusive cumulative products from the left and from the right
// (after transposing the reduced axes together); this does the same in place: the
// elements of one product are visited in input order, forward then backward, keeping one
// running product per output element.
class ProdGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    ReductionPlan plan;
    TW_OP_REQUIRES_OK(ctx, PlanGradient(*this, input.shape(), ctx->input(2), {&grad}, &plan));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    const bool known = Dispatch(FloatTypes{}, input_type(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = input.flat<T>().data();
      const T* g = grad.flat<T>().data();
      T* dst = out->flat<T>().data();
      const int64_t total = input.num_elements();
      std::vector<int64_t> product_of(static_cast<size_t>(total));  // output index per element
      std::vector<T> running(static_cast<size_t>(grad.num_elements()), T(1));
      // Forward: dst[i] = the product of the elements of i's product before i.
      ForEachInputRun(plan, total, [&](int64_t i, int64_t o, int64_t run, bool inner_reduced) {
        for (int64_t j = 0; j < run; ++j) {
          const int64_t k = inner_reduced ? o : o + j;
          product_of[i + j] = k;
          dst[i + j] = running[k];
          running[k] *= x[i + j];
        }
      });
      // Backward: times the product of those after i, times the gradient.
      std::fill(running.begin(), running.end(), T(1));
      for (int64_t i = total - 1; i >= 0; --i) {
        const int64_t k = product_of[i];
        dst[i] *= running[k];
        running[k] *= x[i];
        dst[i] *= g[k];
      }
    });
    if (!known) ctx->SetStatus(UnsupportedType(*this, input_type(0)));
  }
};
TW_REGISTER_KERNEL("ProdGrad", "CPU", ProdGradOp);

// The reductions' gradient functions: one node each besides the input's Shape.
Status SumGradient(const Scope& scope, const ForwardOp& op,
                   const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense =
      ops::SumGrad(scope, grad_outputs[0].dense, ops::Shape(scope, op.input(0)), op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Sum", SumGradient);

Status MeanGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense =
      ops::MeanGrad(scope, grad_outputs[0].dense, ops::Shape(scope, op.input(0)), op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Mean", MeanGradient);

Status MaxGradient(const Scope& scope, const ForwardOp& op,
                   const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense =
      ops::MaxGrad(scope, op.input(0), op.output(0), grad_outputs[0].dense, op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Max", MaxGradient);
// MaxGrad compares each element with the reduced output, so it serves Min as well (as
// TensorFlow's _MinOrMaxGrad does).
TW_REGISTER_GRADIENT("Min", MaxGradient);

Status ProdGradient(const Scope& scope, const ForwardOp& op,
                    const std::vector<Gradient>& grad_outputs, std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0].dense = ops::ProdGrad(scope, op.input(0), grad_outputs[0].dense, op.input(1));
  return OkStatus();
}
TW_REGISTER_GRADIENT("Prod", ProdGradient);

TW_NO_GRADIENT("All");
TW_NO_GRADIENT("Any");
TW_NO_GRADIENT("ArgMax");
TW_NO_GRADIENT("ArgMin");

}  // namespace

namespace ops {

Output Sum(const Scope& scope, Input input, Input axis, const ReduceOptions& options) {
  return scope.AddNodeOutput("Sum", {{input}, {axis}},
                             {{"keep_dims", MakeAttr(options.keep_dims)}});
}
Output Mean(const Scope& scope, Input input, Input axis, const ReduceOptions& options) {
  return scope.AddNodeOutput("Mean", {{input}, {axis}},
                             {{"keep_dims", MakeAttr(options.keep_dims)}});
}
Output Max(const Scope& scope, Input input, Input axis, const ReduceOptions& options) {
  return scope.AddNodeOutput("Max", {{input}, {axis}},
                             {{"keep_dims", MakeAttr(options.keep_dims)}});
}
Output Min(const Scope& scope, Input input, Input axis, const ReduceOptions& options) {
  return scope.AddNodeOutput("Min", {{input}, {axis}},
                             {{"keep_dims", MakeAttr(options.keep_dims)}});
}
Output Prod(const Scope& scope, Input input, Input axis, const ReduceOptions& options) {
  return scope.AddNodeOutput("Prod", {{input}, {axis}},
                             {{"keep_dims", MakeAttr(options.keep_dims)}});
}
Output All(const Scope& scope, Input input, Input axis, const ReduceOptions& options) {
  return scope.AddNodeOutput("All", {{input}, {axis}},
                             {{"keep_dims", MakeAttr(options.keep_dims)}});
}
Output Any(const Scope& scope, Input input, Input axis, const ReduceOptions& options) {
  return scope.AddNodeOutput("Any", {{input}, {axis}},
                             {{"keep_dims", MakeAttr(options.keep_dims)}});
}
Output SumGrad(const Scope& scope, Input grad, Input input_shape, Input axis) {
  return scope.AddNodeOutput("SumGrad", {{grad}, {input_shape}, {axis}});
}
Output MeanGrad(const Scope& scope, Input grad, Input input_shape, Input axis) {
  return scope.AddNodeOutput("MeanGrad", {{grad}, {input_shape}, {axis}});
}
Output MaxGrad(const Scope& scope, Input input, Input output, Input grad, Input axis) {
  return scope.AddNodeOutput("MaxGrad", {{input}, {output}, {grad}, {axis}});
}
Output ProdGrad(const Scope& scope, Input input, Input grad, Input axis) {
  return scope.AddNodeOutput("ProdGrad", {{input}, {grad}, {axis}});
}
Output ArgMax(const Scope& scope, Input input, Input dimension, const ArgMaxOptions& options) {
  return scope.AddNodeOutput("ArgMax", {{input}, {dimension}},
                             {{"output_type", MakeAttr(options.output_type)}});
}
Output ArgMin(const Scope& scope, Input input, Input dimension, const ArgMaxOptions& options) {
  return scope.AddNodeOutput("ArgMin", {{input}, {dimension}},
                             {{"output_type", MakeAttr(options.output_type)}});
}

}  // namespace ops
}  // namespace tw
