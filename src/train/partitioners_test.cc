#include "tensorweave/train/partitioners.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tw::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PartitionersTest, FixedSizeSplitsAxisZeroIntoAtMostItsSize) {
  EXPECT_THAT(*FixedSizePartitions(TensorShape({10, 3}), 4), ElementsAre(4, 1));
  EXPECT_THAT(*FixedSizePartitions(TensorShape({2, 3, 5}), 4), ElementsAre(2, 1, 1));
  EXPECT_TRUE(IsInvalidArgument(FixedSizePartitions(TensorShape({10}), 0).status()));
}

TEST(PartitionersTest, MinMaxKeepsPartsAboveTheMinimumSliceAndUnderTheMaximumCount) {
  // 1000 x 100 floats = 400,000 bytes: 100 KB slices allow 4 parts.
  EXPECT_THAT(*MinMaxVariablePartitions(TensorShape({1000, 100}), DT_FLOAT, 3, 100 << 10),
              ElementsAre(3, 1));
  EXPECT_THAT(*MinMaxVariablePartitions(TensorShape({1000, 100}), DT_FLOAT, 8, 100 << 10),
              ElementsAre(4, 1));
  EXPECT_THAT(*MinMaxVariablePartitions(TensorShape({1000, 100}), DT_FLOAT, 8, 1 << 20),
              ElementsAre(1, 1));
  // Never more parts than rows; strings count bytes_per_string_element each.
  EXPECT_THAT(*MinMaxVariablePartitions(TensorShape({2, 1000}), DT_FLOAT, 8, 1), ElementsAre(2, 1));
  EXPECT_THAT(*MinMaxVariablePartitions(TensorShape({100}), DT_STRING, 100, 160, 0, 16),
              ElementsAre(10));
  EXPECT_TRUE(
      IsInvalidArgument(MinMaxVariablePartitions(TensorShape({10}), DT_FLOAT, 2, 0).status()));
}

TEST(PartitionersTest, AxisSizeKeepsWholeSlicesUnderTheMaximumShardBytes) {
  // Rows of 10 floats are 40 bytes: 25 rows fit in 1000 bytes, so 100 rows make 4 shards.
  EXPECT_THAT(*VariableAxisSizePartitions(TensorShape({100, 10}), DT_FLOAT, 1000),
              ElementsAre(4, 1));
  EXPECT_THAT(*VariableAxisSizePartitions(TensorShape({100, 10}), DT_FLOAT, 1001),
              ElementsAre(4, 1));
  EXPECT_THAT(*VariableAxisSizePartitions(TensorShape({100, 10}), DT_FLOAT, 999),
              ElementsAre(5, 1));
  // A slice larger than the maximum still makes one shard per slice; max_shards caps.
  EXPECT_THAT(*VariableAxisSizePartitions(TensorShape({3, 1000}), DT_FLOAT, 10), ElementsAre(3, 1));
  EXPECT_THAT(*VariableAxisSizePartitions(TensorShape({100, 10}), DT_FLOAT, 40, 0, 16, 7),
              ElementsAre(7, 1));
  EXPECT_THAT(*VariableAxisSizePartitions(TensorShape({10, 0}), DT_FLOAT, 40), ElementsAre(1, 1));
  auto bad = VariableAxisSizePartitions(TensorShape({10}), DT_FLOAT, 0);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("Both max_shard_bytes and bytes_per_string_element must be positive"));
}

TEST(PartitionersTest, OnlyAxisZeroOfAFullyDefinedShape) {
  EXPECT_TRUE(absl::IsUnimplemented(FixedSizePartitions(TensorShape({4, 4}), 2, 1).status()));
  auto outside = FixedSizePartitions(TensorShape({4}), 2, 1);
  EXPECT_TRUE(IsInvalidArgument(outside.status()));
  EXPECT_THAT(outside.status().message(), HasSubstr("axis 1 when shape is only [4]"));
  auto unknown = MinMaxVariablePartitions(TensorShape({-1, 4}), DT_FLOAT, 2, 10);
  EXPECT_TRUE(IsInvalidArgument(unknown.status()));
  EXPECT_THAT(unknown.status().message(), HasSubstr("[?,4]"));
}

}  // namespace
}  // namespace tw::train
