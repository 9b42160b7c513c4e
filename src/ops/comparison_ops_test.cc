// LessEqual, GreaterEqual, NotEqual, the logical ops and Where: values with broadcasting,
// NaN, strings, empty and scalar inputs, and types outside the ops' lists.
#include <cmath>
#include <limits>
#include <map>
#include <string>

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

// A comparison with T = dtype of x, a logical op (bool inputs, no type attribute), Where:
// the first output or the error.
StatusOr<Tensor> RunCompare(const std::string& op, const Tensor& x, const Tensor& y) {
  return testing::RunFirstOutput(op, {x, y});
}
StatusOr<Tensor> RunLogical(const std::string& op, const std::vector<Tensor>& inputs) {
  return testing::RunFirstOutput(op, inputs, /*type_attr=*/"");
}
StatusOr<Tensor> RunWhere(const Tensor& input) { return testing::RunFirstOutput("Where", {input}); }

// ---- Comparisons ----

TEST(ComparisonOpTest, LessEqualGreaterEqualNotEqualBroadcast) {
  const Tensor x = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = Tensor::FromVector<int32_t>({2, 2, 7});
  auto le = RunCompare("LessEqual", x, y);
  auto ge = RunCompare("GreaterEqual", x, y);
  auto ne = RunCompare("NotEqual", x, y);
  ASSERT_TRUE(le.ok() && ge.ok() && ne.ok()) << le.status() << ge.status() << ne.status();
  EXPECT_EQ(*le, Tensor::FromVector<bool>({true, true, true, false, false, true}, {2, 3}));
  EXPECT_EQ(*ge, Tensor::FromVector<bool>({false, true, false, true, true, false}, {2, 3}));
  EXPECT_EQ(*ne, Tensor::FromVector<bool>({true, false, true, true, true, true}, {2, 3}));
  // A scalar on the left, in int64 and double.
  auto s = RunCompare("GreaterEqual", Tensor::Scalar<int64_t>(3),
                      Tensor::FromVector<int64_t>({2, 3, 4}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Tensor::FromVector<bool>({true, true, false}));
  auto d = RunCompare("LessEqual", Tensor::FromVector<double>({0.5, -1}, {2, 1}),
                      Tensor::FromVector<double>({-1, 0.5}, {1, 2}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, Tensor::FromVector<bool>({false, true, true, true}, {2, 2}));
}

TEST(ComparisonOpTest, NaNComparesUnequalToEverything) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::FromVector<float>({nan, 1, nan});
  const Tensor y = Tensor::FromVector<float>({nan, 1, 0});
  auto le = RunCompare("LessEqual", x, y);
  auto ge = RunCompare("GreaterEqual", x, y);
  auto ne = RunCompare("NotEqual", x, y);
  ASSERT_TRUE(le.ok() && ge.ok() && ne.ok());
  EXPECT_EQ(*le, Tensor::FromVector<bool>({false, true, false}));
  EXPECT_EQ(*ge, Tensor::FromVector<bool>({false, true, false}));
  EXPECT_EQ(*ne, Tensor::FromVector<bool>({true, false, true}));
}

TEST(ComparisonOpTest, NotEqualOnStringsAndBools) {
  auto s = RunCompare("NotEqual", Tensor::FromVector<std::string>({"a", "bc", ""}),
                      Tensor::Scalar<std::string>("bc"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Tensor::FromVector<bool>({true, false, true}));
  auto b = RunCompare("NotEqual", Tensor::FromVector<bool>({true, false}),
                      Tensor::FromVector<bool>({true, true}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, Tensor::FromVector<bool>({false, true}));
}

TEST(ComparisonOpTest, OrderingsRejectStringsAndBools) {
  for (const std::string op : {"LessEqual", "GreaterEqual"}) {
    auto s = RunCompare(op, Tensor::Scalar<std::string>("a"), Tensor::Scalar<std::string>("b"));
    EXPECT_TRUE(IsInvalidArgument(s.status())) << op << ": " << s.status();
    EXPECT_THAT(std::string(s.status().message()),
                HasSubstr("(op " + op + ") is string, not one of float, double, int32, int64"));
    auto b = RunCompare(op, Tensor::Scalar(true), Tensor::Scalar(false));
    EXPECT_TRUE(IsInvalidArgument(b.status())) << op << ": " << b.status();
    EXPECT_THAT(std::string(b.status().message()), HasSubstr("(op " + op + ") is bool"));
  }
}

TEST(ComparisonOpTest, IncompatibleShapesNameTheNode) {
  auto z = RunCompare("NotEqual", Tensor(DT_INT32, TensorShape({2})),
                      Tensor(DT_INT32, TensorShape({3})));
  EXPECT_TRUE(IsInvalidArgument(z.status()));
  EXPECT_EQ(z.status().message(), "node node_NotEqual: Incompatible shapes: [2] vs. [3]");
}

// ---- Logical ops ----

TEST(LogicalOpTest, AndOrBroadcast) {
  const Tensor x = Tensor::FromVector<bool>({true, true, false, false}, {2, 2});
  const Tensor y = Tensor::FromVector<bool>({true, false});
  auto a = RunLogical("LogicalAnd", {x, y});
  auto o = RunLogical("LogicalOr", {x, y});
  ASSERT_TRUE(a.ok() && o.ok()) << a.status() << o.status();
  EXPECT_EQ(*a, Tensor::FromVector<bool>({true, false, false, false}, {2, 2}));
  EXPECT_EQ(*o, Tensor::FromVector<bool>({true, true, true, false}, {2, 2}));
  // A scalar on either side.
  auto t =
      RunLogical("LogicalAnd", {Tensor::Scalar(true), Tensor::FromVector<bool>({true, false})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, Tensor::FromVector<bool>({true, false}));
  auto f =
      RunLogical("LogicalOr", {Tensor::FromVector<bool>({true, false}), Tensor::Scalar(false)});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*f, Tensor::FromVector<bool>({true, false}));
  auto bad = RunLogical("LogicalOr",
                        {Tensor(DT_BOOL, TensorShape({2})), Tensor(DT_BOOL, TensorShape({3}))});
  EXPECT_TRUE(IsInvalidArgument(bad.status()));
  EXPECT_EQ(bad.status().message(), "node node_LogicalOr: Incompatible shapes: [2] vs. [3]");
}

TEST(LogicalOpTest, Not) {
  auto n = RunLogical("LogicalNot", {Tensor::FromVector<bool>({true, false, false}, {3, 1})});
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, Tensor::FromVector<bool>({false, true, true}, {3, 1}));
  auto empty = RunLogical("LogicalNot", {Tensor(DT_BOOL, TensorShape({0}))});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({0}));
}

TEST(LogicalOpTest, InputsMustBeBool) {
  KernelTest t;
  proto::NodeDef node = NodeBuilder("and", "LogicalAnd").NumInputs(2).node();
  auto kernel = KernelRegistry::Global().CreateKernel(node, t.device());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ((*kernel)->input_type(0), DT_BOOL);
  EXPECT_EQ((*kernel)->input_type(1), DT_BOOL);
  EXPECT_EQ((*kernel)->output_type(0), DT_BOOL);
  // A graph cannot feed them anything else.
  Scope root = Scope::NewRootScope();
  ops::LogicalAnd(root.WithOpName("bad_and"), Tensor::Scalar(1.0f), true);
  EXPECT_FALSE(root.ok());
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("node bad_and"));
  Scope other = Scope::NewRootScope();
  ops::LogicalNot(other.WithOpName("bad_not"), 1);
  EXPECT_FALSE(other.ok());
  EXPECT_THAT(std::string(other.status().message()), HasSubstr("node bad_not"));
}

