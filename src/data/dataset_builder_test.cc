// Tests of tf.data's C++ API (tensorweave/data.h): pipelines built with it and iterated in
// a session, TFRecord files parsed by a Map, static shapes, and building errors.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/io/record_writer.h"
#include "tensorweave/data.h"
#include "tensorweave/ops.h"
#include "tensorweave/ops/parsing_ops.h"
#include "tensorweave/protobuf/example.pb.h"
#include "tensorweave/session.h"
#include "testing/temp_dir.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every element of `dataset`'s first component, flattened, until the end.
StatusOr<std::vector<int64_t>> Drain(const data::Dataset& dataset) {
  Scope root = Scope::NewRootScope();
  TW_ASSIGN_OR_RETURN(data::Iterator it, data::MakeOneShotIterator(root, dataset));
  std::vector<Output> next = data::GetNext(root, it);
  TW_RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  std::vector<int64_t> out;
  while (true) {
    auto got = session.Run({}, {next[0]});
    if (IsOutOfRange(got.status())) return out;
    TW_RETURN_IF_ERROR(got.status());
    const Tensor& t = (*got)[0];
    for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(t.flat<int64_t>()[i]);
  }
}

TEST(DatasetBuilderTest, RangeMapFilterBatchTakeSkip) {
  auto doubled = data::Dataset::Range(0, 10).Map(
      [](const Scope& s, const std::vector<Output>& x) {
        return std::vector<Output>{ops::Mul(s, x[0], int64_t{2})};
      },
      /*num_parallel_calls=*/2);
  auto small = doubled.Filter([](const Scope& s, const std::vector<Output>& x) {
    return std::vector<Output>{ops::Less(s, x[0], int64_t{12})};
  });
  EXPECT_THAT(*Drain(small.Batch(4)), ElementsAre(0, 2, 4, 6, 8, 10));
  EXPECT_THAT(*Drain(doubled.Skip(2).Take(3)), ElementsAre(4, 6, 8));
  EXPECT_THAT(*Drain(data::Dataset::Range(0, 6).Shard(3, 1).Repeat(2)), ElementsAre(1, 4, 1, 4));
  auto shuffled = *Drain(data::Dataset::Range(0, 50).Shuffle(10, /*seed=*/7).Prefetch(2));
  EXPECT_EQ(shuffled, *Drain(data::Dataset::Range(0, 50).Shuffle(10, 7)));  // seeded
  std::sort(shuffled.begin(), shuffled.end());
  EXPECT_EQ(shuffled, *Drain(data::Dataset::Range(0, 50)));
}

TEST(DatasetBuilderTest, StaticShapesFollowTheTransformations) {
  auto slices = data::Dataset::TensorSlices(
      {Tensor::FromVector<float>(std::vector<float>(12, 1.0f), TensorShape({6, 2}))});
  EXPECT_EQ(slices.output_shapes()[0]->DebugString(), "[2]");
  EXPECT_EQ(slices.Batch(3, /*drop_remainder=*/true).output_shapes()[0]->DebugString(), "[3,2]");
  EXPECT_EQ(slices.Batch(3).output_shapes()[0]->DebugString(), "[?,2]");
  auto summed = slices.Map([](const Scope& s, const std::vector<Output>& x) {
    return std::vector<Output>{ops::Sum(s, x[0], 0)};
  });
  EXPECT_EQ(summed.output_types()[0], DT_FLOAT);
  EXPECT_EQ(summed.output_shapes()[0]->DebugString(), "[]");
}

TEST(DatasetBuilderTest, ParsesTFRecordFilesOfExamples) {
  ::tw::testing::ScopedTempDir dir("tw_dataset_builder");
  ASSERT_FALSE(dir.path().empty());
  std::vector<std::string> files;
  for (int f = 0; f < 2; ++f) {
    files.push_back(dir.path() + "/part-" + std::to_string(f));
    auto writer = io::RecordWriter::Create(files.back());
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int i = 0; i < 5; ++i) {
      proto::Example e;
      (*e.mutable_features()->mutable_feature())["id"].mutable_int64_list()->add_value(f * 5 + i);
      ASSERT_TRUE((*writer)->Write(e.SerializeAsString()).ok());
    }
    ASSERT_TRUE((*writer)->Close().ok());
  }
  auto ids = data::Dataset::TFRecord(files).Batch(4).Map(
      [](const Scope& s, const std::vector<Output>& records) {
        auto parsed = ops::ParseExample(s, records[0], {}, {{.key = "id", .dtype = DT_INT64}});
        return parsed.dense;
      });
  auto got = Drain(ids);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(*got, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
}

TEST(DatasetBuilderTest, BuildingErrorsNameTheTransformation) {
  auto broken = data::Dataset::Range(0, 3).Map([](const Scope& s, const std::vector<Output>& x) {
    return std::vector<Output>{ops::MatMul(s, x[0], x[0])};  // a scalar is no matrix
  });
  Scope root = Scope::NewRootScope();
  auto it = data::MakeOneShotIterator(root, broken);
  EXPECT_TRUE(IsInvalidArgument(it.status())) << it.status();
  EXPECT_THAT(it.status().message(), HasSubstr("Dataset::Map: the map function does not build"));
  auto scalar = data::Dataset::TensorSlices({Tensor::Scalar<int64_t>(1)});
  EXPECT_THAT(scalar.status().message(), HasSubstr("component 0 is a scalar"));
  auto not_bool = data::Dataset::Range(0, 3).Filter(
      [](const Scope&, const std::vector<Output>& x) { return x; });
  EXPECT_THAT(not_bool.status().message(), HasSubstr("must return one bool"));
}

}  // namespace
}  // namespace tw
