#include "tensorweave/ops/math_ops.h"

#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::KernelTest;
using testing::NodeBuilder;

// A binary (unary) op with T = dtype of x; the first output or the error.
StatusOr<Tensor> RunBinary(const std::string& op, const Tensor& x, const Tensor& y) {
  return testing::RunFirstOutput(op, {x, y});
}
StatusOr<Tensor> RunUnary(const std::string& op, const Tensor& x) {
  return testing::RunFirstOutput(op, {x});
}

template <typename T>
void ExpectNear(const Tensor& got, const Tensor& want, double tol = 1e-6) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape()) << got.shape().DebugString();
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    EXPECT_NEAR(got.flat<T>()[i], want.flat<T>()[i], tol) << "element " << i;
  }
}

// ---- Broadcasting ----

TEST(BinaryOpTest, SameShape) {
  auto z = RunBinary("Add", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}),
                     Tensor::FromVector<float>({10, 20, 30, 40}, {2, 2}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<float>({11, 22, 33, 44}, {2, 2}));
}

TEST(BinaryOpTest, MatrixPlusRowVector) {
  auto z = RunBinary("Add", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                     Tensor::FromVector<float>({10, 20, 30}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<float>({11, 22, 33, 14, 25, 36}, {2, 3}));
  // And the other way round, for a non-commutative op.
  auto w = RunBinary("Sub", Tensor::FromVector<float>({10, 20, 30}),
                     Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(*w, Tensor::FromVector<float>({9, 18, 27, 6, 15, 24}, {2, 3}));
}

TEST(BinaryOpTest, ColumnTimesRowIsOuterProduct) {
  auto z = RunBinary("Mul", Tensor::FromVector<int32_t>({1, 2}, {2, 1}),
                     Tensor::FromVector<int32_t>({3, 4, 5}, {1, 3}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<int32_t>({3, 4, 5, 6, 8, 10}, {2, 3}));
}

TEST(BinaryOpTest, ScalarAndTensorEitherSide) {
  auto z = RunBinary("Sub", Tensor::Scalar<double>(10), Tensor::FromVector<double>({1, 2, 3}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<double>({9, 8, 7}));
  auto w = RunBinary("Sub", Tensor::FromVector<double>({1, 2, 3}), Tensor::Scalar<double>(10));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(*w, Tensor::FromVector<double>({-9, -8, -7}));
  auto s = RunBinary("Mul", Tensor::Scalar<int64_t>(6), Tensor::Scalar<int64_t>(7));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Tensor::Scalar<int64_t>(42));
}

TEST(BinaryOpTest, OneElementOfHigherRankRaisesTheRank) {
  // [1,1] + [3] is [1,3]: a single element, but it still contributes a dimension.
  auto z = RunBinary("Add", Tensor::FromVector<float>({1}, {1, 1}),
                     Tensor::FromVector<float>({1, 2, 3}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<float>({2, 3, 4}, {1, 3}));
}

TEST(BinaryOpTest, EmptyBroadcastsToEmpty) {
  auto z =
      RunBinary("Add", Tensor(DT_FLOAT, TensorShape({0, 3})), Tensor::FromVector<float>({1, 2, 3}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->shape(), TensorShape({0, 3}));
  auto w = RunBinary("Add", Tensor(DT_FLOAT, TensorShape({0})), Tensor::Scalar<float>(1));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->shape(), TensorShape({0}));
  // 0 is a size like any other: it does not broadcast against 2.
  auto bad =
      RunBinary("Add", Tensor(DT_FLOAT, TensorShape({0})), Tensor::FromVector<float>({1, 2}));
  EXPECT_TRUE(IsInvalidArgument(bad.status()));
}

TEST(BinaryOpTest, IncompatibleShapesNameTheNodeAndShapes) {
  auto z =
      RunBinary("Add", Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({4})));
  ASSERT_FALSE(z.ok());
  EXPECT_TRUE(IsInvalidArgument(z.status()));
  EXPECT_EQ(z.status().message(), "node node_Add: Incompatible shapes: [2,3] vs. [4]");
}

TEST(BinaryOpTest, GeneralBroadcastInTheMiddle) {
  // [2,1,2] * [3,1]: the output [2,3,2] needs the general (strided) path on both sides.
  auto z = RunBinary("Mul", Tensor::FromVector<int64_t>({1, 2, 3, 4}, {2, 1, 2}),
                     Tensor::FromVector<int64_t>({1, 10, 100}, {3, 1}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(
      *z, Tensor::FromVector<int64_t>({1, 2, 10, 20, 100, 200, 3, 4, 30, 40, 300, 400}, {2, 3, 2}));
}

TEST(BinaryOpTest, RankThreePlusVectorCollapses) {
  std::vector<float> x(24), want(24);
  for (int i = 0; i < 24; ++i) {
    x[i] = static_cast<float>(i);
    want[i] = static_cast<float>(i) + static_cast<float>(i % 4) * 100;
  }
  auto z = RunBinary("Add", Tensor::FromVector<float>(x, {2, 3, 4}),
                     Tensor::FromVector<float>({0, 100, 200, 300}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<float>(want, {2, 3, 4}));
}

// ---- Arithmetic ----

TEST(BinaryOpTest, DivFloatAndInteger) {
  auto f = RunBinary("Div", Tensor::FromVector<float>({1, -3}), Tensor::FromVector<float>({4, 2}));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, Tensor::FromVector<float>({0.25f, -1.5f}));
  // Integers truncate toward zero, and min / -1 wraps instead of trapping.
  const int32_t min = std::numeric_limits<int32_t>::min();
  auto i = RunBinary("Div", Tensor::FromVector<int32_t>({7, -7, min}),
                     Tensor::FromVector<int32_t>({2, 2, -1}));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(*i, Tensor::FromVector<int32_t>({3, -3, min}));
}

TEST(BinaryOpTest, IntegerDivisionByZeroIsAnError) {
  auto z = RunBinary("Div", Tensor::FromVector<int64_t>({1, 2}), Tensor::Scalar<int64_t>(0));
  EXPECT_TRUE(IsInvalidArgument(z.status()));
  EXPECT_THAT(std::string(z.status().message()),
              HasSubstr("node node_Div: Integer division by zero"));
  // Floats divide by zero to inf.
  auto f = RunBinary("Div", Tensor::Scalar<float>(1), Tensor::Scalar<float>(0));
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(std::isinf(f->scalar<float>()));
}

TEST(BinaryOpTest, IntegerOverflowWraps) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  auto z = RunBinary("Add", Tensor::Scalar<int32_t>(max), Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->scalar<int32_t>(), std::numeric_limits<int32_t>::min());
}

TEST(BinaryOpTest, MaximumMinimumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto mx = RunBinary("Maximum", Tensor::FromVector<float>({1, 5, nan, 2}),
                      Tensor::FromVector<float>({3, 4, 1, nan}));
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ(*mx, Tensor::FromVector<float>({3, 5, nan, nan}));
  auto mn = RunBinary("Minimum", Tensor::FromVector<int32_t>({1, 5}), Tensor::Scalar<int32_t>(3));
  ASSERT_TRUE(mn.ok());
  EXPECT_EQ(*mn, Tensor::FromVector<int32_t>({1, 3}));
}

// ---- Comparisons ----

TEST(ComparisonOpTest, ProduceBoolWithBroadcasting) {
  const Tensor x = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = Tensor::FromVector<int32_t>({2, 2, 7});
  auto eq = RunBinary("Equal", x, y);
  auto lt = RunBinary("Less", x, y);
  auto gt = RunBinary("Greater", x, y);
  ASSERT_TRUE(eq.ok() && lt.ok() && gt.ok());
  EXPECT_EQ(*eq, Tensor::FromVector<bool>({false, true, false, false, false, false}, {2, 3}));
  EXPECT_EQ(*lt, Tensor::FromVector<bool>({true, false, true, false, false, true}, {2, 3}));
  EXPECT_EQ(*gt, Tensor::FromVector<bool>({false, false, false, true, true, false}, {2, 3}));
}

TEST(ComparisonOpTest, EqualOnStrings) {
  auto eq = RunBinary("Equal", Tensor::FromVector<std::string>({"a", "bc", ""}),
                      Tensor::Scalar<std::string>("bc"));
  ASSERT_TRUE(eq.ok()) << eq.status();
  EXPECT_EQ(*eq, Tensor::FromVector<bool>({false, true, false}));
}

TEST(ComparisonOpTest, LessRejectsStrings) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("lt", "Less").Attr("T", DT_STRING).NumInputs(2),
                   {Tensor::Scalar<std::string>("a"), Tensor::Scalar<std::string>("b")});
  EXPECT_TRUE(IsInvalidArgument(out.status())) << out.status();
}

// ---- Unary ----

TEST(UnaryOpTest, NegAndSquare) {
  auto n = RunUnary("Neg", Tensor::FromVector<int64_t>({1, -2, 0}));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, Tensor::FromVector<int64_t>({-1, 2, 0}));
  auto s = RunUnary("Square", Tensor::FromVector<float>({1.5f, -3}, {1, 2}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, Tensor::FromVector<float>({2.25f, 9}, {1, 2}));
}

TEST(UnaryOpTest, SqrtExpLog) {
  auto s = RunUnary("Sqrt", Tensor::FromVector<double>({4, 2, 0}));
  ASSERT_TRUE(s.ok());
  ExpectNear<double>(*s, Tensor::FromVector<double>({2, std::sqrt(2.0), 0}), 1e-12);
  auto e = RunUnary("Exp", Tensor::FromVector<float>({0, 1, -1}));
  ASSERT_TRUE(e.ok());
  ExpectNear<float>(*e, Tensor::FromVector<float>({1, std::exp(1.0f), std::exp(-1.0f)}), 1e-6);
  auto l = RunUnary("Log", Tensor::FromVector<float>({1, std::exp(2.0f)}));
  ASSERT_TRUE(l.ok());
  ExpectNear<float>(*l, Tensor::FromVector<float>({0, 2}), 1e-6);
  auto empty = RunUnary("Exp", Tensor(DT_FLOAT, TensorShape({0, 2})));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->shape(), TensorShape({0, 2}));
}

TEST(UnaryOpTest, SqrtRejectsIntegers) {
  auto s = RunUnary("Sqrt", Tensor::Scalar<int32_t>(4));
  EXPECT_TRUE(IsInvalidArgument(s.status())) << s.status();
}

// ---- Select ----

StatusOr<Tensor> RunSelect(const Tensor& c, const Tensor& t, const Tensor& e) {
  KernelTest k;
  auto out = k.Run(NodeBuilder("sel", "Select").Attr("T", t.dtype()).NumInputs(3), {c, t, e});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(SelectOpTest, SameShapes) {
  auto z = RunSelect(Tensor::FromVector<bool>({true, false, true}),
                     Tensor::FromVector<float>({1, 2, 3}), Tensor::FromVector<float>({-1, -2, -3}));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<float>({1, -2, 3}));
}

TEST(SelectOpTest, BroadcastsAllThree) {
  // condition [2,1] picks rows; t [3] is a row; e is a scalar.
  auto z = RunSelect(Tensor::FromVector<bool>({true, false}, {2, 1}),
                     Tensor::FromVector<int32_t>({1, 2, 3}), Tensor::Scalar<int32_t>(0));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<int32_t>({1, 2, 3, 0, 0, 0}, {2, 3}));
  // A scalar condition picks a whole tensor.
  auto s = RunSelect(Tensor::Scalar<bool>(false), Tensor::FromVector<std::string>({"a", "b"}),
                     Tensor::FromVector<std::string>({"c", "d"}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Tensor::FromVector<std::string>({"c", "d"}));
}

TEST(SelectOpTest, IncompatibleShapes) {
  auto z = RunSelect(Tensor(DT_BOOL, TensorShape({2})), Tensor(DT_FLOAT, TensorShape({2, 3})),
                     Tensor(DT_FLOAT, TensorShape({3})));
  EXPECT_EQ(z.status().message(), "node sel: Incompatible shapes: [2] vs. [2,3] vs. [3]");
}

// ---- MatMul ----

StatusOr<Tensor> RunMatMul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  KernelTest t;
  auto out = t.Run(NodeBuilder("mm", "MatMul")
                       .Attr("T", a.dtype())
                       .Attr("transpose_a", ta)
                       .Attr("transpose_b", tb)
                       .NumInputs(2),
                   {a, b});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(MatMulOpTest, AllTransposeCombinations) {
  const Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor at = Tensor::FromVector<float>({1, 4, 2, 5, 3, 6}, {3, 2});
  const Tensor b = Tensor::FromVector<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  const Tensor bt = Tensor::FromVector<float>({7, 9, 11, 8, 10, 12}, {2, 3});
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  const Tensor want = Tensor::FromVector<float>({58, 64, 139, 154}, {2, 2});
  for (auto [x, y, ta, tb] : {std::tuple{a, b, false, false}, std::tuple{at, b, true, false},
                              std::tuple{a, bt, false, true}, std::tuple{at, bt, true, true}}) {
    auto z = RunMatMul(x, y, ta, tb);
    ASSERT_TRUE(z.ok()) << z.status();
    EXPECT_EQ(*z, want) << "transpose_a=" << ta << " transpose_b=" << tb;
  }
}

TEST(MatMulOpTest, IntegerTypes) {
  auto z = RunMatMul(Tensor::FromVector<int64_t>({1, 2, 3, 4}, {2, 2}),
                     Tensor::FromVector<int64_t>({5, 6}, {2, 1}), false, false);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<int64_t>({17, 39}, {2, 1}));
}

