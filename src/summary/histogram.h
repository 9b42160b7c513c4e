// A histogram of doubles in TensorFlow's buckets, encoded as TensorBoard's HistogramProto
// exactly as TensorFlow's tensorflow/core/lib/histogram does, so that TensorBoard draws
// tensorweave's histograms as it draws TensorFlow's.
//
// The default bucket limits grow by 10% from 1e-12 up to 1e20, mirrored below zero, with
// 0 in the middle and +-DBL_MAX at the ends (1549 limits): the relative error of a bucket
// is at most 10% whatever the values' scale.
//
//   Histogram h;
//   for (double v : values) h.Add(v);     // finite values only
//   proto::HistogramProto p;
//   h.EncodeToProto(&p);
//
// Not thread-safe; a value type.
#ifndef TENSORWEAVE_SRC_SUMMARY_HISTOGRAM_H_
#define TENSORWEAVE_SRC_SUMMARY_HISTOGRAM_H_

#include <vector>

#include "tensorweave/protobuf/summary.pb.h"

namespace tw::summary {

class Histogram {
 public:
  // Empty, over DefaultBucketLimits().
  Histogram();

  // TensorFlow's default bucket limits, in increasing order (computed once).
  static const std::vector<double>& DefaultBucketLimits();

  // Counts `value` in bucket i, the first whose limit is above it: [limit[i-1], limit[i])
  // (DBL_MAX itself counts in the last). The caller
  // rejects NaN and infinities (the HistogramSummary op does, naming its node).
  void Add(double value);

  // min, max, num, sum, sum_squares and the buckets. Unless `preserve_zero_buckets`, each
  // run of empty buckets is written as one empty bucket ending at the run's last limit
  // (TensorFlow's encoding, which keeps event files small); an empty histogram still has
  // one bucket (limit DBL_MAX, count 0), as TensorFlow's.
  void EncodeToProto(proto::HistogramProto* proto, bool preserve_zero_buckets = false) const;

  double num() const { return num_; }

 private:
  const std::vector<double>& limits_;
  std::vector<double> buckets_;  // one count per limit
  double min_, max_, num_ = 0, sum_ = 0, sum_squares_ = 0;
};

}  // namespace tw::summary

#endif  // TENSORWEAVE_SRC_SUMMARY_HISTOGRAM_H_
