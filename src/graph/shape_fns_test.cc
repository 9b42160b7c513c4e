// Static shapes as the builder infers them (Scope::InferredShape), and the nodes it refuses.
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

proto::AttrValue MakeAttrForTest(DataType t) {
  proto::AttrValue v;
  v.set_type(static_cast<proto::DataType>(t));
  return v;
}
proto::AttrValue MakeShapeAttrForTest(std::vector<int64_t> dims) {
  proto::AttrValue v;
  for (int64_t d : dims) v.mutable_shape()->add_dim(d);
  return v;
}

std::string ShapeOf(const Scope& scope, const Output& o) {
  std::optional<TensorShape> s = scope.InferredShape(o);
  return s ? s->DebugString() : "?";
}

TEST(ShapeFnsTest, ElementWiseOpsBroadcast) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 3}});
  auto row = ops::Const(root, Tensor::FromVector<float>({1, 2, 3}));
  auto col = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{4, 1}});
  EXPECT_EQ(ShapeOf(root, ops::Add(root, x, row)), "[?,3]");
  EXPECT_EQ(ShapeOf(root, ops::Mul(root, row, col)), "[4,3]");
  EXPECT_EQ(ShapeOf(root, ops::Less(root, x, 1.0f)), "[?,3]");
  EXPECT_EQ(ShapeOf(root, ops::Relu(root, x)), "[?,3]");
  auto unknown = ops::Placeholder(root, DT_FLOAT);
  EXPECT_EQ(ShapeOf(root, ops::Add(root, x, unknown)), "?");
  ASSERT_TRUE(root.ok());
  ops::Add(root.WithOpName("add"), row, Tensor::FromVector<float>({1, 2}));
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("node add: Dimensions must be equal, but are 3 and 2 for 'add' (op: "
                        "'Add') with input shapes: [3], [2]."));
}

TEST(ShapeFnsTest, SelectKnowsWhatEitherBranchKnows) {
  Scope root = Scope::NewRootScope();
  auto flag = ops::Placeholder(root, DT_BOOL, {.shape = std::vector<int64_t>{}});
  auto known = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{100, -1}});
  auto wide = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 20}});
  auto unknown = ops::Placeholder(root, DT_FLOAT);
  EXPECT_EQ(ShapeOf(root, ops::Select(root, flag, unknown, known)), "[100,?]");
  EXPECT_EQ(ShapeOf(root, ops::Select(root, flag, known, unknown)), "[100,?]");
  EXPECT_EQ(ShapeOf(root, ops::Select(root, flag, known, wide)), "[100,20]");
  ASSERT_TRUE(root.ok()) << root.status();
  auto narrow = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{100, 3}});
  ops::Select(root.WithOpName("pick"), flag, wide, narrow);
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("Dimension 1 in both shapes must be equal, but are 20 and 3"));
}

TEST(ShapeFnsTest, MatMulChecksTheInnerDimensions) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 784}});
  auto w = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{784, 10}});
  EXPECT_EQ(ShapeOf(root, ops::MatMul(root, a, w)), "[?,10]");
  EXPECT_EQ(ShapeOf(root, ops::MatMul(root, w, w, {.transpose_a = true})), "[10,10]");
  auto b = ops::BiasAdd(root, ops::MatMul(root, a, w),
                        Tensor::FromVector<float>(std::vector<float>(10, 0.0f)));
  EXPECT_EQ(ShapeOf(root, b), "[?,10]");
  ASSERT_TRUE(root.ok());
  ops::MatMul(root.WithOpName("mm"), w, w);
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("Dimensions must be equal, but are 10 and 784 for 'mm' (op: 'MatMul')"));
}

