// Tests of tf.data's C++ core: pipelines described as DatasetDefs (as the Python layer
// writes them), built and iterated through the iterator ops in a session: sources,
// functions (map, filter, parallel map in order), batching with padding, shuffling with
// seeds, repeat/take/skip/shard/zip/concatenate, prefetch, cache, files, and the errors.
#include <stdlib.h>

#include <filesystem>
#include <numeric>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/data/dataset_test_util.h"
#include "src/framework/attr_value.h"
#include "src/io/record_writer.h"
#include "tensorweave/ops.h"
#include "tensorweave/ops/parsing_ops.h"
#include "tensorweave/protobuf/dataset.pb.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using data::testing::Function;
using data::testing::Ints;
using data::testing::Op;
using data::testing::Range;
using data::testing::With;

using ::testing::HasSubstr;

// Runs the pipeline to its end; each element's components as int64 vectors, flattened.
StatusOr<std::vector<std::vector<int64_t>>> Collect(const proto::DatasetDef& def,
                                                    const std::vector<Tensor>& inputs,
                                                    std::vector<DataType> types = {DT_INT64},
                                                    int limit = 1000) {
  Scope root = Scope::NewRootScope();
  auto it = root.AddNodeOutput("Iterator", {}, {{"output_types", MakeAttr(types)}});
  InputList captures(inputs.begin(), inputs.end());
  auto init = root.AddNode("MakeIterator", {{it}, captures},
                           {{"dataset", MakeAttr(def.SerializeAsString())}});
  auto next = root.AddNode("IteratorGetNext", {{it}}, {{"output_types", MakeAttr(types)}});
  TW_RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  TW_RETURN_IF_ERROR(session.Run({}, {}, {init}).status());
  std::vector<Output> fetches;
  for (size_t i = 0; i < types.size(); ++i) fetches.push_back(Output(next, static_cast<int>(i)));
  std::vector<std::vector<int64_t>> out;
  for (int n = 0; n < limit; ++n) {
    auto got = session.Run({}, fetches);
    if (IsOutOfRange(got.status())) return out;
    TW_RETURN_IF_ERROR(got.status());
    std::vector<int64_t> flat;
    for (const Tensor& t : *got) {
      for (int64_t j = 0; j < t.num_elements(); ++j) {
        flat.push_back(t.dtype() == DT_INT64 ? t.flat<int64_t>()[j] : t.flat<int32_t>()[j]);
      }
    }
    out.push_back(flat);
  }
  return errors::Internal("the dataset did not end");
}

std::vector<std::vector<int64_t>> Singles(std::vector<int64_t> v) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t x : v) out.push_back({x});
  return out;
}

