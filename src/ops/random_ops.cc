// Random ops: RandomUniform, RandomStandardNormal, TruncatedNormal, RandomShuffle.
// Definitions, CPU kernels and graph-building functions (declared in
// tensorweave/ops/random_ops.h).
#include "tensorweave/ops/random_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/element_move.h"
#include "src/ops/random_seed.h"

namespace tw {
namespace {

using internal::SeedFromAttrs;

enum class Distribution { kUniform, kNormal, kTruncatedNormal };

// One generator per node, advanced by every run; Compute may run concurrently for
// overlapping steps, hence the mutex.
template <Distribution kDistribution>
class RandomOp : public OpKernel {
 public:
  explicit RandomOp(OpKernelConstruction* c) : OpKernel(c) { SeedFromAttrs(c, &engine_); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    TW_OP_REQUIRES(ctx, shape_t.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": shape must be a vector, got shape ",
                                           shape_t.shape().DebugString()));
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < shape_t.num_elements(); ++i) {
      const int64_t d =
          shape_t.dtype() == DT_INT32 ? shape_t.flat<int32_t>()[i] : shape_t.flat<int64_t>()[i];
      TW_OP_REQUIRES(ctx, d >= 0,
                     errors::InvalidArgument("node ", name(), ": shape has negative dimension ", d,
                                             " at ", i));
      dims.push_back(d);
    }
    auto shape = TensorShape::Create(dims);
    TW_OP_REQUIRES_OK(ctx, errors::Annotate(shape.status(), "node " + name() + ": "));
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->dtype() == DT_FLOAT) {
      Fill<float>(out);
    } else {
      Fill<double>(out);
    }
  }

 private:
  template <typename T>
  void Fill(Tensor* out) {
    auto values = out->flat<T>();
    absl::MutexLock lock(&mu_);
    if constexpr (kDistribution == Distribution::kUniform) {
      std::uniform_real_distribution<T> dist(0, 1);
      for (auto& v : values) v = dist(engine_);
    } else {
      std::normal_distribution<T> dist(0, 1);
      for (auto& v : values) {
        do {
          v = dist(engine_);
        } while (kDistribution == Distribution::kTruncatedNormal && std::abs(v) > 2);
      }
    }
  }

  absl::Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
};

#define TW_RANDOM_OP(NAME, DOC)       \
  TW_REGISTER_OP(NAME)                \
      .Input("shape: T")              \
      .Output("output: dtype")        \
      .Attr("dtype: {float, double}") \
      .Attr("T: {int32, int64}")      \
      .Attr("seed: int = 0")          \
      .Attr("seed2: int = 0")         \
      .SetIsStateful()                \
      .Doc(DOC)

TW_RANDOM_OP("RandomUniform", "Uniform random values in [0, 1).");
TW_REGISTER_KERNEL("RandomUniform", "CPU", RandomOp<Distribution::kUniform>);
TW_RANDOM_OP("RandomStandardNormal", "Normal random values, mean 0, standard deviation 1.");
TW_REGISTER_KERNEL("RandomStandardNormal", "CPU", RandomOp<Distribution::kNormal>);
TW_RANDOM_OP("TruncatedNormal",
             "Normal random values, mean 0, standard deviation 1, redrawn beyond 2 deviations.");
TW_REGISTER_KERNEL("TruncatedNormal", "CPU", RandomOp<Distribution::kTruncatedNormal>);

TW_REGISTER_OP("RandomShuffle")
    .Input("value: T")
    .Output("output: T")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("value with its first dimension in a random order (each row moves whole).");

// Draws the permutation under the node's lock (one generator per node, as above), then
// moves rows, which needs no lock.
class RandomShuffleOp : public OpKernel {
 public:
  explicit RandomShuffleOp(OpKernelConstruction* c) : OpKernel(c) { SeedFromAttrs(c, &engine_); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const int64_t rows = value.rank() == 0 ? 1 : value.dim(0);
    if (rows <= 1) {  // a scalar or one row: TF passes the input through
      ctx->set_output(0, value);
      return;
    }
    std::vector<int64_t> order(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) order[static_cast<size_t>(i)] = i;
    {
      absl::MutexLock lock(&mu_);
      std::shuffle(order.begin(), order.end(), engine_);
    }
    Tensor* out = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, value.shape(), &out));
    const int64_t row_size = value.num_elements() / rows;
    internal::DispatchMove(value.dtype(), [&]<typename M>() {
      const M* in = internal::Elements<M>(value);
      M* dst = internal::Elements<M>(out);
      for (int64_t i = 0; i < rows; ++i) {
        std::copy_n(in + order[static_cast<size_t>(i)] * row_size, row_size, dst + i * row_size);
      }
    });
  }

 private:
  absl::Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
};
TW_REGISTER_KERNEL("RandomShuffle", "CPU", RandomShuffleOp);
TW_NO_GRADIENT("RandomShuffle");  // as TF: a random permutation has no gradient

AttrMap RandomAttrs(const ops::RandomOptions& o) {
  return {{"dtype", MakeAttr(o.dtype)}, {"seed", MakeAttr(o.seed)}, {"seed2", MakeAttr(o.seed2)}};
}

}  // namespace

namespace ops {

Output RandomUniform(const Scope& scope, Input shape, const RandomOptions& options) {
  return scope.AddNodeOutput("RandomUniform", {{shape}}, RandomAttrs(options));
}
Output RandomNormal(const Scope& scope, Input shape, const RandomOptions& options) {
  return scope.AddNodeOutput("RandomStandardNormal", {{shape}}, RandomAttrs(options));
}
Output TruncatedNormal(const Scope& scope, Input shape, const RandomOptions& options) {
  return scope.AddNodeOutput("TruncatedNormal", {{shape}}, RandomAttrs(options));
}
Output RandomShuffle(const Scope& scope, Input value, int64_t seed, int64_t seed2) {
  return scope.AddNodeOutput("RandomShuffle", {{value}},
                             {{"seed", MakeAttr(seed)}, {"seed2", MakeAttr(seed2)}});
}

}  // namespace ops
}  // namespace tw
