// Histogram: TensorFlow's default buckets and encoding.
#include "src/summary/histogram.h"

#include <cfloat>
#include <cmath>

#include "gtest/gtest.h"

namespace tw::summary {
namespace {

TEST(HistogramTest, DefaultLimitsAreTensorFlows) {
  const std::vector<double>& limits = Histogram::DefaultBucketLimits();
  // 1e-12 * 1.1^k below 1e20: 774 positive limits, DBL_MAX, their negatives, and 0.
  ASSERT_EQ(limits.size(), 2 * (774 + 1) + 1u);
  EXPECT_EQ(limits.front(), -DBL_MAX);
  EXPECT_EQ(limits.back(), DBL_MAX);
  EXPECT_EQ(limits[775], 0.0);
  EXPECT_EQ(limits[776], 1e-12);
  EXPECT_DOUBLE_EQ(limits[777], 1.1e-12);
  EXPECT_EQ(limits[774], -1e-12);
  for (size_t i = 1; i < limits.size(); ++i) ASSERT_LT(limits[i - 1], limits[i]) << i;
}

TEST(HistogramTest, EncodesStatisticsAndCollapsesEmptyRuns) {
  Histogram h;
  for (double v : {1.0, 1.0, 2.0, -3.0}) h.Add(v);
  proto::HistogramProto p;
  h.EncodeToProto(&p);
  EXPECT_EQ(p.min(), -3.0);
  EXPECT_EQ(p.max(), 2.0);
  EXPECT_EQ(p.num(), 4.0);
  EXPECT_EQ(p.sum(), 1.0);
  EXPECT_EQ(p.sum_squares(), 15.0);
  ASSERT_EQ(p.bucket_size(), p.bucket_limit_size());
  double total = 0;
  int non_empty = 0;
  for (int i = 0; i < p.bucket_size(); ++i) {
    total += p.bucket(i);
    if (p.bucket(i) > 0) ++non_empty;
    // No two empty buckets in a row: runs are written as one.
    if (i > 0) {
      EXPECT_FALSE(p.bucket(i) == 0 && p.bucket(i - 1) == 0) << i;
    }
  }
  EXPECT_EQ(total, 4.0);
  EXPECT_EQ(non_empty, 3);
  // 1.0 lies in the bucket ending at the first limit >= 1.0.
  for (int i = 0; i < p.bucket_size(); ++i) {
    if (p.bucket(i) == 2.0) {
      EXPECT_GE(p.bucket_limit(i), 1.0);
      EXPECT_LT(p.bucket_limit(i), 1.1);
    }
  }
  EXPECT_EQ(p.bucket_limit(p.bucket_size() - 1), DBL_MAX);
}

TEST(HistogramTest, PreservedZeroBucketsKeepEveryLimit) {
  Histogram h;
  h.Add(0.5);
  proto::HistogramProto p;
  h.EncodeToProto(&p, /*preserve_zero_buckets=*/true);
  EXPECT_EQ(static_cast<size_t>(p.bucket_size()), Histogram::DefaultBucketLimits().size());
}

TEST(HistogramTest, EmptyHasOneEmptyBucket) {
  proto::HistogramProto p;
  Histogram().EncodeToProto(&p);
  ASSERT_EQ(p.bucket_size(), 1);
  EXPECT_EQ(p.bucket(0), 0.0);
  EXPECT_EQ(p.bucket_limit(0), DBL_MAX);
  EXPECT_EQ(p.num(), 0.0);
}

TEST(HistogramTest, ExtremeValuesStayInRange) {
  Histogram h;
  h.Add(DBL_MAX);
  h.Add(-DBL_MAX);
  h.Add(0.0);
  proto::HistogramProto p;
  h.EncodeToProto(&p);
  EXPECT_EQ(p.num(), 3.0);
  EXPECT_EQ(p.bucket(p.bucket_size() - 1), 1.0);  // DBL_MAX: the last bucket
  // -DBL_MAX equals the first limit, so it counts in the second bucket: [limit 0, limit 1).
  EXPECT_EQ(p.bucket(0), 0.0);
  EXPECT_EQ(p.bucket(1), 1.0);
  EXPECT_EQ(p.bucket_limit(1), Histogram::DefaultBucketLimits()[1]);
}

}  // namespace
}  // namespace tw::summary
