// Tests of Transpose, InvertPermutation, Tile and BroadcastTo (transpose_ops.cc): kernels
// against hand-computed values and a direct reference loop, every error path with its
// message.
#include <algorithm>
#include <cstdint>
#include <numeric>
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
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Vec;

NodeBuilder Node(const char* op, DataType t, const char* index_attr, DataType index = DT_INT32) {
  return NodeBuilder("n", op).Attr("T", t).Attr(index_attr, index).NumInputs(2);
}
NodeBuilder TransposeNode(DataType t, DataType tperm = DT_INT32) {
  return Node("Transpose", t, "Tperm", tperm);
}
NodeBuilder TileNode(DataType t, DataType tm = DT_INT32) {
  return Node("Tile", t, "Tmultiples", tm);
}
NodeBuilder BroadcastToNode(DataType t) { return Node("BroadcastTo", t, "Tidx"); }

// The transpose of `in` by `perm`, one element at a time from its multi-index.
Tensor ReferenceTranspose(const Tensor& in, const std::vector<int32_t>& perm) {
  const int rank = in.rank();
  std::vector<int64_t> out_dims(rank), in_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in.dim(d + 1);
  for (int k = 0; k < rank; ++k) out_dims[k] = in.dim(perm[k]);
  std::vector<float> out(static_cast<size_t>(in.num_elements()));
  auto src = in.flat<float>();
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), from = 0;
    for (int k = rank - 1; k >= 0; --k) {
      from += (rest % out_dims[k]) * in_strides[perm[k]];
      rest /= out_dims[k];
    }
    out[i] = src[from];
  }
  return Tensor::FromVector<float>(out, *TensorShape::Create(out_dims));
}

