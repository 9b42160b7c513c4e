#include "examples/mnist_input.h"

#include "tensorweave/ops/parsing_ops.h"

namespace tw::examples {

StatusOr<MnistBatches> MnistRecordBatches(const Scope& scope, const std::vector<std::string>& files,
                                          const MnistRecordOptions& options) {
  if (files.empty()) return errors::InvalidArgument("--train_files: no files given");
  if (options.batch_size <= 0 || options.num_shards <= 0 || options.shard_index < 0 ||
      options.shard_index >= options.num_shards) {
    return errors::InvalidArgument("MnistRecordBatches: batch size ", options.batch_size,
                                   ", shard ", options.shard_index, " of ", options.num_shards);
  }
  // Parsing a batch at once (after batch) is TensorFlow's advice: one call for 100 records.
  auto parse = [](const Scope& s, const std::vector<Output>& records) {
    auto parsed = ops::ParseExample(
        s, records[0], {},
        {{.key = "image_raw", .dtype = DT_STRING}, {.key = "label", .dtype = DT_INT64}});
    Output pixels = ops::DecodeRaw(s, parsed.dense[0], DT_UINT8);
    Output images = ops::Div(s, ops::Cast(s, pixels, DT_FLOAT), 255.0f);
    return std::vector<Output>{ops::Reshape(s, images, {-1, 784}),
                               ops::Cast(s, parsed.dense[1], DT_INT32)};
  };
  const data::Dataset batches = data::Dataset::TFRecord(files)
                                    .Shard(options.num_shards, options.shard_index)
                                    .Repeat()
                                    .Shuffle(10000, options.seed)
                                    .Batch(options.batch_size)
                                    .Map(parse)
                                    .Prefetch(1);
  TW_ASSIGN_OR_RETURN(data::Iterator it, data::MakeOneShotIterator(scope, batches));
  std::vector<Output> next = data::GetNext(scope, it);
  TW_RETURN_IF_ERROR(scope.status());
  return MnistBatches{next[0], next[1]};
}

}  // namespace tw::examples