TEST(MatMulOpTest, EmptyInnerDimensionGivesZeros) {
  auto z = RunMatMul(Tensor(DT_DOUBLE, TensorShape({2, 0})), Tensor(DT_DOUBLE, TensorShape({0, 3})),
                     false, false);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, Tensor::FromVector<double>({0, 0, 0, 0, 0, 0}, {2, 3}));
  auto e = RunMatMul(Tensor(DT_FLOAT, TensorShape({0, 4})), Tensor(DT_FLOAT, TensorShape({4, 5})),
                     false, false);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->shape(), TensorShape({0, 5}));
}

TEST(MatMulOpTest, ShapeMismatchNamesShapes) {
  auto z = RunMatMul(Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({2, 3})),
                     false, false);
  EXPECT_TRUE(IsInvalidArgument(z.status()));
  EXPECT_EQ(z.status().message(),
            "node mm: Matrix size-incompatible: a [2,3] vs. b [2,3], inner dimensions 3 and 2");
  // Transposing b makes them fit.
  EXPECT_TRUE(RunMatMul(Tensor(DT_FLOAT, TensorShape({2, 3})),
                        Tensor(DT_FLOAT, TensorShape({2, 3})), false, true)
                  .ok());
}

TEST(MatMulOpTest, RejectsNonMatrices) {
  auto z = RunMatMul(Tensor(DT_FLOAT, TensorShape({3})), Tensor(DT_FLOAT, TensorShape({3, 1})),
                     false, false);
  EXPECT_TRUE(IsInvalidArgument(z.status()));
  EXPECT_THAT(std::string(z.status().message()), HasSubstr("MatMul needs matrices, got a [3]"));
}

