// Tests of Concat, Pack, ConcatOffset and Unpack (concat_ops.cc): kernels against hand-computed
// values, every error path, and the builders.
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
using testing::Vec;

// ---- Concat ----

NodeBuilder ConcatNode(int n, DataType t, DataType tidx = DT_INT32) {
  return NodeBuilder("c", "Concat").Attr("N", n).Attr("T", t).Attr("Tidx", tidx).NumInputs(n + 1);
}

TEST(ConcatOpTest, AlongAxis0) {
  auto out = RunOne(ConcatNode(2, DT_FLOAT),
                    {Floats({1, 2}, {1, 2}), Floats({3, 4, 5, 6}, {2, 2}), Tensor::Scalar(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 2, 3, 4, 5, 6}, {3, 2}));
}

TEST(ConcatOpTest, AlongInnerAxisAndNegativeAxis) {
  const std::vector<Tensor> values = {Floats({1, 2}, {2, 1}), Floats({3, 4, 5, 6}, {2, 2})};
  const Tensor expected = Floats({1, 3, 4, 2, 5, 6}, {2, 3});
  auto out = RunOne(ConcatNode(2, DT_FLOAT), {values[0], values[1], Tensor::Scalar(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, expected);
  out = RunOne(ConcatNode(2, DT_FLOAT, DT_INT64),
               {values[0], values[1], Tensor::Scalar<int64_t>(-1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, expected);
}

TEST(ConcatOpTest, ThreeStringInputsInTheMiddleAxis) {
  // [1,2,1] + [1,1,1] + [1,0,1] along axis 1.
  auto out = RunOne(ConcatNode(3, DT_STRING),
                    {Tensor::FromVector<std::string>({"a", "b"}, {1, 2, 1}),
                     Tensor::FromVector<std::string>({"c"}, {1, 1, 1}),
                     Tensor::FromVector<std::string>({}, {1, 0, 1}), Tensor::Scalar(-2)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"a", "b", "c"}, {1, 3, 1}));
}

TEST(ConcatOpTest, EmptyOutputs) {
  auto out =
      RunOne(ConcatNode(2, DT_INT32), {Tensor::FromVector<int32_t>({}, {0, 2}),
                                       Tensor::FromVector<int32_t>({}, {0, 3}), Tensor::Scalar(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 5}));
  out = RunOne(ConcatNode(2, DT_INT32), {I32({}), I32({}), Tensor::Scalar(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0}));
}

TEST(ConcatOpTest, OneInputSharesTheBuffer) {
  Tensor in = Iota({2, 2});
  auto out = RunOne(ConcatNode(1, DT_FLOAT), {in, Tensor::Scalar(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(in));
}

TEST(ConcatOpTest, MismatchesNameTheInput) {
  auto out =
      RunOne(ConcatNode(3, DT_FLOAT), {Iota({2, 2}), Iota({2, 2}), Iota({2}), Tensor::Scalar(0)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out),
            "node c: Concat along axis 0: values[2] has shape [2], incompatible with values[0] "
            "of shape [2,2]");
  out = RunOne(ConcatNode(2, DT_FLOAT), {Iota({2, 2}), Iota({3, 2}), Tensor::Scalar(1)});
  EXPECT_EQ(Message(out),
            "node c: Concat along axis 1: values[1] has shape [3,2], incompatible with values[0] "
            "of shape [2,2]");
}

TEST(ConcatOpTest, BadAxesAndScalars) {
  auto out = RunOne(ConcatNode(2, DT_FLOAT), {Iota({2, 2}), Iota({2, 2}), Tensor::Scalar(2)});
  EXPECT_EQ(Message(out), "node c: Concat axis 2 is not in [-2, 2) for inputs of rank 2");
  out = RunOne(ConcatNode(2, DT_FLOAT), {Iota({2, 2}), Iota({2, 2}), Tensor::Scalar(-3)});
  EXPECT_EQ(Message(out), "node c: Concat axis -3 is not in [-2, 2) for inputs of rank 2");
  out = RunOne(ConcatNode(2, DT_FLOAT), {Iota({2, 2}), Iota({2, 2}), I32({0})});
  EXPECT_EQ(Message(out), "node c: Concat axis must be a scalar, got shape [1]");
  out = RunOne(ConcatNode(2, DT_FLOAT),
               {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2), Tensor::Scalar(0)});
  EXPECT_EQ(Message(out),
            "node c: Concat of scalars (values[0] has shape []); use Pack to join scalars");
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

// ---- Pack ----

NodeBuilder PackNode(int n, DataType t, int axis = 0) {
  return NodeBuilder("p", "Pack").Attr("N", n).Attr("T", t).Attr("axis", axis).NumInputs(n);
}

TEST(PackOpTest, ScalarsMakeAVector) {
  auto out = RunOne(PackNode(3, DT_INT64), {Tensor::Scalar<int64_t>(1), Tensor::Scalar<int64_t>(2),
                                            Tensor::Scalar<int64_t>(3)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I64({1, 2, 3}));
}

TEST(PackOpTest, AxesZeroOneAndNegative) {
  const std::vector<Tensor> v = {Vec<float>({1, 2}), Vec<float>({3, 4}), Vec<float>({5, 6})};
  auto out = RunOne(PackNode(3, DT_FLOAT, 0), v);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 2, 3, 4, 5, 6}, {3, 2}));
  out = RunOne(PackNode(3, DT_FLOAT, 1), v);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 3, 5, 2, 4, 6}, {2, 3}));
  out = RunOne(PackNode(3, DT_FLOAT, -1), v);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 3, 5, 2, 4, 6}, {2, 3}));
  out = RunOne(PackNode(3, DT_FLOAT, -2), v);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 2, 3, 4, 5, 6}, {3, 2}));
}

