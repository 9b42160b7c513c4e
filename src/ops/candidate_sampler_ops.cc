// Candidate sampling, what nce_loss and sampled_softmax_loss train large output layers
// with: LogUniformCandidateSampler and UniformCandidateSampler draw classes to contrast the
// true ones against, with the expected count of each class in the draw (the logits'
// correction); ComputeAccidentalHits finds sampled classes that are also a row's true
// class. Definitions, CPU kernels and graph-building functions (tensorweave/ops/nn_ops.h),
// after TensorFlow 1.x's ops of the same names.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/random_seed.h"
#include "tensorweave/ops/nn_ops.h"

namespace tw {
namespace {

// Zipf-like: P(c) = (log(c + 2) - log(c + 1)) / log(range + 1), frequent classes first
// (vocabularies sorted by frequency).
class LogUniformDistribution {
 public:
  explicit LogUniformDistribution(int64_t range)
      : range_(range), log_range_(std::log1p(static_cast<double>(range))) {}
  int64_t Sample(double u) const {
    return (static_cast<int64_t>(std::exp(u * log_range_)) - 1) % range_;
  }
  // As TF, the formula for any class, in range or not.
  double Probability(int64_t c) const {
    return (std::log(c + 2.0) - std::log(c + 1.0)) / log_range_;
  }

 private:
  int64_t range_;
  double log_range_;
};

class UniformDistribution {
 public:
  explicit UniformDistribution(int64_t range) : range_(range) {}
  int64_t Sample(double u) const {
    return std::min(range_ - 1, static_cast<int64_t>(u * static_cast<double>(range_)));
  }
  double Probability(int64_t) const { return 1.0 / static_cast<double>(range_); }

 private:
  int64_t range_;
};

// The expected count of a class of probability p in a draw of `samples` classes that took
// `tries` draws (more than `samples` when duplicates were rejected): TF's rule.
float ExpectedCount(double p, int64_t samples, int64_t tries) {
  if (tries == samples) return static_cast<float>(p * static_cast<double>(samples));
  return static_cast<float>(-std::expm1(static_cast<double>(tries) * std::log1p(-p)));
}

#define TW_CANDIDATE_SAMPLER_OP(NAME, DOC)     \
  TW_REGISTER_OP(NAME)                         \
      .Input("true_classes: int64")            \
      .Output("sampled_candidates: int64")     \
      .Output("true_expected_count: float")    \
      .Output("sampled_expected_count: float") \
      .Attr("num_true: int >= 1")              \
      .Attr("num_sampled: int >= 1")           \
      .Attr("unique: bool")                    \
      .Attr("range_max: int >= 1")             \
      .Attr("seed: int = 0")                   \
      .Attr("seed2: int = 0")                  \
      .SetIsStateful()                         \
      .Doc(DOC)

TW_CANDIDATE_SAMPLER_OP("LogUniformCandidateSampler",
                        "num_sampled classes in [0, range_max) drawn log-uniformly (unique: "
                        "without repeats), and the expected counts of the true and sampled "
                        "classes in such a draw.");
TW_CANDIDATE_SAMPLER_OP("UniformCandidateSampler",
                        "num_sampled classes in [0, range_max) drawn uniformly (unique: "
                        "without repeats), and the expected counts of the true and sampled "
                        "classes in such a draw.");

// One generator per node, as the other random kernels.
template <typename Distribution>
class CandidateSamplerOp : public OpKernel {
 public:
  explicit CandidateSamplerOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("num_true", &num_true_));
    c->SetStatus(c->GetAttr("num_sampled", &num_sampled_));
    c->SetStatus(c->GetAttr("unique", &unique_));
    c->SetStatus(c->GetAttr("range_max", &range_max_));
    internal::SeedFromAttrs(c, &engine_);
    if (unique_ && num_sampled_ > range_max_) {
      c->SetStatus(errors::InvalidArgument("node ", name(),
                                           ": Sampler's range is too small: ", num_sampled_,
                                           " unique samples of ", range_max_, " classes"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& true_classes = ctx->input(0);
    TW_OP_REQUIRES(ctx, true_classes.rank() == 2,
                   errors::InvalidArgument("node ", name(), ": true_classes must be a matrix, ",
                                           "got shape ", true_classes.shape().DebugString()));
    TW_OP_REQUIRES(
        ctx, true_classes.dim(1) == num_true_,
        errors::InvalidArgument("node ", name(), ": true_classes must have num_true ",
                                "columns, expected: ", true_classes.dim(1), " was: ", num_true_));
    const Distribution distribution(range_max_);
    Tensor* sampled = nullptr;
    Tensor* true_expected = nullptr;
    Tensor* sampled_expected = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({num_sampled_}), &sampled));
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, true_classes.shape(), &true_expected));
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({num_sampled_}), &sampled_expected));
    auto out = sampled->flat<int64_t>();
    int64_t tries = 0;
    {
      absl::MutexLock lock(&mu_);
      std::uniform_real_distribution<double> uniform(0.0, 1.0);
      if (!unique_) {
        for (int64_t i = 0; i < num_sampled_; ++i) out[i] = distribution.Sample(uniform(engine_));
        tries = num_sampled_;
      } else {
        absl::flat_hash_set<int64_t> seen;
        for (int64_t i = 0; i < num_sampled_;) {
          const int64_t c = distribution.Sample(uniform(engine_));
          ++tries;
          if (seen.insert(c).second) out[i++] = c;
        }
      }
    }
    for (int64_t i = 0; i < num_sampled_; ++i) {
      sampled_expected->flat<float>()[i] =
          ExpectedCount(distribution.Probability(out[i]), num_sampled_, tries);
    }
    auto classes = true_classes.flat<int64_t>();
    for (int64_t i = 0; i < true_classes.num_elements(); ++i) {
      true_expected->flat<float>()[i] =
          ExpectedCount(distribution.Probability(classes[i]), num_sampled_, tries);
    }
  }

 private:
  int64_t num_true_ = 1, num_sampled_ = 1, range_max_ = 1;
  bool unique_ = false;
  absl::Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
};
TW_REGISTER_KERNEL("LogUniformCandidateSampler", "CPU", CandidateSamplerOp<LogUniformDistribution>);
TW_REGISTER_KERNEL("UniformCandidateSampler", "CPU", CandidateSamplerOp<UniformDistribution>);
TW_NO_GRADIENT("LogUniformCandidateSampler");
TW_NO_GRADIENT("UniformCandidateSampler");

