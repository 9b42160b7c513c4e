// Static shapes of the array ops that move elements (src/graph/array_shape_fns.cc) as the
// builder infers them, and the nodes it refuses with TensorFlow's messages.
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops/array_ops.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

std::string ShapeOf(const Scope& scope, const Output& o) {
  std::optional<TensorShape> s = scope.InferredShape(o);
  return s ? s->DebugString() : "?";
}

Output Ph(const Scope& root, std::vector<int64_t> dims) {
  return ops::Placeholder(root, DT_FLOAT, {.shape = std::move(dims)});
}

// The message of the scope's error after `build` adds a failing node named "bad".
std::string Failure(const std::function<void(const Scope&)>& build) {
  Scope root = Scope::NewRootScope();
  build(root);
  return std::string(root.status().message());
}

TEST(ArrayShapeTest, TransposeTileBroadcastTo) {
  Scope root = Scope::NewRootScope();
  auto x = Ph(root, {-1, 3, 4});
  EXPECT_EQ(ShapeOf(root, ops::Transpose(root, x, {2, 0, 1})), "[4,?,3]");
  EXPECT_EQ(ShapeOf(root, ops::Transpose(root, x, ops::Placeholder(root, DT_INT32))), "[?,?,?]");
  EXPECT_EQ(ShapeOf(root, ops::Tile(root, x, {2, 2, 0})), "[?,6,0]");
  EXPECT_EQ(ShapeOf(root, ops::BroadcastTo(root, Ph(root, {3, 1}), {2, 3, 5})), "[2,3,5]");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_THAT(Failure([](const Scope& s) {
                ops::Transpose(s.WithOpName("bad"), Ph(s, {2, 3}), {0, 1, 2});
              }),
              HasSubstr("Dimension must be 2 but is 3 for 'bad' (op: 'Transpose')"));
  EXPECT_THAT(Failure([](const Scope& s) {
                ops::Tile(s.WithOpName("bad"), Ph(s, {2, 3}), {2});
              }),
              HasSubstr("Shape must be rank 2 but is rank 1 for 'bad' (op: 'Tile')"));
  EXPECT_THAT(Failure([](const Scope& s) {
                ops::BroadcastTo(s.WithOpName("bad"), Ph(s, {2, 3}), {4, 3});
              }),
              HasSubstr("Incompatible shapes: [2,3] vs. [4,3] for 'bad'"));
}

TEST(ArrayShapeTest, ExpandDimsAndSqueeze) {
  Scope root = Scope::NewRootScope();
  auto x = Ph(root, {2, 1, -1});
  EXPECT_EQ(ShapeOf(root, ops::ExpandDims(root, x, 0)), "[1,2,1,?]");
  EXPECT_EQ(ShapeOf(root, ops::ExpandDims(root, x, -1)), "[2,1,?,1]");
  EXPECT_EQ(ShapeOf(root, ops::Squeeze(root, x, {1})), "[2,?]");
  EXPECT_EQ(ShapeOf(root, ops::Squeeze(root, x)), "?");  // is the ? a 1?
  EXPECT_EQ(ShapeOf(root, ops::Squeeze(root, Ph(root, {1, 3, 1}))), "[3]");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_THAT(Failure([](const Scope& s) { ops::ExpandDims(s.WithOpName("bad"), Ph(s, {2}), 3); }),
              HasSubstr("dim 3 not in the interval [-2, 1]."));
  EXPECT_THAT(Failure([](const Scope& s) {
                ops::Squeeze(s.WithOpName("bad"), Ph(s, {2, 3}), {0});
              }),
              HasSubstr("Can not squeeze dim[0], expected a dimension of 1, got 2"));
  EXPECT_THAT(Failure([](const Scope& s) {
                ops::Squeeze(s.WithOpName("bad"), Ph(s, {2, 3}), {2});
              }),
              HasSubstr("Tried to squeeze dim index 2 for tensor with 2 dimensions."));
}

TEST(ArrayShapeTest, Range) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(ShapeOf(root, ops::Range(root, 0, 10, 3)), "[4]");
  EXPECT_EQ(ShapeOf(root, ops::Range(root, 1.0f, 0.0f, -0.25f)), "[4]");
  EXPECT_EQ(ShapeOf(root, ops::Range(root, 0, ops::Placeholder(root, DT_INT32), 1)), "[?]");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_THAT(Failure([](const Scope& s) { ops::Range(s.WithOpName("bad"), 0, 10, 0); }),
              HasSubstr("Requires delta != 0"));
}

TEST(ArrayShapeTest, SplitOneHotReverseCumsum) {
  Scope root = Scope::NewRootScope();
  auto x = Ph(root, {2, 6, -1});
  auto pieces = ops::Split(root, 1, x, 3);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(ShapeOf(root, pieces[2]), "[2,2,?]");
  auto v = ops::SplitV(root, x, Tensor::FromVector<int64_t>({1, -1}), -2, 2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(ShapeOf(root, v[0]), "[2,1,?]");
  EXPECT_EQ(ShapeOf(root, v[1]), "[2,5,?]");
  auto indices = ops::Placeholder(root, DT_INT32, {.shape = std::vector<int64_t>{4, -1}});
  EXPECT_EQ(ShapeOf(root, ops::OneHot(root, indices, 3, 1.0f, 0.0f)), "[4,?,3]");
  EXPECT_EQ(ShapeOf(root, ops::OneHot(root, indices, 3, 1.0f, 0.0f, 1)), "[4,3,?]");
  EXPECT_EQ(ShapeOf(root, ops::ReverseV2(root, x, {0})), "[2,6,?]");
  EXPECT_EQ(ShapeOf(root, ops::Cumsum(root, x, 0)), "[2,6,?]");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_THAT(Failure([](const Scope& s) {
                ops::Split(s.WithOpName("bad"), 1, Ph(s, {2, 5}), 2);
              }),
              HasSubstr("Dimension size must be evenly divisible by 2 but is 5"));
  EXPECT_THAT(Failure([](const Scope& s) {
                ops::Split(s.WithOpName("bad"), 2, Ph(s, {2, 5}), 2);
              }),
              HasSubstr("-input rank(-2) <= split_dim < input rank (2), but got 2"));
}

TEST(ArrayShapeTest, MirrorPad) {
  Scope root = Scope::NewRootScope();
  auto x = Ph(root, {3, -1});
  const Tensor paddings = Tensor::FromVector<int32_t>({1, 2, 0, 1}, {2, 2});
  EXPECT_EQ(ShapeOf(root, ops::MirrorPad(root, x, paddings, "REFLECT")), "[6,?]");
  EXPECT_EQ(ShapeOf(root, ops::MirrorPadGrad(root, Ph(root, {6, 4}), paddings, "REFLECT")),
            "[3,3]");
  ASSERT_TRUE(root.ok()) << root.status();
}

}  // namespace
}  // namespace tw
