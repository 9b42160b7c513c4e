// Graph-building functions for training summaries: each op outputs a serialized Summary
// (a scalar string) that EventFileWriter::AddSummary (tensorweave/summary.h) writes into
// an event file for TensorBoard. The ops, their attributes and their errors are
// TensorFlow 1.x's (ScalarSummary, HistogramSummary, MergeSummary).
//
//   auto loss_summary = ops::ScalarSummary(root, "loss", loss);
//   auto weights = ops::HistogramSummary(root, "weights", w_value);
//   auto all = ops::MergeSummary(root, {loss_summary, weights});
#ifndef TENSORWEAVE_OPS_SUMMARY_OPS_H_
#define TENSORWEAVE_OPS_SUMMARY_OPS_H_

#include <vector>

#include "tensorweave/scope.h"

namespace tw::ops {

// A Summary with one simple_value per element of `values` (float, double, int32, int64
// or uint8, stored as float), tagged by the element of `tags` (strings) at the same place.
// Run-time error: InvalidArgument "tags and values not the same shape: [2] != [3]" (plus
// " (tag 'x')" for a scalar tag) unless both have the same shape.
Output ScalarSummary(const Scope& scope, Input tags, Input values);

// A Summary with one histogram of all of `values` (any shape, a real type) in TensorFlow's
// default buckets (src/summary/histogram.h), tagged `tag` (a scalar string). Run-time
// errors: InvalidArgument "tags must be scalar" for a non-scalar tag; InvalidArgument
// "Nan in summary histogram for: <node>" or "Infinity in summary histogram for: <node>"
// when a value is not finite (TensorFlow names the node, which tf.summary.histogram names
// after the tag).
Output HistogramSummary(const Scope& scope, Input tag, Input values);

// One Summary with the values of every element of every input (string tensors of
// serialized Summaries, e.g. other summary ops' outputs), in order. Run-time errors:
// InvalidArgument "Could not parse one of the summary inputs" and "Duplicate tag <t> found
// in summary inputs" (values with an empty tag are exempt, as in TensorFlow).
Output MergeSummary(const Scope& scope, const std::vector<Output>& inputs);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_SUMMARY_OPS_H_
