// ScalarSummary, HistogramSummary and MergeSummary: kernels on their own, and a graph that
// merges them run in a session.
#include "tensorweave/ops/summary_ops.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/protobuf/summary.pb.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::KernelTest;
using testing::NodeBuilder;

std::string Message(const Status& s) { return std::string(s.message()); }

proto::Summary Parse(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DT_STRING);
  EXPECT_EQ(t.rank(), 0);
  proto::Summary s;
  EXPECT_TRUE(s.ParseFromString(t.flat<std::string>()[0]));
  return s;
}

StatusOr<Tensor> RunScalar(const Tensor& tags, const Tensor& values) {
  KernelTest t;
  TW_ASSIGN_OR_RETURN(
      auto out, t.Run(NodeBuilder("loss", "ScalarSummary").Attr("T", values.dtype()).NumInputs(2),
                      {tags, values}));
  return out[0];
}

StatusOr<Tensor> RunHistogram(const Tensor& tag, const Tensor& values) {
  KernelTest t;
  TW_ASSIGN_OR_RETURN(
      auto out,
      t.Run(NodeBuilder("weights", "HistogramSummary").Attr("T", values.dtype()).NumInputs(2),
            {tag, values}));
  return out[0];
}

TEST(ScalarSummaryTest, OneValuePerTag) {
  auto out =
      RunScalar(Tensor::FromVector<std::string>({"a", "b"}), Tensor::FromVector<double>({1.5, -2}));
  ASSERT_TRUE(out.ok()) << out.status();
  proto::Summary s = Parse(*out);
  ASSERT_EQ(s.value_size(), 2);
  EXPECT_EQ(s.value(0).tag(), "a");
  EXPECT_EQ(s.value(0).simple_value(), 1.5f);
  EXPECT_EQ(s.value(1).tag(), "b");
  EXPECT_EQ(s.value(1).simple_value(), -2.0f);

  out = RunScalar(Tensor::Scalar<std::string>("steps"), Tensor::Scalar<int64_t>(7));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Parse(*out).value(0).simple_value(), 7.0f);
}

TEST(ScalarSummaryTest, ShapeMismatchIsInvalidArgument) {
  auto out = RunScalar(Tensor::Scalar<std::string>("loss"), Tensor::FromVector<float>({1, 2}));
  EXPECT_TRUE(IsInvalidArgument(out.status())) << out.status();
  EXPECT_EQ(Message(out.status()), "tags and values not the same shape: [] != [2] (tag 'loss')");
  out = RunScalar(Tensor::FromVector<std::string>({"a", "b"}), Tensor::FromVector<float>({1}));
  EXPECT_EQ(Message(out.status()), "tags and values not the same shape: [2] != [1]");
}

TEST(HistogramSummaryTest, CountsEveryValue) {
  auto out = RunHistogram(Tensor::Scalar<std::string>("w"),
                          Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})));
  ASSERT_TRUE(out.ok()) << out.status();
  proto::Summary s = Parse(*out);
  ASSERT_EQ(s.value_size(), 1);
  EXPECT_EQ(s.value(0).tag(), "w");
  ASSERT_TRUE(s.value(0).has_histo());
  const proto::HistogramProto& h = s.value(0).histo();
  EXPECT_EQ(h.num(), 4);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 4);
  EXPECT_EQ(h.sum(), 10);
  EXPECT_EQ(h.sum_squares(), 30);
  double total = 0;
  for (double c : h.bucket()) total += c;
  EXPECT_EQ(total, 4);
}

TEST(HistogramSummaryTest, NonFiniteValuesAreInvalidArgumentNamingTheNode) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunHistogram(Tensor::Scalar<std::string>("w"), Tensor::FromVector<float>({1, nan}));
  EXPECT_TRUE(IsInvalidArgument(out.status())) << out.status();
  EXPECT_EQ(Message(out.status()), "Nan in summary histogram for: weights");
  out = RunHistogram(Tensor::Scalar<std::string>("w"),
                     Tensor::FromVector<double>({-std::numeric_limits<double>::infinity()}));
  EXPECT_EQ(Message(out.status()), "Infinity in summary histogram for: weights");
  out = RunHistogram(Tensor::FromVector<std::string>({"a"}), Tensor::FromVector<float>({1}));
  EXPECT_EQ(Message(out.status()), "tags must be scalar");
}

TEST(MergeSummaryTest, MergesAndRejectsDuplicatesAndGarbage) {
  auto a = RunScalar(Tensor::Scalar<std::string>("a"), Tensor::Scalar<float>(1));
  auto b =
      RunScalar(Tensor::FromVector<std::string>({"b", "c"}), Tensor::FromVector<float>({2, 3}));
  ASSERT_TRUE(a.ok() && b.ok());
  KernelTest t;
  auto merge = NodeBuilder("merge", "MergeSummary").Attr("N", int64_t{2}).NumInputs(2);
  auto out = t.Run(merge, {*a, *b});
  ASSERT_TRUE(out.ok()) << out.status();
  proto::Summary s = Parse((*out)[0]);
  ASSERT_EQ(s.value_size(), 3);
  EXPECT_EQ(s.value(0).tag(), "a");
  EXPECT_EQ(s.value(2).tag(), "c");
  EXPECT_EQ(s.value(2).simple_value(), 3.0f);

  out = t.Run(merge, {*a, *a});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out.status()), "Duplicate tag a found in summary inputs");
  out = t.Run(merge, {*a, Tensor::Scalar<std::string>("\xff\xff\xff")});
  EXPECT_EQ(Message(out.status()), "Could not parse one of the summary inputs");
}

TEST(SummaryOpsTest, GraphOfSummariesRunsInASession) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto loss = ops::ScalarSummary(root.WithOpName("loss"), std::string("loss"), x);
  auto hist = ops::HistogramSummary(root.WithOpName("values"), std::string("values"), x);
  auto merged = ops::MergeSummary(root.WithOpName("merged"), {loss, hist});
  ASSERT_TRUE(root.status().ok()) << root.status();
  ClientSession session(root);
  auto out = session.Run({{x, Tensor::Scalar<float>(0.25f)}}, {merged});
  ASSERT_TRUE(out.ok()) << out.status();
  proto::Summary s = Parse((*out)[0]);
  ASSERT_EQ(s.value_size(), 2);
  EXPECT_EQ(s.value(0).simple_value(), 0.25f);
  EXPECT_EQ(s.value(1).histo().num(), 1);

  out = session.Run({{x, Tensor::Scalar<float>(std::nanf(""))}}, {merged});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(Message(out.status()), HasSubstr("Nan in summary histogram for: values"));
}

}  // namespace
}  // namespace tw
