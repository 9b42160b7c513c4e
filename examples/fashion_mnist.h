// Fashion-MNIST input: a reader for IDX files (the format of MNIST and Fashion-MNIST), the
// dataset as Debian's `dataset-fashion-mnist` installs it, and a sharded, shuffling batch
// iterator that hands out Tensors ready to feed. A small data library of the examples
// (tw_fashion_mnist), kept out of the runtime so that tensorweave itself needs no zlib. The
// Python front-end binds it (python/native/datasets_binding.cc) for
// tensorweave.datasets.fashion_mnist, so both languages read, check and order alike.
//
//   auto train = tw::LoadFashionMnist(tw::DefaultFashionMnistDir(), "train");
//   if (!train.ok()) return train.status();
//   auto data = std::make_shared<const tw::ImageDataset>(*std::move(train));
//   auto it = tw::BatchIterator::Create(data, {.num_shards = 2, .shard_index = task, .seed = 7});
//   auto batch = it->Next(100);   // batch->images: float [100, 784]; batch->labels: int32 [100]
//   session.Run({{x, batch->images}, {y, batch->labels}}, ...);
//
// Error codes, for every function below: NotFound for a missing file (the message names it);
// DataLoss when the bytes are damaged (corrupt or truncated gzip, fewer or more data bytes
// than the IDX header declares); InvalidArgument when the file is readable but not what is
// expected (bad magic, element type other than unsigned byte, wrong rank, image and label
// counts that differ, a label outside 0..9, a bad argument). Every message names the file.
// Sizes in a header are never trusted: nothing is allocated for them beyond what the file
// can plausibly hold, and they are checked against the bytes actually present.
#ifndef TENSORWEAVE_EXAMPLES_FASHION_MNIST_H_
#define TENSORWEAVE_EXAMPLES_FASHION_MNIST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw {

// The contents of one IDX file of unsigned bytes: `data` holds product(dims) bytes in
// row-major order. A value type.
struct IdxArray {
  std::vector<int64_t> dims;  // 1 to 8 dimensions, each >= 0
  std::vector<uint8_t> data;
};

// Reads the IDX file at `path`, gzip-compressed or plain (told apart by the gzip magic bytes,
// not the name). Only element type 0x08 (unsigned byte) is supported. Errors as above, plus
// PermissionDenied or Unavailable when the file cannot be opened or read. Thread-safe.
StatusOr<IdxArray> ReadIdxFile(const std::string& path);

// Labelled grey-scale images, in file order. A value type; immutable once loaded, so one
// instance may be shared (std::shared_ptr<const ImageDataset>) by any number of threads.
struct ImageDataset {
  int64_t size = 0;  // number of examples
  int rows = 0;
  int cols = 0;
  // size * rows * cols pixels, row-major, as the file has them (0 to 255). Batches scale
  // them to [0, 1] (PixelValue): a quarter of the memory of floats, and a shuffled batch
  // reads a quarter of the bytes.
  std::vector<uint8_t> pixels;
  std::vector<int32_t> labels;  // size labels, each in [0, kNumClasses)

  static constexpr int kNumClasses = 10;
  int64_t example_size() const { return static_cast<int64_t>(rows) * cols; }
  // A pixel as a batch holds it: byte / 255, so 0 and 255 map to exactly 0 and 1.
  static float PixelValue(uint8_t byte) { return static_cast<float>(byte) / 255.0f; }
  // dst[i] = PixelValue(src[i]) for i < n (vectorized); src and dst must not overlap.
  static void ScalePixels(const uint8_t* src, float* dst, int64_t n);
};

// Loads split `split` ("train": 60,000 examples, or "t10k": 10,000) of Fashion-MNIST from
// `dir`: <split>-images-idx3-ubyte.gz and <split>-labels-idx1-ubyte.gz (the same names
// without .gz are used when the .gz files are absent). InvalidArgument for another split.
// Thread-safe. "train" decompresses and keeps 47 MB of pixels.
StatusOr<ImageDataset> LoadFashionMnist(const std::string& dir, std::string_view split);

// Where Debian's dataset-fashion-mnist package installs the files:
// /usr/share/datasets/fashion-mnist.
std::string DefaultFashionMnistDir();

// A batch of examples as Tensors to feed into a graph.
struct Batch {
  Tensor images;                 // DT_FLOAT [B, rows * cols]
  Tensor labels;                 // DT_INT32 [B]
  std::vector<int64_t> indices;  // the dataset index of each row, for tests and debugging
};

