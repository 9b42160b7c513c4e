// Checkpoints of tf.data iterators: a Saver given an iterator saves its place in its
// pipeline, and a restore in a fresh session (the iterator not even initialized) goes on
// with exactly the elements that followed the save, unseeded shuffles, parallel maps and
// prefetching included; and the errors when that cannot be.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/data/dataset_test_util.h"
#include "tensorweave/ops.h"
#include "tensorweave/ops/iterator_ops.h"
#include "tensorweave/session.h"
#include "tensorweave/train/saver.h"
#include "testing/temp_dir.h"

namespace tw {
namespace {

using data::testing::Function;
using data::testing::Ints;
using data::testing::Op;
using data::testing::Range;
using data::testing::With;
using ::testing::HasSubstr;

// Range(0, 40) shuffled without a seed (a new order each of 2 epochs), mapped in parallel,
// batched by 3 and prefetched: everything a replay must reproduce.
proto::DatasetDef Pipeline() {
  auto shuffle = With(
      With(With(With(Op("Shuffle", {Range(0)}), "buffer_size", int64_t{8}), "seed", int64_t{0}),
           "seed2", int64_t{0}),
      "reshuffle_each_iteration", true);
  auto repeat = With(Op("Repeat", {shuffle}), "count", int64_t{2});
  auto map = With(Op("Map", {repeat}), "num_parallel_calls", int64_t{3});
  *map.add_functions() =
      Function([](const Scope& s, Output x) { return ops::Mul(s, x, int64_t{10}); });
  auto batch = With(With(Op("Batch", {map}), "batch_size", int64_t{3}), "drop_remainder", false);
  return With(Op("Prefetch", {batch}), "buffer_size", int64_t{2});
}

class IteratorCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    const std::vector<DataType> types = {DT_INT64};
    iterator_ = root_.AddNodeOutput("Iterator", {}, {{"output_types", MakeAttr(types)}});
    InputList captures;
    for (const Tensor& t : Ints({0, 40, 1})) captures.push_back(t);
    init_ = root_.AddNode("MakeIterator", {{iterator_}, captures},
                          {{"dataset", MakeAttr(Pipeline().SerializeAsString())}});
    next_ =
        root_.AddNodeOutput("IteratorGetNext", {{iterator_}}, {{"output_types", MakeAttr(types)}});
    ASSERT_TRUE(root_.status().ok()) << root_.status();
  }
  ops::Variable AsSaveable() const { return {.handle = iterator_, .dtype = DT_STRING}; }

  // The batches left in `session`, flattened one per element.
  std::vector<std::vector<int64_t>> Rest(ClientSession& session) {
    std::vector<std::vector<int64_t>> out;
    while (true) {
      auto got = session.Run({}, {next_});
      if (IsOutOfRange(got.status())) return out;
      EXPECT_TRUE(got.ok()) << got.status();
      if (!got.ok()) return out;
      const Tensor& t = (*got)[0];
      out.emplace_back(t.flat<int64_t>().data(), t.flat<int64_t>().data() + t.num_elements());
    }
  }

  Scope root_ = Scope::NewRootScope();
  Output iterator_;
  Operation init_;
  Output next_;
  ::tw::testing::ScopedTempDir dir_{"tw_iterator_ckpt"};
};

TEST_F(IteratorCheckpointTest, RestoreInAFreshSessionGoesOnWhereTheSaveWas) {
  auto saver = train::Saver::Create(
      root_, {{.name = "input", .var = AsSaveable(), .kind = train::SaveableKind::kIterator}},
      {.checkpoint_dir = dir_.path()});
  ASSERT_TRUE(saver.ok()) << saver.status();

  ClientSession first(root_);
  ASSERT_TRUE(first.Run({}, {}, {init_}).ok());
  std::vector<int64_t> seen;
  for (int i = 0; i < 17; ++i) {  // into the second epoch, whose order is another
    auto got = first.Run({}, {next_});
    ASSERT_TRUE(got.ok()) << got.status();
    for (int64_t j = 0; j < (*got)[0].num_elements(); ++j)
      seen.push_back((*got)[0].flat<int64_t>()[j]);
  }
  auto prefix = (*saver)->Save(first, 17);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  const auto expected = Rest(first);
  ASSERT_FALSE(expected.empty());

  // Each value appears once per epoch: 80 elements in all, none twice beyond that.
  std::map<int64_t, int> count;
  for (int64_t v : seen) ++count[v];
  for (const auto& batch : expected) {
    for (int64_t v : batch) ++count[v];
  }
  ASSERT_EQ(count.size(), 40u);
  for (const auto& [value, n] : count) EXPECT_EQ(n, 2) << value;

  for (int restart = 0; restart < 2; ++restart) {
    ClientSession fresh(root_);  // a new process's session: the iterator not initialized
    ASSERT_TRUE((*saver)->Restore(fresh, *prefix).ok());
    EXPECT_EQ(Rest(fresh), expected);
  }
}

TEST_F(IteratorCheckpointTest, ErrorsNameTheIterator) {
  ClientSession session(root_);
  auto state = session.Run({}, {ops::SerializeIterator(root_, iterator_)});
  EXPECT_TRUE(IsFailedPrecondition(state.status())) << state.status();
  EXPECT_THAT(state.status().message(), HasSubstr("has not been initialized"));

  auto fed = ops::Placeholder(root_, DT_STRING);
  auto restore = ops::DeserializeIterator(root_, iterator_, fed);
  Status bad =
      session.Run({{fed, Tensor::Scalar<std::string>("not a state")}}, {}, {restore}).status();
  EXPECT_TRUE(IsInvalidArgument(bad)) << bad;

  // A position past the pipeline's end: its input changed since the save.
  ASSERT_TRUE(session.Run({}, {}, {init_}).ok());
  auto saved = session.Run({}, {ops::SerializeIterator(root_, iterator_)});
  ASSERT_TRUE(saved.ok()) << saved.status();
  proto::IteratorState moved;
  ASSERT_TRUE(moved.ParseFromString((*saved)[0].scalar<std::string>()));
  moved.set_position(1000);
  Status past =
      session.Run({{fed, Tensor::Scalar(moved.SerializeAsString())}}, {}, {restore}).status();
  EXPECT_TRUE(IsFailedPrecondition(past)) << past;
  EXPECT_THAT(past.message(), HasSubstr("past the end"));

  auto on_tasks = train::Saver::Create(
      root_, {{.name = "input", .var = AsSaveable(), .kind = train::SaveableKind::kIterator}},
      {.checkpoint_dir = dir_.path(), .write_on_variable_tasks = true});
  EXPECT_TRUE(IsInvalidArgument(on_tasks.status())) << on_tasks.status();
  EXPECT_THAT(on_tasks.status().message(), HasSubstr("\"input\" is an iterator"));
}

}  // namespace
}  // namespace tw
