// Tests of Split and SplitV (split_ops.cc): kernels against hand-computed values, every
// error path with its message.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/ops/array_test_util.h"
#include "testing/kernel_test_fixture.h"

namespace tw {
namespace {

using testing::I32;
using testing::I64;
using testing::Iota;
using testing::KernelTest;
using testing::NodeBuilder;

NodeBuilder SplitNode(int n) {
  return NodeBuilder("n", "Split").Attr("T", DT_FLOAT).Attr("num_split", n).NumInputs(2);
}
NodeBuilder SplitVNode(int n, DataType tlen = DT_INT64) {
  return NodeBuilder("n", "SplitV")
      .Attr("T", DT_FLOAT)
      .Attr("num_split", n)
      .Attr("Tlen", tlen)
      .NumInputs(3);
}
std::string Message(const StatusOr<std::vector<Tensor>>& s) {
  return std::string(s.status().message());
}

TEST(SplitOpTest, EqualPiecesAlongAnyAxis) {
  KernelTest t;
  auto out = t.Run(SplitNode(2), {Tensor::Scalar<int32_t>(1), Iota({2, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({0, 1, 4, 5}, {2, 2}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({2, 3, 6, 7}, {2, 2}));
  Tensor in = Iota({4, 2});
  out = t.Run(SplitNode(4), {Tensor::Scalar<int32_t>(-2), in});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[3], Tensor::FromVector<float>({6, 7}, {1, 2}));
  EXPECT_TRUE((*out)[3].SharesBufferWith(in));  // rows: views
}

TEST(SplitOpTest, ErrorsNameTheNode) {
  KernelTest t;
  auto out = t.Run(SplitNode(3), {Tensor::Scalar<int32_t>(1), Iota({2, 4})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out),
            "node n: Number of ways to split should evenly divide the split dimension, but got "
            "split_dim 1 (size = 4) and num_split 3");
  out = t.Run(SplitNode(2), {Tensor::Scalar<int32_t>(2), Iota({2, 4})});
  EXPECT_EQ(Message(out), "node n: -input rank(-2) <= split_dim < input rank (2), but got 2");
  out = t.Run(SplitNode(2), {I32({0, 1}), Iota({2, 4})});
  EXPECT_EQ(Message(out), "node n: split_dim must be a scalar, got shape [2]");
}

TEST(SplitVOpTest, SizesWithOneInferred) {
  KernelTest t;
  auto out = t.Run(SplitVNode(3), {Iota({2, 5}), I64({1, -1, 2}), Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({0, 5}, {2, 1}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({1, 2, 6, 7}, {2, 2}));
  EXPECT_EQ((*out)[2], Tensor::FromVector<float>({3, 4, 8, 9}, {2, 2}));
  out = t.Run(SplitVNode(2, DT_INT32), {Iota({3}), I32({0, 3}), Tensor::Scalar<int32_t>(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[1], Iota({3}));
}

TEST(SplitVOpTest, ErrorsNameTheNode) {
  KernelTest t;
  const Tensor axis = Tensor::Scalar<int32_t>(0);
  auto out = t.Run(SplitVNode(2), {Iota({4}), I64({-1, -1}), axis});
  EXPECT_EQ(Message(out), "node n: There can only be one -1 in the input.");
  out = t.Run(SplitVNode(2), {Iota({4}), I64({1, 2}), axis});
  EXPECT_EQ(Message(out),
            "node n: Determined shape must either match input shape along split_dim exactly if "
            "fully specified, or be less than the size of the input along split_dim if not fully "
            "specified.  Got: 3");
  out = t.Run(SplitVNode(2), {Iota({4}), I64({5, -1}), axis});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  out = t.Run(SplitVNode(2), {Iota({4}), I64({6, -2}), axis});
  EXPECT_EQ(Message(out), "node n: Split size at index 1 must be >= 0. Got: -2");
  out = t.Run(SplitVNode(2), {Iota({4}), I64({4}), axis});
  EXPECT_EQ(Message(out),
            "node n: size of the split_tensor must be 1-D and have the same elements as outputs "
            "got 1 -D and 1 elements");
}

}  // namespace
}  // namespace tw