TEST(PackOpTest, StringsInTheMiddleAxis) {
  // Two [2,1,2] tensors packed at axis 1 give [2,2,1,2].
  auto out = RunOne(PackNode(2, DT_STRING, 1),
                    {Tensor::FromVector<std::string>({"a", "b", "c", "d"}, {2, 1, 2}),
                     Tensor::FromVector<std::string>({"e", "f", "g", "h"}, {2, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"a", "b", "e", "f", "c", "d", "g", "h"},
                                                  {2, 2, 1, 2}));
}

TEST(PackOpTest, EmptyInputsAndOneInput) {
  auto out = RunOne(PackNode(2, DT_BOOL, 1),
                    {Tensor::FromVector<bool>({}, {0}), Tensor::FromVector<bool>({}, {0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 2}));
  out = RunOne(PackNode(1, DT_FLOAT), {Vec<float>({1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Floats({1, 2}, {1, 2}));
}

TEST(PackOpTest, ErrorsNameTheInputAndTheAxis) {
  auto out =
      RunOne(PackNode(3, DT_FLOAT), {Vec<float>({1, 2}), Vec<float>({3, 4}), Vec<float>({5})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node p: Pack: values[2] has shape [1], values[0] has shape [2]");
  out = RunOne(PackNode(2, DT_FLOAT, 2), {Vec<float>({1}), Vec<float>({2})});
  EXPECT_EQ(Message(out), "node p: Pack axis 2 is not in [-2, 2) for inputs of shape [1]");
  out = RunOne(PackNode(2, DT_FLOAT, -3), {Vec<float>({1}), Vec<float>({2})});
  EXPECT_EQ(Message(out), "node p: Pack axis -3 is not in [-2, 2) for inputs of shape [1]");
  EXPECT_TRUE(IsInvalidArgument(out.status()));
}

TEST(PackOpTest, NMustBePositive) {
  auto out = RunOne(PackNode(0, DT_FLOAT), {});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "attribute \"N\" of node \"p\" is 0, below the minimum 1");
}

TEST(ConcatOffsetOpTest, WhereEachPieceStarts) {
  Scope root = Scope::NewRootScope();
  auto offsets = ops::ConcatOffset(root, 1, {Input({2, 3}), Input({2, 1}), Input({2, 4})});
  ASSERT_EQ(offsets.size(), 3u);
  auto bad = ops::ConcatOffset(root.WithOpName("bad"), 0, {Input({2, 3}), Input({1, 2})});
  ClientSession s(root);
  auto out = s.Run({}, offsets);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], I32({0, 0}));
  EXPECT_EQ((*out)[1], I32({0, 3}));
  EXPECT_EQ((*out)[2], I32({0, 4}));
  out = s.Run({}, {bad[0]});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("shape[1] = [1,2] does not match"));
}

TEST(UnpackOpTest, SplitsAlongAnAxis) {
  Scope root = Scope::NewRootScope();
  auto rows = ops::Unpack(root, Iota({2, 3}), 2, 0);
  auto cols = ops::Unpack(root, Iota({2, 3}), 3, -1);
  auto bad = ops::Unpack(root.WithOpName("bad"), Iota({2, 3}), 2, 1);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(cols.size(), 3u);
  ClientSession s(root);
  auto out = s.Run({}, {rows[1], cols[0], cols[2]});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Floats({3, 4, 5}, {3}));
  EXPECT_EQ((*out)[1], Floats({0, 3}, {2}));
  EXPECT_EQ((*out)[2], Floats({2, 5}, {2}));
  out = s.Run({}, {bad[0]});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node bad: Unpack of 2 tensors"));
}

// ---- Builders ----

TEST(ArrayBuilderTest, ConcatAndPackCountTheirInputs) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root.WithOpName("a"), DT_INT64);
  auto b = ops::Placeholder(root.WithOpName("b"), DT_INT64);
  auto c = ops::Concat(root.WithOpName("c"), {a, b, a}, -1);
  auto p = ops::Pack(root.WithOpName("p"), {a, b}, 1);
  auto g = root.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::NodeDef* cn = FindNode(*g, "c");
  ASSERT_NE(cn, nullptr);
  ASSERT_EQ(cn->input_size(), 4);
  EXPECT_EQ(cn->input(0), "a");
  EXPECT_EQ(cn->input(1), "b");
  EXPECT_EQ(cn->input(2), "a");
  EXPECT_EQ(FindNode(*g, cn->input(3))->op(), "Const");
  EXPECT_EQ(cn->attr().at("N").i(), 3);
  EXPECT_EQ(cn->attr().at("T").type(), proto::DT_INT64);
  EXPECT_EQ(cn->attr().at("Tidx").type(), proto::DT_INT32);
  const proto::NodeDef* pn = FindNode(*g, "p");
  ASSERT_NE(pn, nullptr);
  EXPECT_EQ(pn->input_size(), 2);
  EXPECT_EQ(pn->attr().at("N").i(), 2);
  EXPECT_EQ(pn->attr().at("axis").i(), 1);
  EXPECT_EQ(p.type(), DT_INT64);
  EXPECT_EQ(c.type(), DT_INT64);
}

TEST(ArrayBuilderTest, PackAxisDefaultsToZero) {
  Scope root = Scope::NewRootScope();
  ops::Pack(root.WithOpName("p"), {1.0f, 2.0f});
  auto g = root.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(FindNode(*g, "p")->attr().at("axis").i(), 0);
}

TEST(ArrayBuilderTest, TypeErrorsAreRecordedInTheScope) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto g = ops::Gather(root.WithOpName("g"), x, 1.0f);  // float indices
  EXPECT_FALSE(g.op().valid());
  EXPECT_TRUE(IsInvalidArgument(root.status()));
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("node g: "));
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("Tindices"));

  Scope mixed = Scope::NewRootScope();
  auto c = ops::Concat(mixed.WithOpName("c"), {1.0f, 2}, 0);  // float and int32 values
  EXPECT_FALSE(c.op().valid());
  EXPECT_THAT(std::string(mixed.status().message()), HasSubstr("node c: input 1 (values)"));

  Scope empty = Scope::NewRootScope();
  auto e = ops::Pack(empty.WithOpName("e"), {});
  EXPECT_FALSE(e.op().valid());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("node e: "));
  EXPECT_FALSE(empty.ToGraphDef().ok());
}

}  // namespace
}  // namespace tw