TEST(ShapeFnsTest, ConstantInputsGiveReshapesReductionsAndFills) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{2, 3, 4}});
  EXPECT_EQ(ShapeOf(root, ops::Reshape(root, x, {6, -1})), "[6,4]");
  EXPECT_EQ(ShapeOf(root, ops::Reshape(root, x, {-1})), "[24]");
  EXPECT_EQ(ShapeOf(root, ops::Sum(root, x, {1})), "[2,4]");
  EXPECT_EQ(ShapeOf(root, ops::Sum(root, x, {-1, 0}, {.keep_dims = true})), "[1,3,1]");
  EXPECT_EQ(ShapeOf(root, ops::ArgMax(root, x, 2)), "[2,3]");
  EXPECT_EQ(ShapeOf(root, ops::Fill(root, {5, 2}, 1.0f)), "[5,2]");
  EXPECT_EQ(ShapeOf(root, ops::Shape(root, x)), "[3]");
  EXPECT_EQ(ShapeOf(root, ops::Concat(root, {x, x}, 1)), "[2,6,4]");
  EXPECT_EQ(ShapeOf(root, ops::Pack(root, {x, x, x})), "[3,2,3,4]");
  auto indices = ops::Placeholder(root, DT_INT32, {.shape = std::vector<int64_t>{7}});
  EXPECT_EQ(ShapeOf(root, ops::Gather(root, x, indices)), "[7,3,4]");
  EXPECT_EQ(ShapeOf(root, ops::Slice(root, x, {1, 0, 1}, {1, -1, 2})), "[1,3,2]");
  auto fed = ops::Placeholder(root, DT_INT32);  // not a constant: the shape is unknown
  EXPECT_EQ(ShapeOf(root, ops::Reshape(root, x, fed)), "?");
  // The shape of another tensor, read as TF's constant_value_as_shape does: what a
  // gradient's Reshape(sum, Shape(x)) knows of x, unknown dimensions included.
  auto partial = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 3}});
  EXPECT_EQ(ShapeOf(root, ops::Reshape(root, fed, ops::Shape(root, partial))), "[?,3]");
  EXPECT_EQ(ShapeOf(root, ops::Reshape(root, fed, ops::Shape(root, fed))), "?");
  auto wide = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 6}});
  EXPECT_EQ(ShapeOf(root, ops::Slice(root, wide, fed, ops::Shape(root, partial))), "[?,3]");
  ASSERT_TRUE(root.ok());
  ops::Reshape(root.WithOpName("r"), x, {5, -1});
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("Cannot reshape a tensor with 24 elements to shape [5,?]"));
}

TEST(ShapeFnsTest, VariablesAndQueuesGiveTheShapesTheyWereDeclaredWith) {
  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root, "v", DT_FLOAT, {3, 2});
  EXPECT_EQ(ShapeOf(root, ops::ReadVariable(root, v)), "[3,2]");
  auto q = ops::FIFOQueue(root, {DT_INT32, DT_STRING}, {.shapes = {{2}, {}}});
  auto one = ops::QueueDequeue(root, q);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(ShapeOf(root, one[0]), "[2]");
  EXPECT_EQ(ShapeOf(root, one[1]), "[]");
  auto many = ops::QueueDequeueMany(root, q, 5);
  EXPECT_EQ(ShapeOf(root, many[0]), "[5,2]");
  auto up_to = ops::QueueDequeueUpTo(root, q, 5);
  EXPECT_EQ(ShapeOf(root, up_to[1]), "[?]");
  EXPECT_TRUE(root.ok()) << root.status();
}

TEST(ShapeFnsTest, PlaceholderWithDefaultHasItsDeclaredShape) {
  Scope root = Scope::NewRootScope();
  auto fallback = ops::Const(root, Tensor::FromVector<float>({1, 2}));
  auto p = root.AddNodeOutput(
      "PlaceholderWithDefault", {{fallback}},
      {{"dtype", MakeAttrForTest(DT_FLOAT)}, {"shape", MakeShapeAttrForTest({-1})}});
  EXPECT_EQ(ShapeOf(root, p), "[?]");
  ASSERT_TRUE(root.ok());
  root.WithOpName("bad").AddNodeOutput(
      "PlaceholderWithDefault", {{fallback}},
      {{"dtype", MakeAttrForTest(DT_FLOAT)}, {"shape", MakeShapeAttrForTest({3})}});
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("The default's shape [2] is not compatible with the declared shape [3]"));
}

TEST(ShapeFnsTest, LossesKeepTheBatch) {
  Scope root = Scope::NewRootScope();
  auto logits = ops::Placeholder(root, DT_FLOAT, {.shape = std::vector<int64_t>{-1, 10}});
  auto labels = ops::Placeholder(root, DT_INT64, {.shape = std::vector<int64_t>{32}});
  auto loss = ops::SparseSoftmaxCrossEntropyWithLogits(root, logits, labels);
  EXPECT_EQ(ShapeOf(root, loss.loss), "[32]");
  EXPECT_EQ(ShapeOf(root, loss.backprop), "[?,10]");
}

TEST(ShapeFnsTest, UniqueNeedsAVector) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_INT64, {.shape = std::vector<int64_t>{5}});
  auto u = ops::Unique(root, x);
  EXPECT_EQ(ShapeOf(root, u.y), "[?]");
  EXPECT_EQ(ShapeOf(root, u.idx), "[5]");
  auto unknown = ops::Unique(root, ops::Placeholder(root, DT_FLOAT));
  EXPECT_EQ(ShapeOf(root, unknown.idx), "[?]");
  ASSERT_TRUE(root.ok()) << root.status();
  auto bad = ops::Unique(root.WithOpName("u"), Tensor::FromVector<int32_t>({1, 2, 3, 4}, {2, 2}));
  EXPECT_FALSE(bad.y.op().valid());
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("Shape must be rank 1 but is rank 2 for 'u' (op: 'Unique')"));
}

}  // namespace
}  // namespace tw