// ---- Where ----

TEST(WhereOpTest, CoordinatesOfTrueElementsInRowMajorOrder) {
  auto w = RunWhere(Tensor::FromVector<bool>({true, false, true, false, false, true}, {2, 3}));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(*w, Tensor::FromVector<int64_t>({0, 0, 0, 2, 1, 2}, {3, 2}));
  // Rank 3, int32: elements 3 = (0,1,1) and 4 = (1,0,0) are nonzero.
  auto r3 = RunWhere(Tensor::FromVector<int32_t>({0, 0, 0, -2, 7, 0, 0, 0}, {2, 2, 2}));
  ASSERT_TRUE(r3.ok()) << r3.status();
  EXPECT_EQ(*r3, Tensor::FromVector<int64_t>({0, 1, 1, 1, 0, 0}, {2, 3}));
}

TEST(WhereOpTest, NumbersAreTrueWhenNonzero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto d = RunWhere(Tensor::FromVector<double>({0, 1.5, -0.0, nan, -2}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, Tensor::FromVector<int64_t>({1, 3, 4}, {3, 1}));
  auto f = RunWhere(Tensor::FromVector<float>({0, 0, 0.25f, 0}, {2, 2}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*f, Tensor::FromVector<int64_t>({1, 0}, {1, 2}));
  auto l = RunWhere(Tensor::FromVector<int64_t>({int64_t{1} << 40, 0}));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(*l, Tensor::FromVector<int64_t>({0}, {1, 1}));
}

TEST(WhereOpTest, NoTrueElementsScalarsAndEmptyInputs) {
  auto none = RunWhere(Tensor::FromVector<bool>({false, false, false, false}, {2, 2}));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->dtype(), DT_INT64);
  EXPECT_EQ(none->shape(), TensorShape({0, 2}));
  // A scalar has no coordinates: one row of none, or no row.
  auto yes = RunWhere(Tensor::Scalar(true));
  ASSERT_TRUE(yes.ok()) << yes.status();
  EXPECT_EQ(yes->shape(), TensorShape({1, 0}));
  auto no = RunWhere(Tensor::Scalar(0.0f));
  ASSERT_TRUE(no.ok()) << no.status();
  EXPECT_EQ(no->shape(), TensorShape({0, 0}));
  auto empty = RunWhere(Tensor(DT_INT32, TensorShape({0, 3})));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({0, 2}));
}