TEST(DatasetTest, RangeMapFilterInOrder) {
  auto map = Op("Map", {Range(0)});
  *map.add_functions() = Function([](const Scope& s, Output x) { return ops::Mul(s, x, x); });
  auto filter = Op("Filter", {map});
  *filter.add_functions() = Function([](const Scope& s, Output x) {
    return ops::Equal(s, ops::FloorMod(s, x, int64_t{2}), int64_t{0});
  });
  auto got = Collect(filter, Ints({0, 7, 1}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, Singles({0, 4, 16, 36}));
}

TEST(DatasetTest, ParallelMapKeepsTheInputOrder) {
  auto map = With(Op("Map", {Range(0)}), "num_parallel_calls", int64_t{4});
  *map.add_functions() =
      Function([](const Scope& s, Output x) { return ops::Add(s, x, int64_t{100}); });
  auto got = Collect(map, Ints({0, 200, 1}));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ((*got)[i][0], 100 + i);
}

// A session may end with its pipeline mid-way: a parallel map's workers inside calls of
// their function on the session's device. The device stops the pipeline before its
// compute pool goes (a map function's step used to find the pool gone and crash).
TEST(DatasetTest, ASessionEndsWhileItsParallelMapRuns) {
  auto map = With(Op("Map", {Range(0)}), "num_parallel_calls", int64_t{4});
  *map.add_functions() = Function([](const Scope& s, Output x) {
    Output m = ops::Fill(s, {192, 192}, 1.0f);
    for (int i = 0; i < 4; ++i) m = ops::MatMul(s, m, m);  // a few ms per element
    Output zero = ops::Mul(s, ops::Cast(s, ops::Sum(s, m, {0, 1}), DT_INT64), int64_t{0});
    return ops::Add(s, x, zero);
  });
  const auto prefetched = With(Op("Prefetch", {map}), "buffer_size", int64_t{2});
  for (int round = 0; round < 5; ++round) {
    Scope root = Scope::NewRootScope();
    const std::vector<DataType> types = {DT_INT64};
    auto it = root.AddNodeOutput("Iterator", {}, {{"output_types", MakeAttr(types)}});
    InputList captures;
    for (const Tensor& t : Ints({0, 1000, 1})) captures.push_back(t);
    auto init = root.AddNode("MakeIterator", {{it}, captures},
                             {{"dataset", MakeAttr(prefetched.SerializeAsString())}});
    auto next = root.AddNodeOutput("IteratorGetNext", {{it}}, {{"output_types", MakeAttr(types)}});
    ASSERT_TRUE(root.status().ok()) << root.status();
    ClientSession session(root);
    ASSERT_TRUE(session.Run({}, {}, {init}).ok());
    auto first = session.Run({}, {next});
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ((*first)[0].scalar<int64_t>(), 0);
  }  // each session goes with its map's workers busy
}

TEST(DatasetTest, BatchDropRemainderAndPaddedBatch) {
  auto batch =
      With(With(Op("Batch", {Range(0)}), "batch_size", int64_t{3}), "drop_remainder", false);
  EXPECT_EQ(*Collect(batch, Ints({0, 7, 1})),
            (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  auto dropped =
      With(With(Op("Batch", {Range(0)}), "batch_size", int64_t{3}), "drop_remainder", true);
  EXPECT_EQ(Collect(dropped, Ints({0, 7, 1}))->size(), 2u);

  // Elements [x] of x copies of x, padded with -1 to the batch's longest.
  auto fill = Op("Map", {Range(0)});
  *fill.add_functions() = Function([](const Scope& s, Output x) {
    return ops::Fill(s, ops::Reshape(s, x, Tensor::FromVector<int64_t>({1})), x);
  });
  auto padded = With(
      With(With(Op("PaddedBatch", {fill}, {3}), "batch_size", int64_t{2}), "drop_remainder", false),
      "padded_shapes", std::vector<PartialShape>{PartialShape::Of({-1})});
  std::vector<Tensor> inputs = Ints({1, 4, 1});
  inputs.push_back(Tensor::Scalar<int64_t>(-1));
  EXPECT_EQ(*Collect(padded, inputs),
            (std::vector<std::vector<int64_t>>{{1, -1, 2, 2}, {3, 3, 3}}));
}

// SparseTensor components (indices, values, dense_shape) batch one rank up: the element's
// place in the batch first in each index, the dense shape the largest of each dimension.
TEST(DatasetTest, BatchOfSparseComponents) {
  // Three elements: a dense int64, then a SparseTensor of rank 1 with 1, 0 and 2 values.
  auto element = [](int at) { return Op("Tensors", {}, {at, at + 1, at + 2, at + 3}); };
  auto three = Op("Concatenate", {Op("Concatenate", {element(0), element(4)}), element(8)});
  auto batch =
      With(With(With(Op("Batch", {three}), "batch_size", int64_t{3}), "drop_remainder", false),
           "sparse_components", std::vector<int64_t>{1});
  auto shape = [](int64_t n) { return Tensor::FromVector<int64_t>({n}); };
  auto indices = [](std::vector<int64_t> at) {
    Tensor t(DT_INT64, TensorShape({static_cast<int64_t>(at.size()), 1}));
    std::copy(at.begin(), at.end(), t.flat<int64_t>().data());
    return t;
  };
  std::vector<Tensor> inputs = {
      Tensor::Scalar(int64_t{10}), indices({2}),    Tensor::FromVector<int64_t>({7}),    shape(4),
      Tensor::Scalar(int64_t{11}), indices({}),     Tensor::FromVector<int64_t>({}),     shape(0),
      Tensor::Scalar(int64_t{12}), indices({0, 5}), Tensor::FromVector<int64_t>({8, 9}), shape(6)};
  auto got = Collect(batch, inputs, {DT_INT64, DT_INT64, DT_INT64, DT_INT64});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  // dense [3], indices [3, 2], values [3], dense_shape [2], flattened in turn.
  EXPECT_EQ((*got)[0], (std::vector<int64_t>{10, 11, 12, 0, 2, 2, 0, 2, 5, 7, 8, 9, 3, 6}));

  // Ranks that differ within a batch, and a component that is no SparseTensor.
  inputs[7] = Tensor::FromVector<int64_t>({0, 0});
  inputs[5] = Tensor(DT_INT64, TensorShape({0, 2}));
  got = Collect(batch, inputs, {DT_INT64, DT_INT64, DT_INT64, DT_INT64});
  EXPECT_TRUE(IsInvalidArgument(got.status())) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("Cannot batch SparseTensors of ranks 1 and 2"));
  auto off = With(batch, "sparse_components", std::vector<int64_t>{2});
  got = Collect(off, inputs, {DT_INT64, DT_INT64, DT_INT64, DT_INT64});
  EXPECT_TRUE(IsInvalidArgument(got.status())) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("outside the 4 components"));
}

TEST(DatasetTest, ShuffleIsAPermutationFixedBySeedAndNewEachEpoch) {
  auto shuffle = [](int64_t seed, bool reshuffle) {
    auto s =
        With(With(With(With(Op("Shuffle", {Range(0)}), "buffer_size", int64_t{100}), "seed", seed),
                  "seed2", int64_t{0}),
             "reshuffle_each_iteration", reshuffle);
    return With(Op("Repeat", {s}), "count", int64_t{2});
  };
  auto a = *Collect(shuffle(5, true), Ints({0, 20, 1}));
  auto b = *Collect(shuffle(5, true), Ints({0, 20, 1}));
  ASSERT_EQ(a.size(), 40u);
  EXPECT_EQ(a, b);  // the same seed, the same orders
  std::vector<std::vector<int64_t>> first(a.begin(), a.begin() + 20),
      second(a.begin() + 20, a.end());
  EXPECT_NE(first, second);  // a new order in the second epoch
  auto sorted = first;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> all(20);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, Singles(all));
  auto same = *Collect(shuffle(5, false), Ints({0, 20, 1}));
  EXPECT_EQ(std::vector<std::vector<int64_t>>(same.begin(), same.begin() + 20),
            std::vector<std::vector<int64_t>>(same.begin() + 20, same.end()));
}