TEST(MatMulOpTest, IsExpensive) {
  KernelTest t;
  proto::NodeDef node = NodeBuilder("mm", "MatMul").Attr("T", DT_FLOAT).NumInputs(2).node();
  auto kernel = KernelRegistry::Global().CreateKernel(node, t.device());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE((*kernel)->IsExpensive());
}

// ---- Builders ----

TEST(MathBuilderTest, InfersTypesAndAttrs) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root.WithOpName("x"), Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  auto y = ops::Add(root.WithOpName("y"), x, 1.0f);
  auto m = ops::MatMul(root.WithOpName("m"), y, x, {.transpose_b = true});
  auto c = ops::Less(root.WithOpName("c"), m, x);
  auto s = ops::Select(root.WithOpName("s"), c, m, ops::Neg(root, m));
  auto e = ops::Equal(root.WithOpName("e"), "a", "b");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(y.type(), DT_FLOAT);
  EXPECT_EQ(c.type(), DT_BOOL);
  EXPECT_EQ(s.type(), DT_FLOAT);
  EXPECT_EQ(e.type(), DT_BOOL);
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::map<std::string, proto::NodeDef> nodes;
  for (const auto& n : graph->node()) nodes[n.name()] = n;
  ASSERT_TRUE(nodes.count("y") && nodes.count("m") && nodes.count("s"));
  EXPECT_EQ(nodes["y"].op(), "Add");
  EXPECT_EQ(nodes["y"].attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_EQ(nodes["y"].input(0), "x");
  EXPECT_EQ(nodes["m"].op(), "MatMul");
  EXPECT_FALSE(nodes["m"].attr().at("transpose_a").b());
  EXPECT_TRUE(nodes["m"].attr().at("transpose_b").b());
  EXPECT_EQ(nodes["s"].op(), "Select");
  EXPECT_EQ(nodes["s"].input_size(), 3);
  EXPECT_EQ(nodes["e"].attr().at("T").type(), proto::DT_STRING);
}

