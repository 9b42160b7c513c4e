#include "tensorweave/ops/random_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

struct Moments {
  double mean = 0, stddev = 0, min = 1e300, max = -1e300;
};
Moments MomentsOf(const Tensor& t) {
  Moments m;
  auto f = t.flat<float>();
  for (float v : f) {
    m.mean += v;
    m.min = std::min<double>(m.min, v);
    m.max = std::max<double>(m.max, v);
  }
  m.mean /= static_cast<double>(f.size());
  for (float v : f) m.stddev += (v - m.mean) * (v - m.mean);
  m.stddev = std::sqrt(m.stddev / static_cast<double>(f.size()));
  return m;
}

// Fixed seeds make these statistics deterministic; the bounds are many standard errors wide.
TEST(RandomOpsTest, DistributionsHaveTheirShapeAndMoments) {
  Scope root = Scope::NewRootScope();
  auto uniform = ops::RandomUniform(root, {100, 1000}, {.seed = 1});
  auto normal = ops::RandomNormal(root, {100, 1000}, {.seed = 2});
  auto truncated = ops::TruncatedNormal(root, {100, 1000}, {.seed = 3});
  ClientSession s(root);
  auto out = s.Run({}, {uniform, normal, truncated});
  ASSERT_TRUE(out.ok()) << out.status();
  for (const Tensor& t : *out) EXPECT_EQ(t.shape(), TensorShape({100, 1000}));
  Moments u = MomentsOf((*out)[0]);
  EXPECT_NEAR(u.mean, 0.5, 0.01);
  EXPECT_GE(u.min, 0.0);
  EXPECT_LT(u.max, 1.0);
  Moments n = MomentsOf((*out)[1]);
  EXPECT_NEAR(n.mean, 0.0, 0.01);
  EXPECT_NEAR(n.stddev, 1.0, 0.01);
  EXPECT_GT(n.max, 3.0);  // 1e5 draws reach beyond 3 deviations
  Moments tn = MomentsOf((*out)[2]);
  EXPECT_NEAR(tn.mean, 0.0, 0.01);
  EXPECT_GE(tn.min, -2.0);
  EXPECT_LE(tn.max, 2.0);
  EXPECT_NEAR(tn.stddev, 0.88, 0.01);  // a standard normal truncated at 2 deviations
}

TEST(RandomOpsTest, SeedsFixTheSequenceAndRunsContinueIt) {
  auto draw = [](int64_t seed, int runs) {
    Scope root = Scope::NewRootScope();
    auto u = ops::RandomUniform(root, {4}, {.dtype = DT_DOUBLE, .seed = seed});
    ClientSession s(root);
    std::vector<Tensor> values;
    for (int i = 0; i < runs; ++i) values.push_back((*s.Run({}, {u}))[0]);
    return values;
  };
  auto a = draw(7, 2), b = draw(7, 2), c = draw(8, 1);
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(a[1], b[1]);
  EXPECT_NE(a[0], a[1]);
  EXPECT_NE(a[0], c[0]);
}

