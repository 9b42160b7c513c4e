#include <cmath>
#include <limits>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::KernelTest;
using testing::NodeBuilder;

StatusOr<Tensor> RunReduce(const std::string& op, const Tensor& input, const Tensor& axis,
                           bool keep_dims = false) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("r", op)
                       .Attr("T", input.dtype())
                       .Attr("Tidx", axis.dtype())
                       .Attr("keep_dims", keep_dims)
                       .NumInputs(2),
                   {input, axis});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// [[1, 2, 3], [4, 5, 6]]
Tensor Matrix23() { return Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}); }

TEST(SumOpTest, ScalarAxisAndNegativeAxis) {
  auto rows = RunReduce("Sum", Matrix23(), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, Tensor::FromVector<float>({5, 7, 9}));
  auto cols = RunReduce("Sum", Matrix23(), Tensor::Scalar<int64_t>(-1));
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_EQ(*cols, Tensor::FromVector<float>({6, 15}));
}

TEST(SumOpTest, AllAxesAndKeepDims) {
  auto all = RunReduce("Sum", Matrix23(), Tensor::FromVector<int32_t>({1, 0}));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, Tensor::Scalar<float>(21));
  auto kept = RunReduce("Sum", Matrix23(), Tensor::FromVector<int32_t>({0, -1}), true);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, Tensor::FromVector<float>({21}, {1, 1}));
  auto kept_cols = RunReduce("Sum", Matrix23(), Tensor::Scalar<int32_t>(1), true);
  ASSERT_TRUE(kept_cols.ok());
  EXPECT_EQ(*kept_cols, Tensor::FromVector<float>({6, 15}, {2, 1}));
}

TEST(SumOpTest, EmptyAxisListReducesNothing) {
  const Tensor x = Matrix23();
  auto out = RunReduce("Sum", x, Tensor(DT_INT32, TensorShape({0})), true);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, x);
}

TEST(SumOpTest, MultipleNonAdjacentAxes) {
  // x[i][j][k] = 100 i + 10 j + k over [2,3,4]; summing axes 0 and 2 leaves j:
  // sum_i sum_k (100 i + 10 j + k) = 4*100 + 8*10 j + 2*6 = 412 + 80 j.
  std::vector<int32_t> values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) values.push_back(100 * i + 10 * j + k);
  const Tensor x = Tensor::FromVector<int32_t>(values, {2, 3, 4});
  auto out = RunReduce("Sum", x, Tensor::FromVector<int32_t>({0, 2}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int32_t>({412, 492, 572}));
  auto kept = RunReduce("Sum", x, Tensor::FromVector<int64_t>({-3, -1}), true);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, Tensor::FromVector<int32_t>({412, 492, 572}, {1, 3, 1}));
  // And the middle axis alone: sum_j = 300 i + 30 + 3 k.
  auto middle = RunReduce("Sum", x, Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(*middle, Tensor::FromVector<int32_t>({30, 33, 36, 39, 330, 333, 336, 339}, {2, 4}));
}

TEST(SumOpTest, SizeOneDimensionsAndEmptyInputs) {
  auto one = RunReduce("Sum", Tensor::FromVector<double>({1, 2, 3}, {1, 3, 1}),
                       Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, Tensor::FromVector<double>({6}, {1, 1}));
  auto empty = RunReduce("Sum", Tensor(DT_FLOAT, TensorShape({0, 3})), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, Tensor::FromVector<float>({0, 0, 0}));
}