TW_REGISTER_OP("ComputeAccidentalHits")
    .Input("true_classes: int64")
    .Input("sampled_candidates: int64")
    .Output("indices: int32")
    .Output("ids: int64")
    .Output("weights: float")
    .Attr("num_true: int")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Doc(
        "Each sampled candidate that is also one of its row's true classes: the row (indices), "
        "its position in sampled_candidates (ids) and a weight of -FLT_MAX to add to that "
        "sampled logit, so that a true class is never also a negative.");

class ComputeAccidentalHitsOp : public OpKernel {
 public:
  explicit ComputeAccidentalHitsOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("num_true", &num_true_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& true_classes = ctx->input(0);
    const Tensor& sampled = ctx->input(1);
    TW_OP_REQUIRES(ctx, true_classes.rank() == 2 && true_classes.dim(1) == num_true_,
                   errors::InvalidArgument("node ", name(), ": true_classes must be a matrix ",
                                           "of num_true (", num_true_, ") columns, got shape ",
                                           true_classes.shape().DebugString()));
    TW_OP_REQUIRES(ctx, sampled.rank() == 1,
                   errors::InvalidArgument("node ", name(), ": sampled_candidates must be a ",
                                           "vector, got shape ", sampled.shape().DebugString()));
    absl::flat_hash_map<int64_t, std::vector<int64_t>> positions;  // class -> where sampled
    auto candidates = sampled.flat<int64_t>();
    for (int64_t j = 0; j < sampled.num_elements(); ++j) positions[candidates[j]].push_back(j);
    std::vector<int32_t> rows;
    std::vector<int64_t> ids;
    auto classes = true_classes.flat<int64_t>();
    for (int64_t r = 0; r < true_classes.dim(0); ++r) {
      for (int64_t t = 0; t < num_true_; ++t) {
        auto it = positions.find(classes[r * num_true_ + t]);
        if (it == positions.end()) continue;
        for (int64_t j : it->second) {
          rows.push_back(static_cast<int32_t>(r));
          ids.push_back(j);
        }
      }
    }
    const int64_t hits = static_cast<int64_t>(rows.size());
    Tensor* indices = nullptr;
    Tensor* out_ids = nullptr;
    Tensor* weights = nullptr;
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({hits}), &indices));
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({hits}), &out_ids));
    TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({hits}), &weights));
    for (int64_t i = 0; i < hits; ++i) {
      indices->flat<int32_t>()[i] = rows[static_cast<size_t>(i)];
      out_ids->flat<int64_t>()[i] = ids[static_cast<size_t>(i)];
      weights->flat<float>()[i] = -std::numeric_limits<float>::max();
    }
  }

 private:
  int64_t num_true_ = 1;
};
TW_REGISTER_KERNEL("ComputeAccidentalHits", "CPU", ComputeAccidentalHitsOp);
TW_NO_GRADIENT("ComputeAccidentalHits");

ops::CandidateSample Sampler(const Scope& scope, const char* op, Input true_classes,
                             const ops::CandidateSamplerOptions& o) {
  const Operation node = scope.AddNode(op, {{true_classes}},
                                       {{"num_true", MakeAttr(o.num_true)},
                                        {"num_sampled", MakeAttr(o.num_sampled)},
                                        {"unique", MakeAttr(o.unique)},
                                        {"range_max", MakeAttr(o.range_max)},
                                        {"seed", MakeAttr(o.seed)},
                                        {"seed2", MakeAttr(o.seed2)}});
  if (!node.valid()) return {};
  return {Output(node, 0), Output(node, 1), Output(node, 2)};
}

}  // namespace

namespace ops {

CandidateSample LogUniformCandidateSampler(const Scope& scope, Input true_classes,
                                           const CandidateSamplerOptions& options) {
  return Sampler(scope, "LogUniformCandidateSampler", true_classes, options);
}
CandidateSample UniformCandidateSampler(const Scope& scope, Input true_classes,
                                        const CandidateSamplerOptions& options) {
  return Sampler(scope, "UniformCandidateSampler", true_classes, options);
}
AccidentalHits ComputeAccidentalHits(const Scope& scope, Input true_classes,
                                     Input sampled_candidates, int64_t num_true) {
  const Operation node =
      scope.AddNode("ComputeAccidentalHits", {{true_classes}, {sampled_candidates}},
                    {{"num_true", MakeAttr(num_true)}});
  if (!node.valid()) return {};
  return {Output(node, 0), Output(node, 1), Output(node, 2)};
}

}  // namespace ops
}  // namespace tw