// RandomShuffle moves whole rows: the result is a permutation of the input's rows, seeds
// fix it, and it works on strings as on numbers.
TEST(RandomOpsTest, ShuffleMovesWholeRowsAndSeedsFixTheOrder) {
  std::vector<int32_t> values;
  for (int32_t i = 0; i < 50 * 3; ++i) values.push_back(i);
  const Tensor rows = Tensor::FromVector<int32_t>(values, {50, 3});
  auto shuffle = [&](int64_t seed) {
    Scope root = Scope::NewRootScope();
    auto out = ops::RandomShuffle(root, ops::Const(root, rows), seed, 5);
    ClientSession s(root);
    return (*s.Run({}, {out}))[0];
  };
  const Tensor a = shuffle(11), b = shuffle(11), c = shuffle(12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, rows);
  ASSERT_EQ(a.shape(), rows.shape());
  std::vector<bool> seen(50, false);
  for (int64_t r = 0; r < 50; ++r) {
    const int32_t first = a.flat<int32_t>()[r * 3];
    ASSERT_EQ(first % 3, 0) << "row " << r << " does not start a source row";
    EXPECT_EQ(a.flat<int32_t>()[r * 3 + 1], first + 1);
    EXPECT_EQ(a.flat<int32_t>()[r * 3 + 2], first + 2);
    EXPECT_FALSE(seen[static_cast<size_t>(first / 3)]) << "row " << first / 3 << " twice";
    seen[static_cast<size_t>(first / 3)] = true;
  }

  Scope root = Scope::NewRootScope();
  auto words = ops::RandomShuffle(
      root, ops::Const(root, Tensor::FromVector<std::string>({"a", "b", "c", "d"})), 3, 4);
  auto scalar = ops::RandomShuffle(root, ops::Const(root, Tensor::Scalar<float>(2.5f)), 3, 4);
  ClientSession s(root);
  auto out = s.Run({}, {words, scalar});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<std::string> sorted((*out)[0].flat<std::string>().begin(),
                                  (*out)[0].flat<std::string>().end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ((*out)[1].scalar<float>(), 2.5f);
}

// Log-uniform sampling draws class c with (log(c + 2) - log(c + 1)) / log(range + 1): the
// frequencies of 20,000 draws (seeded) are within a few standard errors of it, and without
// `unique` each expected count is that probability times the draws.
TEST(CandidateSamplerTest, LogUniformFrequenciesAndExpectedCounts) {
  Scope root = Scope::NewRootScope();
  auto true_classes = ops::Const(root, Tensor::FromVector<int64_t>({0, 50}, {2, 1}));
  auto draw = ops::LogUniformCandidateSampler(
      root, true_classes,
      {.num_sampled = 20000, .unique = false, .range_max = 100, .seed = 4, .seed2 = 1});
  ClientSession s(root);
  auto out =
      s.Run({}, {draw.sampled_candidates, draw.true_expected_count, draw.sampled_expected_count});
  ASSERT_TRUE(out.ok()) << out.status();
  auto p = [](int64_t c) { return (std::log(c + 2.0) - std::log(c + 1.0)) / std::log(101.0); };
  std::vector<int> counts(100, 0);
  for (int64_t c : (*out)[0].flat<int64_t>()) {
    ASSERT_TRUE(c >= 0 && c < 100) << c;
    ++counts[static_cast<size_t>(c)];
  }
  for (int64_t c : {0, 1, 5, 30}) {
    const double expected = p(c) * 20000, sd = std::sqrt(expected);
    EXPECT_NEAR(counts[static_cast<size_t>(c)], expected, 5 * sd) << "class " << c;
  }
  EXPECT_NEAR((*out)[1].flat<float>()[0], p(0) * 20000, 1e-2);
  EXPECT_NEAR((*out)[1].flat<float>()[1], p(50) * 20000, 1e-3);
  const int64_t first = (*out)[0].flat<int64_t>()[0];
  EXPECT_NEAR((*out)[2].flat<float>()[0], p(first) * 20000, 1e-2);
}

// With `unique` the draw has no repeats, and a class's expected count is the chance it was
// drawn at all in the tries it took: between 0 and 1, larger for frequent classes.
TEST(CandidateSamplerTest, UniqueDrawsHaveNoRepeatsAndCountsBelowOne) {
  Scope root = Scope::NewRootScope();
  auto true_classes = ops::Const(root, Tensor::FromVector<int64_t>({0, 1, 2, 90}, {2, 2}));
  auto log_uniform = ops::LogUniformCandidateSampler(
      root, true_classes, {.num_true = 2, .num_sampled = 30, .range_max = 100, .seed = 9});
  auto uniform = ops::UniformCandidateSampler(
      root, true_classes, {.num_true = 2, .num_sampled = 10, .range_max = 10, .seed = 9});
  ClientSession s(root);
  auto out = s.Run({}, {log_uniform.sampled_candidates, log_uniform.true_expected_count,
                        uniform.sampled_candidates, uniform.true_expected_count});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int64_t> drawn((*out)[0].flat<int64_t>().begin(), (*out)[0].flat<int64_t>().end());
  std::sort(drawn.begin(), drawn.end());
  EXPECT_EQ(std::unique(drawn.begin(), drawn.end()), drawn.end());
  auto counts = (*out)[1].flat<float>();
  EXPECT_GT(counts[0], counts[3]);
  for (float c : counts) EXPECT_TRUE(c > 0 && c <= 1) << c;
  std::vector<int64_t> all((*out)[2].flat<int64_t>().begin(), (*out)[2].flat<int64_t>().end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));  // every class once
  // Every class equally likely: the same count for all, 1 - 0.9^tries for a whole number of
  // tries, at least the 10 draws kept.
  const float uniform_count = (*out)[3].flat<float>()[0];
  for (float c : (*out)[3].flat<float>()) EXPECT_EQ(c, uniform_count);
  const double tries = std::log1p(-uniform_count) / std::log1p(-0.1);
  EXPECT_NEAR(tries, std::round(tries), 1e-3);
  EXPECT_GE(std::round(tries), 10);
}

TEST(CandidateSamplerTest, ErrorsNameTheNode) {
  Scope root = Scope::NewRootScope();
  auto classes = ops::Const(root, Tensor::FromVector<int64_t>({1, 2}, {1, 2}));
  auto too_many = ops::UniformCandidateSampler(root.WithOpName("too_many"), classes,
                                               {.num_true = 2, .num_sampled = 5, .range_max = 4});
  auto wrong_cols = ops::UniformCandidateSampler(root.WithOpName("wrong_cols"), classes,
                                                 {.num_true = 3, .num_sampled = 2, .range_max = 4});
  ClientSession s(root);
  auto out = s.Run({}, {too_many.sampled_candidates});
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("too_many: Sampler's range is too small"));
  out = s.Run({}, {wrong_cols.sampled_candidates});
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("wrong_cols: true_classes must have num_true columns"));
}

// A sampled class that is also a row's true class is a hit at (row, position in the draw).
TEST(CandidateSamplerTest, AccidentalHitsAreFoundPerRow) {
  Scope root = Scope::NewRootScope();
  auto hits = ops::ComputeAccidentalHits(
      root, ops::Const(root, Tensor::FromVector<int64_t>({1, 2, 3, 4}, {2, 2})),
      ops::Const(root, Tensor::FromVector<int64_t>({4, 1, 7, 2})), 2);
  ClientSession s(root);
  auto out = s.Run({}, {hits.indices, hits.ids, hits.weights});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({0, 0, 1}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int64_t>({1, 3, 0}));
  for (float w : (*out)[2].flat<float>()) EXPECT_EQ(w, -std::numeric_limits<float>::max());
}

TEST(RandomOpsTest, BadShapesAreNamed) {
  Scope root = Scope::NewRootScope();
  auto negative = ops::RandomNormal(root.WithOpName("init"), {3, -1});
  auto scalar = ops::RandomNormal(root.WithOpName("scalar_shape"), 3);
  ClientSession s(root);
  auto out = s.Run({}, {negative});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("node init: shape has negative dimension -1 at 1"));
  out = s.Run({}, {scalar});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("node scalar_shape: shape must be a vector"));
}

}  // namespace
}  // namespace tw
