// Fashion-MNIST batches from TFRecord files of tf.train.Examples ("image_raw": the 784
// pixel bytes, "label": int64; examples/python/make_tfrecords.py writes them), read by a
// tf.data pipeline (tensorweave/data.h) where the trainer's step runs: this worker's shard
// of the records, shuffled, batched, parsed a batch at a time and prefetched, so that a
// step takes its batch from the pipeline instead of a feed.
#ifndef TENSORWEAVE_EXAMPLES_MNIST_INPUT_H_
#define TENSORWEAVE_EXAMPLES_MNIST_INPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensorweave/tensorweave.h"

namespace tw::examples {

struct MnistRecordOptions {
  int64_t batch_size = 100;
  int64_t num_shards = 1;  // the workers; each reads every num_shards-th record
  int64_t shard_index = 0;
  int64_t seed = 0;  // the shuffle's; 0: another order each run
};

struct MnistBatches {
  Output images;  // float [batch, 784], pixels in [0, 1]
  Output labels;  // int32 [batch]
};

// Builds the pipeline and its iterator in `scope` (on its device), repeating forever.
// InvalidArgument for no files or bad options; the pipeline's own errors when a step runs
// (NotFound naming a missing file, InvalidArgument naming a record that is no such Example).
StatusOr<MnistBatches> MnistRecordBatches(const Scope& scope, const std::vector<std::string>& files,
                                          const MnistRecordOptions& options);

}  // namespace tw::examples

#endif  // TENSORWEAVE_EXAMPLES_MNIST_INPUT_H_