TEST(WhereOpTest, RejectsStrings) {
  auto s = RunWhere(Tensor::FromVector<std::string>({"a", ""}));
  EXPECT_TRUE(IsInvalidArgument(s.status())) << s.status();
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("(op Where) is string, not one of bool, float, double, int32, int64"));
}

// ---- Builders, through a session ----

TEST(ComparisonBuilderTest, BuildsAndRuns) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root.WithOpName("x"), Tensor::FromVector<float>({1, 5, 3, 8}, {2, 2}));
  auto big = ops::GreaterEqual(root.WithOpName("big"), x, 3.0f);
  auto not_five = ops::NotEqual(root.WithOpName("not_five"), x, 5.0f);
  auto both = ops::LogicalAnd(root.WithOpName("both"), big, not_five);
  auto either = ops::LogicalOr(root.WithOpName("either"), ops::LessEqual(root, x, 1.0f), both);
  auto neither = ops::LogicalNot(root.WithOpName("neither"), either);
  auto where = ops::Where(root.WithOpName("where"), both);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(big.type(), DT_BOOL);
  EXPECT_EQ(where.type(), DT_INT64);
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::map<std::string, proto::NodeDef> nodes;
  for (const auto& n : graph->node()) nodes[n.name()] = n;
  EXPECT_EQ(nodes["big"].attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_EQ(nodes["both"].attr().count("T"), 0u);
  EXPECT_EQ(nodes["where"].attr().at("T").type(), proto::DT_BOOL);

  ClientSession session(root);
  auto out = session.Run({}, {both, neither, where});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<bool>({false, false, true, true}, {2, 2}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<bool>({false, true, false, false}, {2, 2}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<int64_t>({1, 0, 1, 1}, {2, 2}));
}

}  // namespace
}  // namespace tw