TEST(DatasetTest, TakeSkipShardZipConcatenatePrefetchCache) {
  auto take = With(Op("Take", {Range(0)}), "count", int64_t{3});
  EXPECT_EQ(*Collect(take, Ints({0, 10, 1})), Singles({0, 1, 2}));
  auto skip = With(Op("Skip", {Range(0)}), "count", int64_t{8});
  EXPECT_EQ(*Collect(skip, Ints({0, 10, 1})), Singles({8, 9}));
  auto shard = With(With(Op("Shard", {Range(0)}), "num_shards", int64_t{3}), "index", int64_t{1});
  EXPECT_EQ(*Collect(shard, Ints({0, 10, 1})), Singles({1, 4, 7}));
  auto zip = Op("Zip", {Range(0), Range(3)});
  EXPECT_EQ(*Collect(zip, Ints({0, 3, 1, 10, 20, 1}), {DT_INT64, DT_INT64}),
            (std::vector<std::vector<int64_t>>{{0, 10}, {1, 11}, {2, 12}}));
  auto concat = Op("Concatenate", {Range(0), Range(3)});
  EXPECT_EQ(*Collect(concat, Ints({0, 2, 1, 7, 9, 1})), Singles({0, 1, 7, 8}));
  auto prefetch = With(Op("Prefetch", {Range(0)}), "buffer_size", int64_t{2});
  EXPECT_EQ(Collect(prefetch, Ints({0, 50, 1}))->size(), 50u);
  auto cache = With(Op("Repeat", {Op("Cache", {Range(0)})}), "count", int64_t{3});
  EXPECT_EQ(Collect(cache, Ints({0, 4, 1}))->size(), 12u);
}

TEST(DatasetTest, TFRecordFilesInOrderAndErrorsNamed) {
  std::string templ = std::filesystem::temp_directory_path().string() + "/tw_data_XXXXXX";
  ASSERT_NE(mkdtemp(templ.data()), nullptr);
  std::vector<std::string> files;
  for (int f = 0; f < 2; ++f) {
    files.push_back(templ + "/part-" + std::to_string(f));
    auto w = io::RecordWriter::Create(files.back(), {.compression = io::Compression::kGzip});
    for (int r = 0; r < 3; ++r) ASSERT_TRUE((*w)->Write(std::to_string(10 * f + r)).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  auto records = With(Op("TFRecord", {}, {0}), "compression_type", std::string("GZIP"));
  auto numbers = Op("Map", {records});
  proto::DatasetFunction fn;
  {
    Scope s = Scope::NewRootScope();
    auto x = ops::Placeholder(s.WithOpName("x"), DT_STRING);
    auto y = ops::StringToNumber(s, x, DT_INT64);
    *fn.mutable_graph() = *s.ToGraphDef();
    fn.add_args("x");
    fn.add_outputs(y.name());
  }
  *numbers.add_functions() = fn;
  auto got = Collect(numbers, {Tensor::FromVector<std::string>(files)});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, Singles({0, 1, 2, 10, 11, 12}));

  auto missing = Collect(Op("TFRecord", {}, {0}), {Tensor::Scalar(templ + "/nope")}, {DT_STRING});
  EXPECT_TRUE(IsNotFound(missing.status())) << missing.status();
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr(templ + "/nope"));
  std::filesystem::remove_all(templ);
}

