// Tests of MirrorPad and MirrorPadGrad (mirror_pad_ops.cc): kernels against TF's documented
// examples and hand-computed values, every error path with its message.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/ops/array_test_util.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using testing::I32;
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Vec;

NodeBuilder PadNode(const char* op, const std::string& mode, DataType t = DT_FLOAT,
                    DataType tp = DT_INT32) {
  return NodeBuilder("n", op).Attr("T", t).Attr("Tpaddings", tp).Attr("mode", mode).NumInputs(2);
}
Tensor Paddings(const std::vector<int32_t>& v) {
  return Tensor::FromVector<int32_t>(v, {static_cast<int64_t>(v.size() / 2), 2});
}

TEST(MirrorPadOpTest, ReflectAndSymmetricVectors) {
  auto out = RunOne(PadNode("MirrorPad", "REFLECT"), {Vec<float>({1, 2, 3}), Paddings({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<float>({3, 2, 1, 2, 3, 2, 1}));
  out = RunOne(PadNode("MirrorPad", "SYMMETRIC"), {Vec<float>({1, 2, 3}), Paddings({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<float>({2, 1, 1, 2, 3, 3, 2}));
}

TEST(MirrorPadOpTest, TensorFlowsMatrixExamples) {
  const Tensor t = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto out = RunOne(PadNode("MirrorPad", "REFLECT", DT_INT32), {t, Paddings({1, 1, 2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int32_t>({6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1,  //
                                               6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1},
                                              {4, 7}));
  out = RunOne(PadNode("MirrorPad", "SYMMETRIC", DT_INT32, DT_INT64),
               {t, Tensor::FromVector<int64_t>({1, 1, 2, 2}, {2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int32_t>({2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2,  //
                                               5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5},
                                              {4, 7}));
  out = RunOne(PadNode("MirrorPad", "SYMMETRIC", DT_STRING),
               {Vec<std::string>({"a", "b"}), Paddings({1, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<std::string>({"a", "a", "b"}));
}

TEST(MirrorPadOpTest, ErrorsNameTheNode) {
  const Tensor x = Vec<float>({1, 2, 3});
  auto out = RunOne(PadNode("MirrorPad", "REFLECT"), {x, Paddings({3, 0})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out),
            "node n: paddings must be no greater than the dimension size: 3, 0 greater than 2");
  out = RunOne(PadNode("MirrorPad", "SYMMETRIC"), {x, Paddings({3, 0})});
  EXPECT_TRUE(out.ok()) << out.status();
  out = RunOne(PadNode("MirrorPad", "SYMMETRIC"), {x, Paddings({-1, 0})});
  EXPECT_EQ(Message(out), "node n: Paddings must be non-negative: -1 0");
  out = RunOne(PadNode("MirrorPad", "SYMMETRIC"), {x, I32({1, 1})});
  EXPECT_EQ(Message(out), "node n: paddings must be a matrix with 2 columns: [2]");
  out = RunOne(PadNode("MirrorPad", "SYMMETRIC"), {x, Paddings({1, 1, 1, 1})});
  EXPECT_EQ(Message(out),
            "node n: The first dimension of paddings must be the rank of inputs[2,2], [3]");
  out = RunOne(PadNode("MirrorPad", "WRAP"), {x, Paddings({1, 1})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node n: mode must be REFLECT or SYMMETRIC, got 'WRAP'");
}

TEST(MirrorPadGradOpTest, FoldsTheMirrorsBack) {
  // TF's example: [[1,2,3],[4,5,6],[7,8,9]] with paddings [[0,1],[0,1]], SYMMETRIC.
  auto out = RunOne(
      PadNode("MirrorPadGrad", "SYMMETRIC", DT_INT64),
      {Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}), Paddings({0, 1, 0, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int64_t>({1, 5, 11, 28}, {2, 2}));
  out = RunOne(PadNode("MirrorPadGrad", "REFLECT"),
               {Vec<float>({1, 2, 3, 4, 5, 6, 7}), Paddings({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<float>({10, 12, 6}));
  out = RunOne(PadNode("MirrorPadGrad", "REFLECT"), {Vec<float>({1, 2, 3}), Paddings({1, 1})});
  EXPECT_EQ(Message(out),
            "node n: paddings must be no greater than the dimension size: 1, 1 greater than 0");
}

}  // namespace
}  // namespace tw
