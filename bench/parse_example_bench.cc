// Parsing a batch of 100 Fashion-MNIST tf.train.Example records (a 784-byte image and four
// int64 features, as examples/python/make_tfrecords.py writes them) for two features,
// image_raw and label, on one thread, in the same run:
//
//   BM_MessageParse     protobuf's message parser, each record into an arena-allocated
//                       Example, the two features looked up and copied out (how the
//                       ParseExample kernel read records before src/ops/example_wire.h);
//   BM_WireReader       example_wire's ExampleParser and CopyValues alone;
//   BM_ParseExampleOp   the ParseExample kernel, as a pipeline's map runs it.
//
// Report records/s and the ratio of the first two.
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"
#include "google/protobuf/arena.h"
#include "src/framework/attr_value.h"
#include "src/ops/example_wire.h"

namespace tw::bench {
namespace {

constexpr int kBatch = 100;

std::vector<std::string> Records() {
  std::vector<std::string> out;
  for (int i = 0; i < kBatch; ++i) {
    proto::Example e;
    auto& map = *e.mutable_features()->mutable_feature();
    map["image_raw"].mutable_bytes_list()->add_value(std::string(784, static_cast<char>(i)));
    map["label"].mutable_int64_list()->add_value(i % 10);
    map["height"].mutable_int64_list()->add_value(28);
    map["width"].mutable_int64_list()->add_value(28);
    map["depth"].mutable_int64_list()->add_value(1);
    out.push_back(e.SerializeAsString());
  }
  return out;
}

void Records(benchmark::State& state) { state.SetItemsProcessed(state.iterations() * kBatch); }

void BM_MessageParse(benchmark::State& state) {
  const auto records = Records();
  Tensor images(DT_STRING, TensorShape({kBatch}));
  Tensor labels(DT_INT64, TensorShape({kBatch}));
  for (auto _ : state) {
    google::protobuf::Arena arena;
    for (int b = 0; b < kBatch; ++b) {
      auto* e = google::protobuf::Arena::CreateMessage<proto::Example>(&arena);
      if (!e->ParseFromString(records[b])) Die(errors::DataLoss("record ", b));
      const auto& map = e->features().feature();
      images.flat<std::string>()[b] = map.at("image_raw").bytes_list().value(0);
      labels.flat<int64_t>()[b] = map.at("label").int64_list().value(0);
    }
    benchmark::DoNotOptimize(images.raw_data());
  }
  Records(state);
}
BENCHMARK(BM_MessageParse);

void BM_WireReader(benchmark::State& state) {
  const auto records = Records();
  Tensor images(DT_STRING, TensorShape({kBatch}));
  Tensor labels(DT_INT64, TensorShape({kBatch}));
  example_wire::ExampleParser parser({"image_raw", "label"});
  std::vector<std::optional<example_wire::FeatureView>> views(2);
  for (auto _ : state) {
    for (int b = 0; b < kBatch; ++b) {
      if (!parser.Parse(records[b], absl::MakeSpan(views))) Die(errors::DataLoss("record ", b));
      example_wire::CopyValues(*views[0], 1, &images, b);
      example_wire::CopyValues(*views[1], 1, &labels, b);
    }
    benchmark::DoNotOptimize(images.raw_data());
  }
  if (parser.fallbacks() != 0) Die(errors::Internal("canonical records took the fallback"));
  Records(state);
}
BENCHMARK(BM_WireReader);

void BM_ParseExampleOp(benchmark::State& state) {
  const auto records = Records();
  proto::NodeDef node;
  node.set_name("parse");
  node.set_op("ParseExample");
  for (const char* input : {"serialized", "names", "key0", "key1", "default0", "default1"}) {
    node.add_input(input);
  }
  auto& attr = *node.mutable_attr();
  attr["Nsparse"] = MakeAttr(int64_t{0});
  attr["Ndense"] = MakeAttr(int64_t{2});
  attr["sparse_types"] = MakeAttr(std::vector<DataType>{});
  attr["Tdense"] = MakeAttr(std::vector<DataType>{DT_STRING, DT_INT64});
  attr["dense_shapes"] =
      MakeAttr(std::vector<PartialShape>{PartialShape::Of({}), PartialShape::Of({})});
  const std::vector<Tensor> inputs = {
      Tensor::FromVector<std::string>(records), Tensor::FromVector<std::string>({}),
      Tensor::Scalar<std::string>("image_raw"), Tensor::Scalar<std::string>("label"),
      Tensor::FromVector<std::string>({}),      Tensor::FromVector<int64_t>({})};
  RunKernel(state, node, inputs);
  Records(state);
}
BENCHMARK(BM_ParseExampleOp);

}  // namespace
}  // namespace tw::bench

BENCHMARK_MAIN();