TEST(MathBuilderTest, MismatchedTypesAreReported) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, Tensor::Scalar<float>(1));
  ops::Add(root.WithOpName("bad"), x, 1);  // an int32 literal
  EXPECT_FALSE(root.ok());
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("node bad"));
  Scope other = Scope::NewRootScope();
  ops::Sqrt(other, 4);  // Sqrt has no int32 kernel
  EXPECT_FALSE(other.ok());
}

// ---- AddN and BroadcastGradientArgs (helper ops of the gradients) ----

TEST(AddNOpTest, SumsAnyNumberOfInputs) {
  Scope root = Scope::NewRootScope();
  auto one = ops::AddN(root, {Tensor::FromVector<float>({1, 2})});
  auto three =
      ops::AddN(root, {Tensor::FromVector<float>({1, 2}), Tensor::FromVector<float>({10, 20}),
                       Tensor::FromVector<float>({100, 200})});
  auto ints = ops::AddN(root, {Tensor::FromVector<int32_t>({1}), Tensor::FromVector<int32_t>({2})});
  ClientSession s(root);
  auto out = s.Run({}, {one, three, ints});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({1, 2}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({111, 222}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<int32_t>({3}));
}

TEST(AddNOpTest, RejectsShapesThatDiffer) {
  // Shapes known when building: the builder refuses the node.
  Scope built = Scope::NewRootScope();
  ops::AddN(built.WithOpName("sum"),
            {Tensor::FromVector<float>({1, 2}), Tensor::FromVector<float>({1, 2, 3})});
  EXPECT_THAT(std::string(built.status().message()),
              HasSubstr("node sum: Dimensions must be equal, but are 2 and 3 for 'sum' (op: "
                        "'AddN') with input shapes: [2], [3]."));
  // Shapes known only when the step runs: the kernel refuses them.
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root, DT_FLOAT);
  auto b = ops::Placeholder(root, DT_FLOAT);
  auto sum = ops::AddN(root.WithOpName("sum"), {a, b});
  ClientSession s(root);
  auto out = s.Run(
      {{a, Tensor::FromVector<float>({1, 2})}, {b, Tensor::FromVector<float>({1, 2, 3})}}, {sum});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node sum"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("inputs[1] is [3]"));
}

