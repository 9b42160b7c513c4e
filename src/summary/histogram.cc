#include "src/summary/histogram.h"

#include <algorithm>
#include <cfloat>

namespace tw::summary {
namespace {

std::vector<double> MakeDefaultLimits() {
  std::vector<double> positive;
  // Repeated multiplication, not pow(1.1, k): the limits are the same doubles as
  // TensorFlow's, so values on a limit land in the same bucket.
  for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
  positive.push_back(DBL_MAX);
  std::vector<double> limits;
  limits.reserve(2 * positive.size() + 1);
  for (auto it = positive.rbegin(); it != positive.rend(); ++it) limits.push_back(-*it);
  limits.push_back(0.0);
  limits.insert(limits.end(), positive.begin(), positive.end());
  return limits;
}

}  // namespace

const std::vector<double>& Histogram::DefaultBucketLimits() {
  static const std::vector<double>* const limits = new std::vector<double>(MakeDefaultLimits());
  return *limits;
}

Histogram::Histogram()
    : limits_(DefaultBucketLimits()),
      buckets_(limits_.size(), 0.0),
      min_(limits_.back()),
      max_(-DBL_MAX) {}

void Histogram::Add(double value) {
  size_t b = static_cast<size_t>(std::upper_bound(limits_.begin(), limits_.end(), value) -
                                 limits_.begin());
  // Only DBL_MAX itself is past the last limit; it belongs to the last bucket.
  b = std::min(b, buckets_.size() - 1);
  buckets_[b] += 1.0;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  num_ += 1;
  sum_ += value;
  sum_squares_ += value * value;
}

void Histogram::EncodeToProto(proto::HistogramProto* proto, bool preserve_zero_buckets) const {
  proto->Clear();
  proto->set_min(min_);
  proto->set_max(max_);
  proto->set_num(num_);
  proto->set_sum(sum_);
  proto->set_sum_squares(sum_squares_);
  for (size_t i = 0; i < buckets_.size();) {
    double limit = limits_[i];
    double count = buckets_[i];
    ++i;
    if (!preserve_zero_buckets && count <= 0.0) {
      while (i < buckets_.size() && buckets_[i] <= 0.0) {
        limit = limits_[i];
        count = buckets_[i];
        ++i;
      }
    }
    proto->add_bucket_limit(limit);
    proto->add_bucket(count);
  }
  if (proto->bucket_size() == 0) {
    proto->add_bucket_limit(DBL_MAX);
    proto->add_bucket(0.0);
  }
}

}  // namespace tw::summary
