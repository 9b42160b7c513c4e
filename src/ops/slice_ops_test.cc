// Tests of Slice and Pad (slice_ops.cc): kernels against hand-computed values, every error
// path, and the builders.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ops/array_test_util.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/session.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using testing::FindNode;
using testing::Floats;
using ::testing::HasSubstr;
using testing::I32;
using testing::I64;
using testing::Iota;
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Strings;

// ---- Slice ----

NodeBuilder SliceNode(DataType t, DataType index = DT_INT32) {
  return NodeBuilder("s", "Slice").Attr("T", t).Attr("Index", index).NumInputs(3);
}

TEST(SliceOpTest, InnerBox) {
  // Iota({3, 4}) is 0..11 in rows of 4.
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({1, 1}), I32({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({5, 6, 9, 10}, {2, 2}));
}

TEST(SliceOpTest, SizeMinusOneTakesTheRest) {
  auto out = RunOne(SliceNode(DT_FLOAT, DT_INT64), {Iota({3, 4}), I64({1, 2}), I64({-1, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({6, 7, 10, 11}, {2, 2}));
}

TEST(SliceOpTest, WholeRowsShareTheBuffer) {
  Tensor in = Iota({4, 2});
  auto out = RunOne(SliceNode(DT_FLOAT), {in, I32({1, 0}), I32({2, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({2, 3, 4, 5}, {2, 2}));
  EXPECT_TRUE(out->SharesBufferWith(in));
}

TEST(SliceOpTest, ThreeDimensionalStrings) {
  // in[i][j][k] = "ijk" for shape [2,3,2]; take [0:2, 1:3, 1:2].
  Strings values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) values.push_back(std::to_string(i * 100 + j * 10 + k));
  auto out = RunOne(SliceNode(DT_STRING), {Tensor::FromVector<std::string>(values, {2, 3, 2}),
                                           I32({0, 1, 1}), I32({2, 2, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"11", "21", "111", "121"}, {2, 2, 1}));
}

TEST(SliceOpTest, MiddleDimensionWithWholeTrailingDimensions) {
  // Iota({2, 3, 2}): take [:, 1:2, :], a run of two contiguous elements per outer index.
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({2, 3, 2}), I32({0, 1, 0}), I32({-1, 1, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({2, 3, 8, 9}, {2, 1, 2}));
}

TEST(SliceOpTest, EmptyAndScalar) {
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({3, 1}), I32({0, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 2}));
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({1, 4}), I32({2, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 0}));
  out = RunOne(SliceNode(DT_INT32), {Tensor::Scalar<int32_t>(9), I32({}), I32({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::Scalar<int32_t>(9));
}

TEST(SliceOpTest, OutOfRangeIsInvalidArgument) {
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({0, 5}), I32({1, 1})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node s: Slice begin[1] = 5 is not in [0, 4] for input shape [3,4]");
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({-1, 0}), I32({1, 1})});
  EXPECT_EQ(Message(out), "node s: Slice begin[0] = -1 is not in [0, 3] for input shape [3,4]");
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({1, 0}), I32({3, 1})});
  EXPECT_EQ(Message(out),
            "node s: Slice size[0] = 3 is not -1 or in [0, 2] for begin[0] = 1 and input shape "
            "[3,4]");
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({0, 0}), I32({1, -2})});
  EXPECT_EQ(Message(out),
            "node s: Slice size[1] = -2 is not -1 or in [0, 4] for begin[1] = 0 and input shape "
            "[3,4]");
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

TEST(SliceOpTest, BeginAndSizeMustMatchTheRank) {
  auto out = RunOne(SliceNode(DT_FLOAT), {Iota({3, 4}), I32({0}), I32({1, 1})});
  EXPECT_EQ(Message(out),
            "node s: Slice of input shape [3,4] needs begin and size vectors of 2 elements, got "
            "shapes [1] and [2]");
  out = RunOne(SliceNode(DT_FLOAT), {Iota({3}), Tensor::Scalar<int32_t>(0), I32({1})});
  EXPECT_THAT(Message(out), HasSubstr("got shapes [] and [1]"));
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

TEST(PadOpTest, SurroundsWithZeros) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Pad(root, Tensor::FromVector<int32_t>({1, 2, 3, 4}, {2, 2}),
                    Tensor::FromVector<int64_t>({1, 0, 0, 1}, {2, 2}));
  auto bad = ops::Pad(root.WithOpName("bad"), Tensor::FromVector<float>({1, 2}),
                      Tensor::FromVector<int32_t>({-1, 0}, {1, 2}));
  ClientSession s(root);
  auto out = s.Run({}, {p});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({0, 0, 0, 1, 2, 0, 3, 4, 0}, {3, 3}));
  out = s.Run({}, {bad});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("node bad: Pad paddings must be >= 0"));
}

// ---- Builders ----

TEST(ArrayBuilderTest, SliceAndGatherWithInt64Indices) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto s = ops::Slice(root.WithOpName("s"), x, Tensor::FromVector<int64_t>({0, 1}),
                      Tensor::FromVector<int64_t>({-1, 2}));
  auto ga = ops::Gather(root.WithOpName("g"), s, Tensor::FromVector<int64_t>({1, 0}));
  auto g = root.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::NodeDef* sn = FindNode(*g, "s");
  ASSERT_NE(sn, nullptr);
  EXPECT_EQ(sn->input_size(), 3);
  EXPECT_EQ(sn->attr().at("Index").type(), proto::DT_INT64);
  const proto::NodeDef* gn = FindNode(*g, "g");
  ASSERT_NE(gn, nullptr);
  EXPECT_EQ(gn->input(0), "s");
  EXPECT_EQ(gn->attr().at("Tparams").type(), proto::DT_FLOAT);
  EXPECT_EQ(gn->attr().at("Tindices").type(), proto::DT_INT64);
  EXPECT_EQ(ga.type(), DT_FLOAT);
}

}  // namespace
}  // namespace tw