TEST(DatasetTest, ExperimentalIgnoreErrorsUnbatchSample) {
  auto batched =
      With(With(Op("Batch", {Range(0)}), "batch_size", int64_t{4}), "drop_remainder", false);
  EXPECT_EQ(*Collect(Op("Unbatch", {batched}), Ints({0, 10, 1})),
            Singles({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));

  // 12 / (x - 3) fails its check at x = 3 only: that element is dropped.
  auto risky = Op("Map", {Range(0)});
  *risky.add_functions() = Function([](const Scope& s, Output x) {
    Output q = ops::Div(s, 12.0f, ops::Cast(s, ops::Sub(s, x, int64_t{3}), DT_FLOAT));
    return ops::Cast(s, ops::CheckNumerics(s, q, "q"), DT_INT64);
  });
  EXPECT_FALSE(Collect(risky, Ints({0, 6, 1})).ok());
  EXPECT_EQ(*Collect(Op("IgnoreErrors", {risky}), Ints({0, 6, 1})), Singles({-4, -6, -12, 12, 6}));

  auto sample = With(Op("SampleFromDatasets", {Range(0), Range(3)}), "seed", int64_t{5});
  for (float w : {1.0f, 3.0f}) (*sample.mutable_attrs())["weights"].mutable_list()->add_f(w);
  auto drawn = *Collect(sample, Ints({0, 50, 1, 100, 150, 1}));
  ASSERT_EQ(drawn.size(), 100u);
  std::vector<int64_t> low, all;
  for (const auto& e : drawn) {
    all.push_back(e[0]);
    if (e[0] < 50) low.push_back(e[0]);
  }
  std::vector<int64_t> expected_low(50);
  std::iota(expected_low.begin(), expected_low.end(), 0);
  EXPECT_EQ(low, expected_low);  // each input's order is kept
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 100u);  // each element once
  EXPECT_EQ(*Collect(sample, Ints({0, 50, 1, 100, 150, 1})), drawn);  // seeded
}

TEST(DatasetTest, ErrorsAreClear) {
  auto bad_op = Collect(Op("NoSuchDataset"), {});
  EXPECT_THAT(std::string(bad_op.status().message()),
              HasSubstr("unknown dataset op \"NoSuchDataset\""));
  auto wrong_type = Collect(Range(0), Ints({0, 3, 1}), {DT_FLOAT});
  EXPECT_THAT(std::string(wrong_type.status().message()),
              HasSubstr("component 0 is int64 but the iterator expects float"));
  auto bad_map = Op("Map", {Range(0)});
  *bad_map.add_functions() = Function([](const Scope& s, Output x) {
    return ops::CheckNumerics(s, ops::Div(s, ops::Cast(s, x, DT_FLOAT), 0.0f), "division");
  });
  auto failed = Collect(bad_map, Ints({0, 3, 1}), {DT_FLOAT});
  EXPECT_THAT(std::string(failed.status().message()), HasSubstr("map function"));

  // GetNext before the initializer: TF's message.
  Scope root = Scope::NewRootScope();
  auto it = root.AddNodeOutput("Iterator", {},
                               {{"output_types", MakeAttr(std::vector<DataType>{DT_INT64})}});
  auto next = root.AddNodeOutput("IteratorGetNext", {{it}},
                                 {{"output_types", MakeAttr(std::vector<DataType>{DT_INT64})}});
  ClientSession session(root);
  auto early = session.Run({}, {next});
  EXPECT_TRUE(absl::IsFailedPrecondition(early.status())) << early.status();
  EXPECT_THAT(std::string(early.status().message()),
              HasSubstr("the iterator has not been initialized"));
}

}  // namespace
}  // namespace tw