TEST(ReductionOpTest, BadAxesAreInvalidArgument) {
  auto out_of_range = RunReduce("Sum", Matrix23(), Tensor::Scalar<int32_t>(2));
  EXPECT_TRUE(IsInvalidArgument(out_of_range.status()));
  EXPECT_THAT(std::string(out_of_range.status().message()),
              HasSubstr("node r: Invalid reduction axis 2 for input of shape [2,3]"));
  auto too_negative = RunReduce("Max", Matrix23(), Tensor::Scalar<int32_t>(-3));
  EXPECT_TRUE(IsInvalidArgument(too_negative.status()));
  auto duplicate = RunReduce("Mean", Matrix23(), Tensor::FromVector<int32_t>({1, -1}));
  EXPECT_TRUE(IsInvalidArgument(duplicate.status()));
  EXPECT_THAT(std::string(duplicate.status().message()), HasSubstr("more than once"));
  auto matrix_axis = RunReduce("Sum", Matrix23(), Tensor::FromVector<int32_t>({0, 1}, {1, 2}));
  EXPECT_TRUE(IsInvalidArgument(matrix_axis.status()));
  auto scalar_input = RunReduce("Sum", Tensor::Scalar<float>(1), Tensor::Scalar<int32_t>(0));
  EXPECT_TRUE(IsInvalidArgument(scalar_input.status()));
}