TEST(TransposeOpTest, Matrix) {
  auto out = RunOne(TransposeNode(DT_FLOAT), {Iota({2, 3}), I32({1, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({0, 3, 1, 4, 2, 5}, {3, 2}));
}

TEST(TransposeOpTest, EveryPermutationOfRankFourMatchesTheReference) {
  // Dimensions of 1 and large ones (past the 32-element block) both take part.
  for (const TensorShape& shape :
       {TensorShape({2, 3, 4, 5}), TensorShape({1, 3, 1, 2}), TensorShape({3, 40, 1, 35})}) {
    std::vector<int32_t> perm = {0, 1, 2, 3};
    do {
      auto out = RunOne(TransposeNode(DT_FLOAT, DT_INT64),
                        {Iota(shape), I64(std::vector<int64_t>(perm.begin(), perm.end()))});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(*out, ReferenceTranspose(Iota(shape), perm)) << shape.DebugString();
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(TransposeOpTest, OrderKeepingPermutationsShareTheBuffer) {
  Tensor in = Iota({2, 1, 3});
  auto out = RunOne(TransposeNode(DT_FLOAT), {in, I32({1, 0, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({1, 2, 3}));
  EXPECT_TRUE(out->SharesBufferWith(in));
}

TEST(TransposeOpTest, StringsScalarsEmptyAndComplex) {
  auto out = RunOne(
      TransposeNode(DT_STRING),
      {Tensor::FromVector<std::string>({"a", "b", "c", "d", "e", "f"}, {3, 2}), I32({1, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<std::string>({"a", "c", "e", "b", "d", "f"}, {2, 3}));
  out = RunOne(TransposeNode(DT_INT32), {Tensor::Scalar<int32_t>(4), I32({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::Scalar<int32_t>(4));
  out = RunOne(TransposeNode(DT_FLOAT), {Iota({0, 3}), I32({1, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({3, 0}));
  using C = std::complex<double>;
  out = RunOne(TransposeNode(DT_COMPLEX128),
               {Tensor::FromVector<C>({C(1, 2), C(3, 4), C(5, 6), C(7, 8)}, {2, 2}), I32({1, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<C>({C(1, 2), C(5, 6), C(3, 4), C(7, 8)}, {2, 2}));
}

TEST(TransposeOpTest, BadPermutationsAreInvalidArguments) {
  const std::vector<std::pair<Tensor, std::string>> cases = {
      {Tensor::FromVector<int32_t>({0, 1}, {1, 2}), "node n: perm must be rank 1, got shape [1,2]"},
      {I32({0, 1, 2}),
       "node n: transpose expects a vector of size 2. But input(1) is a vector "
       "of size 3"},
      {I32({0, 2}), "node n: 2 is out of range [0 .. 2)"},
      {I32({-1, 0}), "node n: -1 is out of range [0 .. 2)"},
      {I32({1, 1}), "node n: 0 is missing from {1,1}."},
  };
  for (const auto& [perm, message] : cases) {
    auto out = RunOne(TransposeNode(DT_FLOAT), {Iota({2, 3}), perm});
    EXPECT_TRUE(IsInvalidArgument(out.status())) << message;
    EXPECT_EQ(Message(out), message);
  }
}

TEST(InvertPermutationOpTest, ValuesAndErrors) {
  NodeBuilder node = NodeBuilder("n", "InvertPermutation").Attr("T", DT_INT32).NumInputs(1);
  auto out = RunOne(node, {I32({3, 4, 0, 2, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I32({2, 4, 3, 0, 1}));
  out =
      RunOne(NodeBuilder("n", "InvertPermutation").Attr("T", DT_INT64).NumInputs(1), {I64({1, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I64({1, 0}));
  out = RunOne(node, {I32({0, 2})});
  EXPECT_EQ(Message(out), "node n: 2 is not between 0 and 2");
  out = RunOne(node, {I32({1, 1})});
  EXPECT_EQ(Message(out), "node n: 1 is duplicated in the input.");
  out = RunOne(node, {Tensor::Scalar<int32_t>(0)});
  EXPECT_EQ(Message(out), "node n: invert_permutation expects a 1D vector, got shape []");
}

TEST(TileOpTest, RepeatsAlongEachDimension) {
  auto out = RunOne(TileNode(DT_FLOAT), {Iota({2, 2}), I32({2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3,  //
                                             0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3},
                                            {4, 6}));
  out = RunOne(TileNode(DT_STRING, DT_INT64), {Vec<std::string>({"a", "b"}), I64({2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<std::string>({"a", "b", "a", "b"}));
  out =
      RunOne(TileNode(DT_INT32), {Tensor::FromVector<int32_t>({1, 2}, {2, 1, 1}), I32({1, 2, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<int32_t>({1, 1, 2, 2}, {2, 2, 1}));
}

TEST(TileOpTest, ZeroMultiplesOnesAndScalars) {
  auto out = RunOne(TileNode(DT_FLOAT), {Iota({2, 2}), I32({0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 6}));
  Tensor in = Iota({2, 2});
  out = RunOne(TileNode(DT_FLOAT), {in, I32({1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(in));
  out = RunOne(TileNode(DT_FLOAT), {Tensor::Scalar<float>(2), I32({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::Scalar<float>(2));
}

TEST(TileOpTest, BadMultiplesAreInvalidArguments) {
  auto out = RunOne(TileNode(DT_FLOAT), {Iota({2, 2}), I32({2})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out),
            "node n: Expected multiples argument to be a vector of length 2 but got length 1");
  out = RunOne(TileNode(DT_FLOAT), {Iota({2, 2}), I32({2, -1})});
  EXPECT_EQ(Message(out), "node n: Expected multiples[1] >= 0, but got -1");
  out = RunOne(TileNode(DT_FLOAT, DT_INT64), {Iota({2, 2}), I64({int64_t{1} << 62, 4})});
  EXPECT_EQ(Message(out), "node n: Tile of shape [2,2] by [4611686018427387904,4] is too large");
}

TEST(BroadcastToOpTest, RepeatsDimensionsOfOne) {
  auto out = RunOne(BroadcastToNode(DT_FLOAT), {Iota({3, 1}), I32({2, 3, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Tensor::FromVector<float>({0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}, {2, 3, 2}));
  out = RunOne(BroadcastToNode(DT_INT64), {Tensor::Scalar<int64_t>(7), I32({2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I64({7, 7}));
  Tensor in = Iota({2, 3});
  out = RunOne(BroadcastToNode(DT_FLOAT), {in, I32({1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({1, 2, 3}));
  EXPECT_TRUE(out->SharesBufferWith(in));
  out = RunOne(BroadcastToNode(DT_FLOAT), {Iota({1, 3}), I32({0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 3}));
}

TEST(BroadcastToOpTest, IncompatibleShapesAreInvalidArguments) {
  auto out = RunOne(BroadcastToNode(DT_FLOAT), {Iota({2, 3}), I32({3, 3})});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out),
            "node n: Unable to broadcast tensor of shape [2,3] to tensor of shape [3,3]");
  out = RunOne(BroadcastToNode(DT_FLOAT), {Iota({2, 3}), I32({3})});
  EXPECT_EQ(Message(out),
            "node n: Rank of input (2) must be no greater than rank of output shape (1).");
  out = RunOne(BroadcastToNode(DT_FLOAT), {Iota({2}), Tensor::Scalar<int32_t>(2)});
  EXPECT_EQ(Message(out), "node n: shape must be a vector, got shape []");
}

}  // namespace
}  // namespace tw