// Examples [begin, end) of `dataset` in order (for evaluation). InvalidArgument unless
// 0 <= begin <= end <= dataset.size.
StatusOr<Batch> ExampleRange(const ImageDataset& dataset, int64_t begin, int64_t end);

// Which examples of a dataset a shard holds, and how they are shuffled.
struct ShardOptions {
  int num_shards = 1;   // >= 1, at most the dataset's size
  int shard_index = 0;  // in [0, num_shards)
  uint64_t seed = 0;    // the shuffling seed; equal seeds give equal orders
  bool shuffle = true;  // false: index order every epoch
};

// The order in which one shard of a dataset is visited, epoch after epoch, as dataset
// indices: what BatchIterator hands out, without the data (so it serves any array of
// examples, such as the Python front-end's numpy arrays).
//
// Shard i of n holds the examples whose index is i modulo n: the shards are disjoint, cover
// the dataset, and differ in size by at most one. Each epoch visits every example of the
// shard once, in an order that is a function of (seed, shard_index, epoch) alone, so runs
// are reproducible and every epoch has a different order: the shard's indices in increasing
// order, shuffled by Fisher-Yates with std::mt19937_64 seeded from (seed, shard_index,
// epoch) and a rejection-sampled draw (no std:: distribution, whose results may differ
// between standard libraries). A batch that reaches the end of an epoch is completed from
// the start of the next one.
//
// A value type. Thread-compatible.
class ShardSampler {
 public:
  // InvalidArgument when dataset_size < 0 or the options are out of range (an empty shard
  // included).
  static StatusOr<ShardSampler> Create(int64_t dataset_size, const ShardOptions& options);

  // The next `batch_size` dataset indices of the shard (batch_size may exceed the shard's
  // size; the batch then spans several epochs). InvalidArgument when batch_size <= 0.
  StatusOr<std::vector<int64_t>> Next(int64_t batch_size);

  // The zero-based epoch the next index comes from: complete passes over the shard so far.
  int64_t epoch() const { return epoch_; }
  // Indices handed out so far.
  int64_t examples_seen() const { return examples_seen_; }
  // Number of examples in this shard.
  int64_t shard_size() const { return static_cast<int64_t>(order_.size()); }

 private:
  ShardSampler(int64_t dataset_size, const ShardOptions& options);
  // Puts the shard's indices in epoch_'s order.
  void Reorder();

  int64_t dataset_size_;
  ShardOptions options_;
  std::vector<int64_t> order_;  // the shard's dataset indices in this epoch's order
  int64_t position_ = 0;        // next entry of order_
  int64_t epoch_ = 0;
  int64_t examples_seen_ = 0;
};

// Hands out batches of one shard of a dataset, epoch after epoch, like TensorFlow's
// dataset.shard(n, i).shuffle(..., reshuffle_each_iteration=True).repeat().batch(B), in
// ShardSampler's order. Batches are always full: a batch that reaches the end of an epoch
// is completed from the start of the next one.
//
// Owns a reference to its dataset. Thread-compatible: one iterator per thread, or
// synchronize calls externally; iterators over the same dataset are independent.
class BatchIterator {
 public:
  using Options = ShardOptions;

  // InvalidArgument when `dataset` is null or the options are out of range (an empty shard
  // included).
  static StatusOr<BatchIterator> Create(std::shared_ptr<const ImageDataset> dataset,
                                        const Options& options);

  // The next `batch_size` examples of the shard (batch_size may exceed the shard's size;
  // the batch then spans several epochs). InvalidArgument when batch_size <= 0;
  // ResourceExhausted when the tensors cannot be allocated.
  StatusOr<Batch> Next(int64_t batch_size);

  // The zero-based epoch the next example comes from: the number of complete passes over
  // the shard so far.
  int64_t epoch() const { return sampler_.epoch(); }
  // Examples handed out so far.
  int64_t examples_seen() const { return sampler_.examples_seen(); }
  // Number of examples in this shard.
  int64_t shard_size() const { return sampler_.shard_size(); }
  const ImageDataset& dataset() const { return *dataset_; }

 private:
  BatchIterator(std::shared_ptr<const ImageDataset> dataset, ShardSampler sampler)
      : dataset_(std::move(dataset)), sampler_(std::move(sampler)) {}

  std::shared_ptr<const ImageDataset> dataset_;
  ShardSampler sampler_;
};

}  // namespace tw

#endif  // TENSORWEAVE_EXAMPLES_FASHION_MNIST_H_