TEST(BroadcastGradientArgsOpTest, AxesEachInputWasStretchedAlong) {
  Scope root = Scope::NewRootScope();
  auto a = ops::BroadcastGradientArgs(root, {2, 3}, {3});
  auto b = ops::BroadcastGradientArgs(root, {3, 1}, {1, 4});
  auto c = ops::BroadcastGradientArgs(root, Tensor::FromVector<int64_t>({}),
                                      Tensor::FromVector<int64_t>({2, 1}));
  ClientSession s(root);
  auto out = s.Run({}, {a.r0, a.r1, b.r0, b.r1, c.r0, c.r1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int32_t>({0}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<int32_t>({1}));
  EXPECT_EQ((*out)[3], Tensor::FromVector<int32_t>({0}));
  EXPECT_EQ((*out)[4], Tensor::FromVector<int64_t>({0}));  // dimension 1 is 1 in both
  EXPECT_EQ((*out)[5], Tensor::FromVector<int64_t>({}));
}

TEST(BroadcastGradientArgsOpTest, RejectsIncompatibleShapes) {
  Scope root = Scope::NewRootScope();
  auto r = ops::BroadcastGradientArgs(root.WithOpName("bga"), {2, 3}, {2});
  ClientSession s(root);
  auto out = s.Run({}, {r.r0});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node bga"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Incompatible shapes: [2,3] vs. [2]"));
}

}  // namespace
}  // namespace tw
