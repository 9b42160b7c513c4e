// Tests of Unique (selection_ops.cc): kernels against hand-computed values, every error
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

using ::testing::HasSubstr;
using testing::I32;
using testing::I64;
using testing::KernelTest;
using testing::NodeBuilder;
using testing::Vec;

// ---- Unique ----

NodeBuilder UniqueNode(DataType t, DataType out_idx = DT_INT32) {
  return NodeBuilder("u", "Unique").Attr("T", t).Attr("out_idx", out_idx).NumInputs(1);
}

// tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8]) from TensorFlow's documentation.
TEST(UniqueOpTest, Int32ValuesInOrderOfFirstOccurrence) {
  KernelTest t;
  auto out = t.Run(UniqueNode(DT_INT32), {I32({1, 1, 2, 4, 4, 4, 7, 8, 8})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0], I32({1, 2, 4, 7, 8}));
  EXPECT_EQ((*out)[1], I32({0, 0, 1, 2, 2, 2, 3, 4, 4}));
}

TEST(UniqueOpTest, Int64ValuesWithInt64Indices) {
  KernelTest t;
  auto out = t.Run(UniqueNode(DT_INT64, DT_INT64), {I64({7, -3, 7, 1LL << 40, -3, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], I64({7, -3, 1LL << 40, 0}));
  EXPECT_EQ((*out)[1], I64({0, 1, 0, 2, 1, 3}));
}

TEST(UniqueOpTest, FloatsAndStrings) {
  KernelTest t;
  auto out = t.Run(UniqueNode(DT_FLOAT), {Vec<float>({2.5f, -1, 2.5f, 0, -1, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Vec<float>({2.5f, -1, 0, 3}));
  EXPECT_EQ((*out)[1], I32({0, 1, 0, 2, 1, 3}));
  out = t.Run(UniqueNode(DT_STRING, DT_INT64), {Vec<std::string>({"b", "a", "b", "b"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Vec<std::string>({"b", "a"}));
  EXPECT_EQ((*out)[1], I64({0, 1, 0, 0}));
}

TEST(UniqueOpTest, EmptyInputGivesEmptyOutputs) {
  KernelTest t;
  auto out = t.Run(UniqueNode(DT_FLOAT), {Vec<float>({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[0].dtype(), DT_FLOAT);
  EXPECT_EQ((*out)[1].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[1].dtype(), DT_INT32);
}

TEST(UniqueOpTest, NonVectorsAreInvalidArguments) {
  KernelTest t;
  for (const Tensor& x :
       {Tensor::FromVector<int32_t>({1, 2, 1, 2}, {2, 2}), Tensor::Scalar<int32_t>(3)}) {
    auto out = t.Run(UniqueNode(DT_INT32), {x});
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(IsInvalidArgument(out.status()));
    EXPECT_EQ(std::string(out.status().message()), "node u: unique expects a 1D vector.");
  }
}

TEST(UniqueOpTest, BuilderRunsInASession) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_INT64);
  auto u = ops::Unique(root.WithOpName("u"), x, {.out_idx = DT_INT64});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(u.y.type(), DT_INT64);
  EXPECT_EQ(u.idx.type(), DT_INT64);
  ClientSession s(root);
  auto out = s.Run({{x, I64({5, 3, 5})}}, {u.y, u.idx});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], I64({5, 3}));
  EXPECT_EQ((*out)[1], I64({0, 1, 0}));
  // A matrix fed where the graph could not check the shape fails the step.
  out = s.Run({{x, Tensor::FromVector<int64_t>({1, 2}, {1, 2})}}, {u.y});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("unique expects a 1D vector."));
  // idx is int32 unless asked otherwise.
  EXPECT_EQ(ops::Unique(root, x).idx.type(), DT_INT32);
}

}  // namespace
}  // namespace tw