TEST(MeanOpTest, FloatAndInteger) {
  auto m = RunReduce("Mean", Matrix23(), Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, Tensor::FromVector<float>({2, 5}));
  auto i = RunReduce("Mean", Tensor::FromVector<int64_t>({1, 2, -3, -4}, {2, 2}),
                     Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(*i, Tensor::FromVector<int64_t>({1, -3}));  // truncated: 1.5 -> 1, -3.5 -> -3
  auto nan = RunReduce("Mean", Tensor(DT_FLOAT, TensorShape({0})), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan(nan->scalar<float>()));
}

TEST(MaxOpTest, ValuesKeepDimsAndEmpty) {
  const Tensor x = Tensor::FromVector<float>({1, 9, 3, 4, -5, 6}, {2, 3});
  auto cols = RunReduce("Max", x, Tensor::Scalar<int32_t>(0), true);
  ASSERT_TRUE(cols.ok());
  EXPECT_EQ(*cols, Tensor::FromVector<float>({4, 9, 6}, {1, 3}));
  auto rows = RunReduce("Max", x, Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, Tensor::FromVector<float>({9, 6}));
  auto empty = RunReduce("Max", Tensor(DT_FLOAT, TensorShape({0})), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->scalar<float>(), -std::numeric_limits<float>::infinity());
  auto ints =
      RunReduce("Max", Tensor::FromVector<int32_t>({-7, -3, -9}), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(ints->scalar<int32_t>(), -3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto with_nan =
      RunReduce("Max", Tensor::FromVector<float>({1, nan, 2}), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(with_nan.ok());
  EXPECT_TRUE(std::isnan(with_nan->scalar<float>()));
}

StatusOr<Tensor> RunLogical(const std::string& op, const Tensor& input, const Tensor& axis,
                            bool keep_dims = false) {
  KernelTest t;
  auto out = t.Run(
      NodeBuilder("r", op).Attr("Tidx", axis.dtype()).Attr("keep_dims", keep_dims).NumInputs(2),
      {input, axis});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(LogicalReductionTest, AllAndAnyOverAxesKeepDimsAndEmpty) {
  // [[T, F, T], [T, T, T]]
  const Tensor x = Tensor::FromVector<bool>({true, false, true, true, true, true}, {2, 3});
  auto all_rows = RunLogical("All", x, Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(all_rows.ok()) << all_rows.status();
  EXPECT_EQ(*all_rows, Tensor::FromVector<bool>({false, true}));
  auto all_cols = RunLogical("All", x, Tensor::Scalar<int64_t>(0), /*keep_dims=*/true);
  ASSERT_TRUE(all_cols.ok()) << all_cols.status();
  EXPECT_EQ(*all_cols, Tensor::FromVector<bool>({true, false, true}, {1, 3}));
  auto any_all = RunLogical("Any", x, Tensor::FromVector<int32_t>({0, 1}));
  ASSERT_TRUE(any_all.ok()) << any_all.status();
  EXPECT_TRUE(any_all->scalar<bool>());
  const Tensor none = Tensor::FromVector<bool>({false, false, false, false, false, false}, {2, 3});
  auto any_rows = RunLogical("Any", none, Tensor::Scalar<int32_t>(-1));
  ASSERT_TRUE(any_rows.ok()) << any_rows.status();
  EXPECT_EQ(*any_rows, Tensor::FromVector<bool>({false, false}));
  // As TF: over nothing, All is true and Any false.
  const Tensor empty(DT_BOOL, TensorShape({0}));
  auto all_empty = RunLogical("All", empty, Tensor::Scalar<int32_t>(0));
  auto any_empty = RunLogical("Any", empty, Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(all_empty.ok() && any_empty.ok());
  EXPECT_TRUE(all_empty->scalar<bool>());
  EXPECT_FALSE(any_empty->scalar<bool>());
  auto bad = RunLogical("Any", x, Tensor::Scalar<int32_t>(2));
  EXPECT_TRUE(IsInvalidArgument(bad.status())) << bad.status();
}

TEST(MinOpTest, ValuesKeepDimsAndAxes) {
  const Tensor x = Tensor::FromVector<float>({1, 9, 3, 4, -5, 6}, {2, 3});
  auto cols = RunReduce("Min", x, Tensor::Scalar<int32_t>(0), true);
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_EQ(*cols, Tensor::FromVector<float>({1, -5, 3}, {1, 3}));
  auto rows = RunReduce("Min", x, Tensor::Scalar<int64_t>(-1));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, Tensor::FromVector<float>({1, -5}));
  auto all = RunReduce("Min", x, Tensor::FromVector<int32_t>({0, 1}));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, Tensor::Scalar<float>(-5));
  // x[i][j][k] = 100 i + 10 j + k over [2,3,4]: the minimum over axes 0 and 2 is 10 j, over
  // axis 1 it is 100 i + k.
  std::vector<int64_t> values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) values.push_back(100 * i + 10 * j + k);
  const Tensor cube = Tensor::FromVector<int64_t>(values, {2, 3, 4});
  auto outer = RunReduce("Min", cube, Tensor::FromVector<int32_t>({0, 2}));
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_EQ(*outer, Tensor::FromVector<int64_t>({0, 10, 20}));
  auto middle = RunReduce("Min", cube, Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_EQ(*middle, Tensor::FromVector<int64_t>({0, 1, 2, 3, 100, 101, 102, 103}, {2, 4}));
}

TEST(MinOpTest, EmptyIsTheHighestValueAndNaNPropagates) {
  auto f = RunReduce("Min", Tensor(DT_FLOAT, TensorShape({0})), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->scalar<float>(), std::numeric_limits<float>::infinity());
  auto i = RunReduce("Min", Tensor(DT_INT32, TensorShape({0, 2})), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(i.ok()) << i.status();
  const int32_t max32 = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(*i, Tensor::FromVector<int32_t>({max32, max32}));
  auto l = RunReduce("Min", Tensor(DT_INT64, TensorShape({3, 0})), Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(l.ok()) << l.status();
  const int64_t max64 = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(*l, Tensor::FromVector<int64_t>({max64, max64, max64}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto with_nan =
      RunReduce("Min", Tensor::FromVector<double>({1, nan, -2}), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(with_nan.ok()) << with_nan.status();
  EXPECT_TRUE(std::isnan(with_nan->scalar<double>()));
  auto ints =
      RunReduce("Min", Tensor::FromVector<int32_t>({-7, -3, -9}), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(ints->scalar<int32_t>(), -9);
}

TEST(ProdOpTest, ValuesKeepDimsAndAxes) {
  auto cols = RunReduce("Prod", Matrix23(), Tensor::Scalar<int32_t>(0));  // an outer axis
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_EQ(*cols, Tensor::FromVector<float>({4, 10, 18}));
  auto rows = RunReduce("Prod", Matrix23(), Tensor::Scalar<int32_t>(1), true);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, Tensor::FromVector<float>({6, 120}, {2, 1}));
  auto all = RunReduce("Prod", Matrix23(), Tensor::FromVector<int64_t>({-1, 0}));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, Tensor::Scalar<float>(720));
  auto d = RunReduce("Prod", Tensor::FromVector<double>({0.5, -2, 3, 0.25}, {2, 1, 2}),
                     Tensor::FromVector<int32_t>({0, 1}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, Tensor::FromVector<double>({1.5, -0.5}));
  auto ints =
      RunReduce("Prod", Tensor::FromVector<int64_t>({-2, 3, 5, -7}, {2, 2}), Tensor::Scalar(1));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(*ints, Tensor::FromVector<int64_t>({-6, -35}));
}

TEST(ProdOpTest, EmptyIsOneAndIntegersWrap) {
  auto f = RunReduce("Prod", Tensor(DT_FLOAT, TensorShape({0})), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*f, Tensor::Scalar<float>(1));
  auto i = RunReduce("Prod", Tensor(DT_INT32, TensorShape({0, 3})), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(*i, Tensor::FromVector<int32_t>({1, 1, 1}));
  auto kept =
      RunReduce("Prod", Tensor(DT_INT64, TensorShape({2, 0})), Tensor::Scalar<int32_t>(1), true);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, Tensor::FromVector<int64_t>({1, 1}, {2, 1}));
  // 2^16 * 2^15 = 2^31 wraps to the lowest int32; 2^16 * 2^16 to 0.
  auto wrap = RunReduce("Prod", Tensor::FromVector<int32_t>({65536, 32768, 65536, 65536}, {2, 2}),
                        Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(wrap.ok()) << wrap.status();
  EXPECT_EQ(*wrap, Tensor::FromVector<int32_t>({std::numeric_limits<int32_t>::min(), 0}));
}

TEST(ReductionOpTest, MinAndProdRejectTypesOutsideTheirLists) {
  for (const std::string op : {"Min", "Prod"}) {
    auto s = RunReduce(op, Tensor::FromVector<std::string>({"a"}), Tensor::Scalar<int32_t>(0));
    EXPECT_TRUE(IsInvalidArgument(s.status())) << op << ": " << s.status();
    EXPECT_THAT(std::string(s.status().message()),
                HasSubstr("(op " + op + ") is string, not one of float, double, int32, int64"));
    auto b = RunReduce(op, Tensor::FromVector<bool>({true}), Tensor::Scalar<int32_t>(0));
    EXPECT_TRUE(IsInvalidArgument(b.status())) << op << ": " << b.status();
    EXPECT_THAT(std::string(b.status().message()), HasSubstr("(op " + op + ") is bool"));
    auto axis = RunReduce(op, Matrix23(), Tensor::Scalar<int32_t>(2));
    EXPECT_TRUE(IsInvalidArgument(axis.status())) << op << ": " << axis.status();
    EXPECT_THAT(std::string(axis.status().message()),
                HasSubstr("node r: Invalid reduction axis 2 for input of shape [2,3]"));
  }
}

StatusOr<Tensor> RunArgMax(const Tensor& input, const Tensor& dimension,
                           DataType output_type = DT_INT64) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("am", "ArgMax")
                       .Attr("T", input.dtype())
                       .Attr("Tidx", dimension.dtype())
                       .Attr("output_type", output_type)
                       .NumInputs(2),
                   {input, dimension});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(ArgMaxOpTest, AlongEachDimension) {
  const Tensor x = Tensor::FromVector<float>({1, 9, 3, 4, -5, 6}, {2, 3});
  auto d0 = RunArgMax(x, Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(d0.ok()) << d0.status();
  EXPECT_EQ(*d0, Tensor::FromVector<int64_t>({1, 0, 1}));
  auto d1 = RunArgMax(x, Tensor::Scalar<int64_t>(-1), DT_INT32);
  ASSERT_TRUE(d1.ok()) << d1.status();
  EXPECT_EQ(*d1, Tensor::FromVector<int32_t>({1, 2}));
}

TEST(ArgMaxOpTest, FirstOnTiesAndMiddleDimension) {
  auto ties = RunArgMax(Tensor::FromVector<int32_t>({2, 5, 5, 1}), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(ties.ok());
  EXPECT_EQ(ties->scalar<int64_t>(), 1);
  // [2,3,2] along dimension 1.
  auto mid = RunArgMax(Tensor::FromVector<double>({0, 9, 5, 1, 2, 3, 7, 7, 8, 0, 1, 9}, {2, 3, 2}),
                       Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(*mid, Tensor::FromVector<int64_t>({1, 0, 1, 2}, {2, 2}));
}

TEST(ArgMaxOpTest, Errors) {
  const Tensor x = Tensor::FromVector<float>({1, 2});
  EXPECT_TRUE(IsInvalidArgument(RunArgMax(x, Tensor::Scalar<int32_t>(1)).status()));
  EXPECT_TRUE(IsInvalidArgument(RunArgMax(x, Tensor::FromVector<int32_t>({0})).status()));
  auto empty = RunArgMax(Tensor(DT_FLOAT, TensorShape({2, 0})), Tensor::Scalar<int32_t>(1));
  EXPECT_TRUE(IsInvalidArgument(empty.status()));
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("empty dimension 1"));
}

TEST(ReductionBuilderTest, BuildsNodesWithAttrs) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root.WithOpName("x"), Tensor::FromVector<double>({1, 2, 3, 4}, {2, 2}));
  auto s = ops::Sum(root.WithOpName("s"), x, {0, 1}, {.keep_dims = true});
  auto m = ops::Mean(root.WithOpName("m"), x, 0);
  auto mx = ops::Max(root.WithOpName("mx"), x, int64_t{-1});
  auto am = ops::ArgMax(root.WithOpName("am"), x, 1, {.output_type = DT_INT32});
  auto mn = ops::Min(root.WithOpName("mn"), x, 1, {.keep_dims = true});
  auto pr = ops::Prod(root.WithOpName("pr"), x, int64_t{0});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(s.type(), DT_DOUBLE);
  EXPECT_EQ(am.type(), DT_INT32);
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::map<std::string, proto::NodeDef> nodes;
  for (const auto& n : graph->node()) nodes[n.name()] = n;
  EXPECT_EQ(nodes["s"].op(), "Sum");
  EXPECT_EQ(nodes["s"].attr().at("T").type(), proto::DT_DOUBLE);
  EXPECT_EQ(nodes["s"].attr().at("Tidx").type(), proto::DT_INT32);
  EXPECT_TRUE(nodes["s"].attr().at("keep_dims").b());
  EXPECT_FALSE(nodes["m"].attr().at("keep_dims").b());
  EXPECT_EQ(nodes["mx"].attr().at("Tidx").type(), proto::DT_INT64);
  EXPECT_EQ(nodes["am"].op(), "ArgMax");
  EXPECT_EQ(nodes["am"].attr().at("output_type").type(), proto::DT_INT32);
  EXPECT_TRUE(m.op().valid() && mx.op().valid());
  EXPECT_EQ(nodes["mn"].op(), "Min");
  EXPECT_TRUE(nodes["mn"].attr().at("keep_dims").b());
  EXPECT_EQ(nodes["pr"].op(), "Prod");
  EXPECT_EQ(nodes["pr"].attr().at("T").type(), proto::DT_DOUBLE);
  EXPECT_EQ(nodes["pr"].attr().at("Tidx").type(), proto::DT_INT64);
  ClientSession session(root);
  auto out = session.Run({}, {mn, pr});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<double>({1, 3}, {2, 1}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<double>({3, 8}));
}

// ---- SumGrad, MeanGrad, MaxGrad (helper ops of the gradients) ----

TEST(ReductionGradOpTest, SumAndMeanGradRepeatAlongTheAxes) {
  Scope root = Scope::NewRootScope();
  const Tensor g = Tensor::FromVector<double>({1, 2});
  // The gradient of a reduction of [2,3] over axis 1, given without and with keep_dims.
  auto sum = ops::SumGrad(root, g, {2, 3}, 1);
  auto sum_kept = ops::SumGrad(root, Tensor::FromVector<double>({1, 2}, {2, 1}), {2, 3}, {-1});
  auto mean = ops::MeanGrad(root, Tensor::FromVector<double>({3, 6, 9}), {2, 3}, 0);
  auto all =
      ops::MeanGrad(root, Tensor::Scalar<double>(8), Tensor::FromVector<int64_t>({2, 2}), {0, 1});
  ClientSession s(root);
  auto out = s.Run({}, {sum, sum_kept, mean, all});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<double>({1, 1, 1, 2, 2, 2}, {2, 3}));
  EXPECT_EQ((*out)[1], (*out)[0]);
  EXPECT_EQ((*out)[2], Tensor::FromVector<double>({1.5, 3, 4.5, 1.5, 3, 4.5}, {2, 3}));
  EXPECT_EQ((*out)[3], Tensor::FromVector<double>({2, 2, 2, 2}, {2, 2}));
}

TEST(ReductionGradOpTest, MaxGradGoesToTheMaxima) {
  Scope root = Scope::NewRootScope();
  const Tensor x = Tensor::FromVector<float>({1, 4, 4, 3, 2, 1}, {2, 3});
  auto g = ops::MaxGrad(root, x, Tensor::FromVector<float>({4, 3}),
                        Tensor::FromVector<float>({2, 5}), 1);
  auto cols = ops::MaxGrad(root, x, Tensor::FromVector<float>({3, 4, 4}, {1, 3}),
                           Tensor::FromVector<float>({1, 1, 1}, {1, 3}), 0);
  ClientSession s(root);
  auto out = s.Run({}, {g, cols});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({0, 1, 1, 5, 0, 0}, {2, 3}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({0, 1, 1, 1, 0, 0}, {2, 3}));
}

TEST(ReductionGradOpTest, ProdGradIsTheProductOfTheOthers) {
  Scope root = Scope::NewRootScope();
  // Rows with no zero, one zero and two zeros, reduced along axis 1; then columns.
  const Tensor x = Tensor::FromVector<float>({2, 3, 4, 5, 0, 7, 0, 1, 0}, {3, 3});
  auto rows = ops::ProdGrad(root, x, Tensor::FromVector<float>({1, 2, 3}), 1);
  auto cols = ops::ProdGrad(root, x, Tensor::FromVector<float>({1, 1, 1}, {1, 3}), {0});
  auto all = ops::ProdGrad(root, Tensor::FromVector<double>({2, 3, 4}), Tensor::Scalar(1.0),
                           Tensor::FromVector<int64_t>({0}));
  auto bad = ops::ProdGrad(root.WithOpName("pg"), x, Tensor::FromVector<float>({1, 2}), 0);
  ClientSession s(root);
  auto out = s.Run({}, {rows, cols, all});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({12, 8, 6, 0, 70, 0, 0, 0, 0}, {3, 3}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({0, 0, 0, 0, 3, 0, 10, 0, 28}, {3, 3}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<double>({12, 8, 6}));
  out = s.Run({}, {bad});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("node pg: a tensor of shape [2] is not the reduction of shape [3,3]"));
}

TEST(ReductionGradOpTest, RejectsAGradientOfTheWrongSize) {
  Scope root = Scope::NewRootScope();
  auto g = ops::SumGrad(root.WithOpName("sg"), Tensor::FromVector<float>({1, 2, 3}), {2, 3}, 1);
  auto bad_axis =
      ops::MeanGrad(root.WithOpName("mg"), Tensor::FromVector<float>({1, 2}), {2, 3}, 2);
  ClientSession s(root);
  auto out = s.Run({}, {g});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node sg"));
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("is not the reduction of shape [2,3]"));
  out = s.Run({}, {bad_axis});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Invalid reduction axis 2"));
}

}  // namespace
}  // namespace tw
