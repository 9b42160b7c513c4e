// Tests of the indexing, selection and checking ops (gather_nd_ops.cc, topk_ops.cc,
// segment_ops.cc, check_ops.cc) and ArgMin (reduction_ops.cc): kernels against hand-computed
// values, every error path, and graphs through ClientSession.
#include "tensorweave/ops/index_ops.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ops/array_test_util.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/ops/state_ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using testing::Floats;
using ::testing::HasSubstr;
using testing::I32;
using testing::I64;
using testing::Iota;
using testing::KernelTest;
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Vec;

// ---- GatherNd ----

NodeBuilder GatherNdNode(DataType params, DataType indices = DT_INT32) {
  return NodeBuilder("g", "GatherNd")
      .Attr("Tparams", params)
      .Attr("Tindices", indices)
      .NumInputs(2);
}

TEST(GatherNdOpTest, ElementsRowsAndWholeParams) {
  // Full tuples pick elements.
  auto out = RunOne(GatherNdNode(DT_FLOAT),
                    {Iota({2, 3}), Tensor::FromVector<int32_t>({1, 2, 0, 1, 1, 0}, {3, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<float>({5, 1, 3}));
  // Shorter tuples pick slices: rows of a [3,2,2] tensor, in a [2,1] batch.
  out = RunOne(GatherNdNode(DT_FLOAT, DT_INT64),
               {Iota({3, 2, 2}), Tensor::FromVector<int64_t>({2, 1, 0, 0}, {2, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({10, 11, 0, 1}, {2, 1, 2}));
  // A one-element tuple: whole matrices.
  out = RunOne(GatherNdNode(DT_FLOAT), {Iota({2, 1, 2}), Tensor::FromVector<int32_t>({1}, {1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({2, 3}, {1, 2}));
  // Strings are copied too.
  out = RunOne(GatherNdNode(DT_STRING),
               {Vec<std::string>({"a", "b", "c"}), Tensor::FromVector<int32_t>({2, 0}, {2, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<std::string>({"c", "a"}));
  // Empty tuples take params whole, once per tuple.
  out = RunOne(GatherNdNode(DT_FLOAT), {Iota({2}), Tensor::FromVector<int32_t>({}, {2, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({0, 1, 0, 1}, {2, 2}));
}

TEST(GatherNdOpTest, Errors) {
  auto out = RunOne(GatherNdNode(DT_FLOAT),
                    {Iota({3, 2}), Tensor::FromVector<int32_t>({0, 1, 3, 1}, {2, 2})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node g: indices[1] = [3, 1] does not index into param shape [3,2]");
  out = RunOne(GatherNdNode(DT_FLOAT),
               {Iota({3, 2}), Tensor::FromVector<int32_t>({0, 0, 0, -1}, {2, 1, 2})});
  EXPECT_EQ(Message(out), "node g: indices[1,0] = [0, -1] does not index into param shape [3,2]");
  out = RunOne(GatherNdNode(DT_FLOAT), {Iota({3}), Tensor::FromVector<int32_t>({0, 0}, {1, 2})});
  EXPECT_EQ(Message(out),
            "node g: index innermost dimension length must be <= params rank; saw: 2 vs. 1");
  out = RunOne(GatherNdNode(DT_FLOAT), {Tensor::Scalar<float>(1), I32({0})});
  EXPECT_EQ(Message(out), "node g: params must be at least a vector");
  out = RunOne(GatherNdNode(DT_FLOAT), {Iota({3}), Tensor::Scalar<int32_t>(0)});
  EXPECT_EQ(Message(out), "node g: indices must be at least a vector");
}

// ---- ScatterNd ----

NodeBuilder ScatterNdNode(DataType t = DT_FLOAT, DataType indices = DT_INT32) {
  return NodeBuilder("s", "ScatterNd").Attr("T", t).Attr("Tindices", indices).NumInputs(3);
}

TEST(ScatterNdOpTest, ElementsAndRowsDuplicatesAdd) {
  auto out = RunOne(ScatterNdNode(), {Tensor::FromVector<int32_t>({4, 3, 1, 4}, {4, 1}),
                                      Vec<float>({9, 10, 11, 12}), I32({6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<float>({0, 11, 0, 10, 21, 0}));
  // Rank-1 indices are tuples of one index (as TF).
  out = RunOne(ScatterNdNode(DT_INT64, DT_INT64),
               {I64({1, 1}), Tensor::FromVector<int64_t>({1, 2, 3, 4}, {2, 2}), I64({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int64_t>({0, 0, 4, 6}, {2, 2}));
  out = RunOne(ScatterNdNode(), {Tensor::FromVector<int32_t>({1, 0, 0, 2}, {2, 2}),
                                 Vec<float>({5, 6}), I32({2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({0, 0, 6, 5, 0, 0}, {2, 3}));
}

TEST(ScatterNdOpTest, Errors) {
  auto out = RunOne(ScatterNdNode(),
                    {Tensor::FromVector<int32_t>({1, 4}, {2, 1}), Vec<float>({1, 2}), I32({4})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node s: indices[1] = [4] does not index into shape [4]");
  out = RunOne(ScatterNdNode(),
               {Tensor::FromVector<int32_t>({1, 2}, {2, 1}), Vec<float>({1, 2, 3}), I32({4})});
  EXPECT_EQ(Message(out),
            "node s: Must have updates.shape = indices.shape[:batch_dim] + shape[slice_dim:], got "
            "updates.shape: [3], indices.shape: [2,1], shape: [4], slice_dim: 1, and batch_dim: 1");
  out = RunOne(ScatterNdNode(), {Tensor::FromVector<int32_t>({0}, {1, 1}), Vec<float>({1}),
                                 Tensor::Scalar<int32_t>(4)});
  EXPECT_EQ(Message(out), "node s: Shape must be a 1-D vector, got []");
  out = RunOne(ScatterNdNode(),
               {Tensor::FromVector<int32_t>({0}, {1, 1}), Vec<float>({1}), I32({0})});
  EXPECT_EQ(Message(out), "node s: Indices and updates specified for empty output shape");
  out = RunOne(ScatterNdNode(),
               {Tensor::FromVector<int32_t>({0}, {1, 1}), Vec<float>({1}), I32({-2})});
  EXPECT_THAT(Message(out), HasSubstr("node s: shape: "));
}

// ---- TopKV2 ----

StatusOr<std::vector<Tensor>> RunTopK(const Tensor& input, int k) {
  KernelTest t;
  return t.Run(NodeBuilder("top", "TopKV2").Attr("T", input.dtype()).NumInputs(2),
               {input, Tensor::Scalar<int32_t>(k)});
}

TEST(TopKOpTest, LargestFirstTiesByLowerIndex) {
  auto out = RunTopK(Floats({1, 5, 3, 5, 2, 9, 0, 4, 4, 1}, {2, 5}), 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Floats({5, 5, 3, 9, 4, 4}, {2, 3}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int32_t>({1, 3, 2, 0, 2, 3}, {2, 3}));
  out = RunTopK(Tensor::FromVector<int64_t>({3, 7, 7}), 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int64_t>({7}));
  EXPECT_EQ((*out)[1], I32({1}));
  out = RunTopK(Vec<float>({2, 1, 3}), 3);  // k == n: a full sort
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1], I32({2, 0, 1}));
  out = RunTopK(Floats({1, 2, 3, 4}, {2, 2}), 0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 0}));
}

TEST(TopKOpTest, NaNIsLargest) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunTopK(Vec<float>({1, nan, 3, nan}), 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1], I32({1, 3, 2}));
}

TEST(TopKOpTest, MatchesAFullSortOnALongRow) {
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 1009 % 50);
  auto out = RunTopK(Vec<float>(v), 30);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int32_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
  order.resize(30);
  EXPECT_EQ((*out)[1], I32(order));
}

TEST(TopKOpTest, Errors) {
  auto out = RunTopK(Vec<float>({1, 2}), 3);
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(out.status().message(),
            "node top: input must have at least k columns. Had 2, needed 3");
  out = RunTopK(Vec<float>({1, 2}), -1);
  EXPECT_EQ(out.status().message(), "node top: Need k >= 0, got -1");
  out = RunTopK(Tensor::Scalar<float>(1), 1);
  EXPECT_EQ(out.status().message(), "node top: input must be >= 1-D, got shape []");
}

TEST(TopKOpTest, GraphShapesAndBuilder) {
  Scope root = Scope::NewRootScope();
  auto top = ops::TopK(root, Floats({1, 5, 3, 2, 9, 0}, {2, 3}), 2);
  ClientSession s(root);
  auto out = s.Run({}, {top.values, top.indices});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Floats({5, 3, 9, 2}, {2, 2}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int32_t>({1, 2, 1, 0}, {2, 2}));
  Scope bad = Scope::NewRootScope();
  ops::TopK(bad, Vec<float>({1, 2}), 3);
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("input must have last dimension >= k = 3 but is 2"));
}

// ---- ArgMin ----

TEST(ArgMinOpTest, SmallestFirstOnTies) {
  KernelTest t;
  auto out = t.Run(
      NodeBuilder("am", "ArgMin").Attr("T", DT_FLOAT).Attr("output_type", DT_INT32).NumInputs(2),
      {Floats({3, 1, 1, 0, 5, 0}, {2, 3}), Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], I32({1, 0}));
  Scope root = Scope::NewRootScope();
  auto a = ops::ArgMin(root, Floats({3, 1, 1, 0, 5, 0}, {2, 3}), 0);
  auto empty = ops::ArgMin(root.WithOpName("empty"), Floats({}, {0, 2}), 0);
  ClientSession s(root);
  auto r = s.Run({}, {a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0], I64({1, 0, 1}));
  r = s.Run({}, {empty});
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cannot take ArgMin along empty"));
}

// ---- SegmentSum ----

NodeBuilder SegmentSumNode(DataType t = DT_FLOAT) {
  return NodeBuilder("seg", "SegmentSum").Attr("T", t).Attr("Tindices", DT_INT32).NumInputs(2);
}

TEST(SegmentSumOpTest, SumsRunsAndZerosGaps) {
  auto out = RunOne(SegmentSumNode(), {Iota({4, 2}), I32({0, 0, 2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({2, 4, 0, 0, 10, 12}, {3, 2}));
  out = RunOne(SegmentSumNode(DT_INT32), {I32({5, 6, 7}), I32({1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I32({0, 18}));
  out = RunOne(SegmentSumNode(), {Floats({}, {0, 3}), I32({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 3}));
}

TEST(SegmentSumOpTest, Errors) {
  auto out = RunOne(SegmentSumNode(), {Iota({3}), I32({0, 2, 1})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node seg: segment ids are not increasing");
  out = RunOne(SegmentSumNode(), {Iota({3}), I32({0, 3, 1})});
  EXPECT_EQ(Message(out), "node seg: segment ids are not increasing");  // order first, as TF
  out = RunOne(SegmentSumNode(), {Iota({2}), I32({-1, -1})});
  EXPECT_EQ(Message(out),
            "node seg: Segment id -1 out of range [0, 0), possibly because "
            "'segment_ids' input is not sorted.");
  out = RunOne(SegmentSumNode(), {Iota({2}), I32({-2, -2})});
  EXPECT_EQ(Message(out), "node seg: segment ids must be >= 0");
  out = RunOne(SegmentSumNode(), {Iota({3}), I32({0, 0})});
  EXPECT_EQ(Message(out), "node seg: segment_ids should be the same size as dimension 0 of input.");
  out = RunOne(SegmentSumNode(), {Iota({3}), Tensor::FromVector<int32_t>({0, 0, 0}, {3, 1})});
  EXPECT_EQ(Message(out), "node seg: segment_ids should be a vector.");
}

// ---- CheckNumerics, Assert, Print ----

TEST(CheckNumericsOpTest, PassesFiniteValuesAndNamesNaNAndInf) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto run = [](const Tensor& x) {
    return RunOne(
        NodeBuilder("cn", "CheckNumerics").Attr("T", x.dtype()).Attr("message", "m").NumInputs(1),
        {x});
  };
  auto out = run(Vec<double>({1, -2}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<double>({1, -2}));
  out = run(Vec<float>({1, nan}));
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "m : Tensor had NaN values");
  EXPECT_EQ(Message(run(Vec<float>({-inf, 1}))), "m : Tensor had Inf values");
  EXPECT_EQ(Message(run(Vec<float>({inf, nan}))), "m : Tensor had Inf and NaN values");
}

TEST(AssertOpTest, FormatsDataAsTensorFlow) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_BOOL);
  auto check = ops::Assert(root.WithOpName("check"), x,
                           {Input("x != y:"), Tensor::FromVector<int32_t>({1, 2, 3, 4, 5}),
                            Floats({1.5, 2, 3, 4}, {2, 2}), Tensor::Scalar<int64_t>(7)});
  ClientSession s(root);
  auto ok = s.Run({{x, Tensor::Scalar(true)}}, {}, {check});
  ASSERT_TRUE(ok.ok()) << ok.status();
  auto bad = s.Run({{x, Tensor::Scalar(false)}}, {}, {check});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(IsInvalidArgument(bad.status()));
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("node check (Assert): assertion failed: [x != y:] [1 2 3...] "
                        "[[1.5 2][3...]...] [7]"));
  auto not_scalar =
      RunOne(NodeBuilder("a", "Assert").Attr("T", std::vector<DataType>{}).NumInputs(1),
             {Tensor::FromVector<bool>({true, true})});
  EXPECT_EQ(Message(not_scalar), "In[0] expects to be a scalar, got shape [2]");
}

TEST(AssertOpTest, ControlDependencyStopsTheStep) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto positive = ops::Assert(root, ops::Greater(root, x, 0.0f), {x}, 2);
  auto y = ops::Identity(root.WithControlDependencies({positive}), x);
  ClientSession s(root);
  auto out = s.Run({{x, Tensor::Scalar(2.0f)}}, {y});
  ASSERT_TRUE(out.ok()) << out.status();
  out = s.Run({{x, Tensor::Scalar(-2.0f)}}, {y});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("assertion failed: [-2]"));
}

TEST(PrintOpTest, PassesInputThroughAndLogsFirstN) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Print(root, Vec<float>({1, 2}), {Vec<int32_t>({3, 4, 5, 6})},
                      {.message = "values: ", .first_n = 1, .summarize = 2});
  ClientSession s(root);
  ::testing::internal::CaptureStderr();
  auto out = s.Run({}, {p});
  auto again = s.Run({}, {p});
  const std::string logged = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*out)[0], Vec<float>({1, 2}));
  EXPECT_EQ(logged, "values: [3 4...]\n");
}

TEST(StringFormatOpTest, FormatsAsTfPrint) {
  auto format = [](const std::vector<Tensor>& inputs, const std::string& tmpl, int summarize) {
    std::vector<DataType> types;
    for (const Tensor& t : inputs) types.push_back(t.dtype());
    return RunOne(NodeBuilder("f", "StringFormat")
                      .Attr("T", types)
                      .Attr("template", tmpl)
                      .Attr("placeholder", "{}")
                      .Attr("summarize", summarize)
                      .NumInputs(static_cast<int>(inputs.size())),
                  inputs);
  };
  auto out = format({Iota({2, 2}), Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5, 6}),
                     Tensor::Scalar<std::string>("s"), Tensor::FromVector<bool>({true, false})},
                    "a {} b {} {} {}", 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->flat<std::string>()[0], "a [[0 1]\n [2 3]] b [0 1 ... 5 6] \"s\" [True False]");
  out = format({Iota({3, 1, 3})}, "{}", 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->flat<std::string>()[0], "[[[0 ... 2]]\n\n ...\n\n [[6 ... 8]]]");
  out = format({Iota({1})}, "{} {}", 3);
  EXPECT_EQ(Message(out), "num placeholders in template and num inputs must match: 2 vs. 1");
}

TEST(PrintV2OpTest, WritesToTheStreamAndRejectsOthers) {
  ::testing::internal::CaptureStderr();
  auto out = KernelTest().Run(NodeBuilder("p", "PrintV2").Attr("end", "|").NumInputs(1),
                              {Tensor::Scalar<std::string>("hi")});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "hi|");
  ASSERT_TRUE(out.ok()) << out.status();
  out = KernelTest().Run(NodeBuilder("p", "PrintV2").Attr("output_stream", "nowhere").NumInputs(1),
                         {Tensor::Scalar<std::string>("hi")});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Unknown output stream: nowhere"));
}

// ---- Shape functions (src/graph/index_shape_fns.cc) ----

std::string ShapeOf(const Scope& scope, const Output& o) {
  std::optional<TensorShape> s = scope.InferredShape(o);
  return s ? s->DebugString() : "?";
}

TEST(IndexShapeFnTest, StaticShapesAndErrors) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{4, -1, 3}});
  auto idx = ops::Placeholder(root, DT_INT32, {.shape = std::vector<int64_t>{5, 2}});
  EXPECT_EQ(ShapeOf(root, ops::GatherNd(root, x, idx)), "[5,3]");
  EXPECT_EQ(ShapeOf(root, ops::ScatterNd(root, idx, Vec<float>({1, 2, 3, 4, 5}), {6, 7})), "[6,7]");
  auto top = ops::TopK(root, x, 2);
  EXPECT_EQ(ShapeOf(root, top.values), "[4,?,2]");
  EXPECT_EQ(ShapeOf(root, top.indices), "[4,?,2]");
  EXPECT_EQ(ShapeOf(root, ops::SegmentSum(root, x, I32({0, 0, 1, 1}))), "[?,?,3]");
  EXPECT_EQ(ShapeOf(root, ops::UnsortedSegmentSum(root, x, I32({0, 0, 1, 1}), 7)), "[7,?,3]");
  EXPECT_EQ(ShapeOf(root, ops::ArgMin(root, x, 2)), "[4,?]");
  EXPECT_EQ(ShapeOf(root, ops::CheckNumerics(root, x, "m")), "[4,?,3]");
  auto v = ops::MakeVariable(root, "v", DT_FLOAT, {3, 2});
  EXPECT_EQ(ShapeOf(root, ops::ScatterMin(root, v, I32({0}), Floats({1, 2}, {1, 2}))), "[3,2]");
  ASSERT_TRUE(root.ok()) << root.status();
  Scope bad = Scope::NewRootScope();
  auto bad_x = ops::Placeholder(bad, DT_FLOAT, {.shape = std::vector<int64_t>{4, -1, 3}});
  ops::GatherNd(bad, bad_x, Tensor::FromVector<int32_t>({0, 0, 0, 0}, {1, 4}));
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("indices.shape[-1] must be <= params.rank, but saw indices shape: [1,4] "
                        "and params shape: [4,?,3]"));
}

}  // namespace
}  // namespace tw
