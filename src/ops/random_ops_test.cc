#include "tensorweave/ops/random_ops.h"

#include <algorithm>
#include <cmath>
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
