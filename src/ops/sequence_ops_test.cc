// Tests of Range (sequence_ops.cc): kernels against hand-computed values, every error path
// with its message.
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
using testing::Message;
using testing::NodeBuilder;
using testing::RunOne;
using testing::Vec;

NodeBuilder RangeNode(DataType t) { return NodeBuilder("n", "Range").Attr("Tidx", t).NumInputs(3); }

template <typename T>
StatusOr<Tensor> Range(T start, T limit, T delta) {
  return RunOne(RangeNode(DataTypeToEnum<T>::value),
                {Tensor::Scalar<T>(start), Tensor::Scalar<T>(limit), Tensor::Scalar<T>(delta)});
}

TEST(RangeOpTest, IntegersUpAndDown) {
  auto out = Range<int32_t>(3, 18, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I32({3, 6, 9, 12, 15}));
  out = Range<int64_t>(5, -2, -3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I64({5, 2, -1}));
  out = Range<int32_t>(4, 4, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, I32({}));
}

TEST(RangeOpTest, FloatsCountAsTensorFlowDoes) {
  auto out = Range<float>(3, 1, -0.5f);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Vec<float>({3, 2.5f, 2, 1.5f}));
  auto d = Range<double>(0, 1, 0.3);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->num_elements(), 4);  // ceil(1 / 0.3)
  EXPECT_DOUBLE_EQ(d->flat<double>()[3], 0.3 + 0.3 + 0.3);
}

TEST(RangeOpTest, BadArgumentsAreInvalidArguments) {
  EXPECT_EQ(Message(Range<int32_t>(0, 5, 0)), "node n: Requires delta != 0: 0");
  EXPECT_EQ(Message(Range<int32_t>(5, 0, 1)),
            "node n: Requires start <= limit when delta > 0: 5/0");
  EXPECT_EQ(Message(Range<float>(0, 5, -1)), "node n: Requires start >= limit when delta < 0: 0/5");
  auto out = RunOne(RangeNode(DT_INT32),
                    {I32({0, 1}), Tensor::Scalar<int32_t>(3), Tensor::Scalar<int32_t>(1)});
  EXPECT_TRUE(IsInvalidArgument(out.status()));
  EXPECT_EQ(Message(out), "node n: start must be a scalar, not shape [2]");
}

}  // namespace
}  // namespace tw
