#include "examples/fashion_mnist.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using Bytes = std::vector<uint8_t>;

// ---- the real data, as Debian's dataset-fashion-mnist installs it ----

class FashionMnistDataTest : public ::testing::Test {
 protected:
  // Loaded once: the training split is 47 MB to decompress and scale.
  static void SetUpTestSuite() {
    auto train = LoadFashionMnist(DefaultFashionMnistDir(), "train");
    ASSERT_TRUE(train.ok()) << train.status() << " (bash scripts/setup.sh installs the data)";
    train_ = std::make_shared<const ImageDataset>(*std::move(train));
    auto test = LoadFashionMnist(DefaultFashionMnistDir(), "t10k");
    ASSERT_TRUE(test.ok()) << test.status();
    test_ = std::make_shared<const ImageDataset>(*std::move(test));
  }
  void SetUp() override {
    ASSERT_NE(train_, nullptr);
    ASSERT_NE(test_, nullptr);
  }
  static void TearDownTestSuite() {
    train_.reset();
    test_.reset();
  }

  static std::shared_ptr<const ImageDataset> train_;
  static std::shared_ptr<const ImageDataset> test_;
};

std::shared_ptr<const ImageDataset> FashionMnistDataTest::train_;
std::shared_ptr<const ImageDataset> FashionMnistDataTest::test_;

// Whether the 784 floats at `row` are example `index` of `data` scaled to [0, 1].
bool RowHolds(const float* row, const ImageDataset& data, int64_t index) {
  const uint8_t* pixels = data.pixels.data() + index * data.example_size();
  for (int64_t i = 0; i < data.example_size(); ++i) {
    if (row[i] != ImageDataset::PixelValue(pixels[i])) return false;
  }
  return true;
}

std::vector<int64_t> ClassCounts(const ImageDataset& data) {
  std::vector<int64_t> counts(ImageDataset::kNumClasses, 0);
  for (int32_t label : data.labels) {
    if (label >= 0 && label < ImageDataset::kNumClasses) ++counts[label];
  }
  return counts;
}

TEST_F(FashionMnistDataTest, TrainSplitHas60000BalancedExamples) {
  EXPECT_EQ(train_->size, 60000);
  EXPECT_EQ(train_->rows, 28);
  EXPECT_EQ(train_->cols, 28);
  EXPECT_EQ(train_->example_size(), 784);
  ASSERT_EQ(train_->pixels.size(), size_t{60000} * 784);
  ASSERT_EQ(train_->labels.size(), size_t{60000});
  EXPECT_EQ(train_->labels[0], 9);  // an ankle boot, as in every Fashion-MNIST description
  EXPECT_EQ(ClassCounts(*train_), std::vector<int64_t>(10, 6000));
}

TEST_F(FashionMnistDataTest, TestSplitHas10000BalancedExamples) {
  EXPECT_EQ(test_->size, 10000);
  EXPECT_EQ(test_->rows, 28);
  EXPECT_EQ(test_->cols, 28);
  ASSERT_EQ(test_->pixels.size(), size_t{10000} * 784);
  EXPECT_EQ(test_->labels[0], 9);
  EXPECT_EQ(ClassCounts(*test_), std::vector<int64_t>(10, 1000));
}

TEST_F(FashionMnistDataTest, PixelsAreTheFilesBytesAndBatchesScaleThemToZeroOne) {
  auto raw = ReadIdxFile(DefaultFashionMnistDir() + "/train-images-idx3-ubyte.gz");
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(raw->dims, (std::vector<int64_t>{60000, 28, 28}));
  EXPECT_EQ(train_->pixels, raw->data);
  EXPECT_EQ(ImageDataset::PixelValue(0), 0.0f);
  EXPECT_EQ(ImageDataset::PixelValue(255), 1.0f);  // exactly
  EXPECT_EQ(ImageDataset::PixelValue(51), 0.2f);
  // A batch of every example holds every pixel / 255, 0 and 1 included.
  auto all = ExampleRange(*train_, 0, train_->size);
  ASSERT_TRUE(all.ok()) << all.status();
  auto values = all->images.flat<float>();
  ASSERT_EQ(static_cast<size_t>(values.size()), raw->data.size());
  size_t wrong = 0;
  for (size_t i = 0; i < raw->data.size(); ++i) {
    if (values[i] != static_cast<float>(raw->data[i]) / 255.0f) ++wrong;
  }
  EXPECT_EQ(wrong, 0u);
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  EXPECT_EQ(*lo, 0.0f);
  EXPECT_EQ(*hi, 1.0f);  // 255 occurs
}

TEST_F(FashionMnistDataTest, ReadIdxFileGivesDimsAndBytes) {
  auto labels = ReadIdxFile(DefaultFashionMnistDir() + "/t10k-labels-idx1-ubyte.gz");
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(labels->dims, std::vector<int64_t>{10000});
  ASSERT_EQ(labels->data.size(), size_t{10000});
  for (size_t i = 0; i < 100; ++i) EXPECT_EQ(labels->data[i], test_->labels[i]);
}

TEST_F(FashionMnistDataTest, ExampleRangeCopiesInOrder) {
  auto batch = ExampleRange(*test_, 10, 15);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->images.shape(), TensorShape({5, 784}));
  EXPECT_EQ(batch->images.dtype(), DT_FLOAT);
  EXPECT_EQ(batch->labels.shape(), TensorShape({5}));
  EXPECT_EQ(batch->labels.dtype(), DT_INT32);
  EXPECT_EQ(batch->indices, (std::vector<int64_t>{10, 11, 12, 13, 14}));
  auto images = batch->images.flat<float>();
  for (int row = 0; row < 5; ++row) {
    EXPECT_EQ(batch->labels.flat<int32_t>()[row], test_->labels[10 + row]);
    EXPECT_TRUE(RowHolds(images.data() + row * 784, *test_, 10 + row)) << "row " << row;
  }
  EXPECT_TRUE(ExampleRange(*test_, 0, 0).ok());
  EXPECT_TRUE(IsInvalidArgument(ExampleRange(*test_, 5, 4).status()));
  EXPECT_TRUE(IsInvalidArgument(ExampleRange(*test_, 0, 10001).status()));
  EXPECT_TRUE(IsInvalidArgument(ExampleRange(*test_, -1, 3).status()));
}

// One epoch of every shard: disjoint, covering, sizes within one of each other.
void ExpectShardsPartition(std::shared_ptr<const ImageDataset> data, int num_shards) {
  std::vector<int> seen(static_cast<size_t>(data->size), 0);
  int64_t smallest = data->size, largest = 0;
  for (int shard = 0; shard < num_shards; ++shard) {
    auto it =
        BatchIterator::Create(data, {.num_shards = num_shards, .shard_index = shard, .seed = 5});
    ASSERT_TRUE(it.ok()) << it.status();
    smallest = std::min(smallest, it->shard_size());
    largest = std::max(largest, it->shard_size());
    int64_t taken = 0;
    while (it->epoch() == 0) {
      const int64_t n = std::min<int64_t>(1000, it->shard_size() - taken);
      auto batch = it->Next(n);
      ASSERT_TRUE(batch.ok()) << batch.status();
      for (int64_t index : batch->indices) {
        ASSERT_GE(index, 0);
        ASSERT_LT(index, data->size);
        EXPECT_EQ(index % num_shards, shard);
        ++seen[static_cast<size_t>(index)];
      }
      taken += n;
    }
    EXPECT_EQ(taken, it->shard_size());
  }
  EXPECT_LE(largest - smallest, 1);
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "example " << i;
}

TEST_F(FashionMnistDataTest, ShardsAreDisjointAndCovering) {
  ExpectShardsPartition(train_, 3);
  ExpectShardsPartition(test_, 7);
  ExpectShardsPartition(test_, 1);
}

std::vector<int64_t> Indices(BatchIterator& it, int64_t n) {
  auto batch = it.Next(n);
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? batch->indices : std::vector<int64_t>{};
}

bool IsPermutation(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  std::vector<int64_t> expected(static_cast<size_t>(n));
  std::iota(expected.begin(), expected.end(), 0);
  return v == expected;
}

TEST_F(FashionMnistDataTest, ReshufflesEachEpochDeterministicallyPerSeed) {
  auto a = BatchIterator::Create(test_, {.seed = 42});
  auto b = BatchIterator::Create(test_, {.seed = 42});
  auto c = BatchIterator::Create(test_, {.seed = 43});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());

  std::vector<int64_t> epoch0 = Indices(*a, 10000);
  EXPECT_EQ(a->epoch(), 1);
  std::vector<int64_t> epoch1 = Indices(*a, 10000);
  EXPECT_EQ(a->epoch(), 2);
  EXPECT_TRUE(IsPermutation(epoch0, 10000));
  EXPECT_TRUE(IsPermutation(epoch1, 10000));
  EXPECT_NE(epoch0, epoch1);
  std::vector<int64_t> identity(10000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(epoch0, identity);

  // Same seed, other batch sizes (crossing the epoch boundary mid-batch): same sequence.
  std::vector<int64_t> b_all;
  while (b_all.size() < 20000) {
    std::vector<int64_t> part = Indices(*b, 3000);
    b_all.insert(b_all.end(), part.begin(), part.end());
  }
  b_all.resize(20000);
  std::vector<int64_t> a_all = epoch0;
  a_all.insert(a_all.end(), epoch1.begin(), epoch1.end());
  EXPECT_EQ(a_all, b_all);

  EXPECT_NE(Indices(*c, 10000), epoch0);
}

TEST_F(FashionMnistDataTest, BatchesHoldTheirExamples) {
  auto it = BatchIterator::Create(train_, {.num_shards = 2, .shard_index = 1, .seed = 9});
  ASSERT_TRUE(it.ok()) << it.status();
  auto batch = it->Next(64);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->images.shape(), TensorShape({64, 784}));
  EXPECT_EQ(batch->labels.shape(), TensorShape({64}));
  ASSERT_EQ(batch->indices.size(), size_t{64});
  auto images = batch->images.flat<float>();
  for (int row = 0; row < 64; ++row) {
    const int64_t index = batch->indices[row];
    EXPECT_EQ(batch->labels.flat<int32_t>()[row], train_->labels[index]);
    EXPECT_TRUE(RowHolds(images.data() + row * 784, *train_, index)) << "row " << row;
  }
  EXPECT_EQ(it->examples_seen(), 64);
  EXPECT_EQ(it->epoch(), 0);
}

// ---- the iterator on a small synthetic dataset ----

std::shared_ptr<const ImageDataset> TinyDataset(int64_t size) {
  ImageDataset data;
  data.size = size;
  data.rows = 1;
  data.cols = 2;
  for (int64_t i = 0; i < size; ++i) {
    data.pixels.push_back(static_cast<uint8_t>(i));
    data.pixels.push_back(static_cast<uint8_t>(100 + i));
    data.labels.push_back(static_cast<int32_t>(i % 10));
  }
  return std::make_shared<const ImageDataset>(std::move(data));
}

TEST(BatchIteratorTest, BatchesSpanEpochBoundaries) {
  auto it = BatchIterator::Create(TinyDataset(10), {.shuffle = false});
  ASSERT_TRUE(it.ok()) << it.status();
  EXPECT_EQ(Indices(*it, 7), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(it->epoch(), 0);
  EXPECT_EQ(Indices(*it, 7), (std::vector<int64_t>{7, 8, 9, 0, 1, 2, 3}));
  EXPECT_EQ(it->epoch(), 1);
  EXPECT_EQ(Indices(*it, 3), (std::vector<int64_t>{4, 5, 6}));
  // Larger than the shard: several epochs in one batch.
  EXPECT_EQ(Indices(*it, 25).size(), size_t{25});
  EXPECT_EQ(it->epoch(), 4);
  EXPECT_EQ(it->examples_seen(), 42);

  auto batch = it->Next(2);  // examples 2 and 3
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->images,
            Tensor::FromVector<float>({2 / 255.0f, 102 / 255.0f, 3 / 255.0f, 103 / 255.0f},
                                      TensorShape({2, 2})));
  EXPECT_EQ(batch->labels, Tensor::FromVector<int32_t>({2, 3}));
}

TEST(BatchIteratorTest, ShardOfUnevenDataset) {
  auto it =
      BatchIterator::Create(TinyDataset(10), {.num_shards = 4, .shard_index = 3, .shuffle = false});
  ASSERT_TRUE(it.ok()) << it.status();
  EXPECT_EQ(it->shard_size(), 2);
  EXPECT_EQ(Indices(*it, 5), (std::vector<int64_t>{3, 7, 3, 7, 3}));
}

// The order is pinned: runs must be reproducible wherever the trainer runs, and the Python
// front-end (python/tests/test_fashion_mnist.py) expects these same indices.
TEST(ShardSamplerTest, PinnedOrders) {
  auto sampler = ShardSampler::Create(10000, {.seed = 42});
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  auto batch = sampler->Next(10);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(*batch,
            (std::vector<int64_t>{7625, 5073, 8845, 3895, 9709, 5691, 7014, 8558, 1109, 5823}));
  sampler = ShardSampler::Create(10000, {.num_shards = 3, .shard_index = 1, .seed = 7});
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  EXPECT_EQ(*sampler->Next(8),
            (std::vector<int64_t>{8473, 9448, 3817, 8221, 694, 1033, 4402, 7066}));
  // Three epochs of five examples in one batch; a seed of -1 is 2^64 - 1.
  sampler = ShardSampler::Create(5, {.seed = 3});
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  EXPECT_EQ(*sampler->Next(15),
            (std::vector<int64_t>{2, 1, 4, 0, 3, 2, 0, 1, 3, 4, 3, 4, 2, 1, 0}));
  EXPECT_EQ(sampler->epoch(), 3);
  EXPECT_EQ(sampler->examples_seen(), 15);
  sampler = ShardSampler::Create(5, {.seed = ~uint64_t{0}});
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  EXPECT_EQ(*sampler->Next(10), (std::vector<int64_t>{0, 4, 1, 2, 3, 1, 3, 2, 0, 4}));
}

TEST(ShardSamplerTest, IsTheBatchIteratorsOrder) {
  auto it = BatchIterator::Create(TinyDataset(23), {.num_shards = 2, .shard_index = 1, .seed = 8});
  auto sampler = ShardSampler::Create(23, {.num_shards = 2, .shard_index = 1, .seed = 8});
  ASSERT_TRUE(it.ok() && sampler.ok());
  EXPECT_EQ(sampler->shard_size(), 11);
  for (int64_t size : {1, 5, 11, 30, 2}) {
    EXPECT_EQ(Indices(*it, size), *sampler->Next(size)) << "batch of " << size;
    EXPECT_EQ(it->epoch(), sampler->epoch());
  }
}

TEST(ShardSamplerTest, RejectsBadArguments) {
  auto status = ShardSampler::Create(-1, {}).status();
  EXPECT_TRUE(IsInvalidArgument(status)) << status;
  status = ShardSampler::Create(10, {.num_shards = 0}).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("num_shards is 0, must be at least 1"));
  status = ShardSampler::Create(10, {.num_shards = 2, .shard_index = 2}).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("shard_index 2 is outside [0, 2)"));
  status = ShardSampler::Create(0, {}).status();
  EXPECT_TRUE(IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("shard 0 of 1 is empty"));
  auto sampler = ShardSampler::Create(10, {});
  ASSERT_TRUE(sampler.ok());
  status = sampler->Next(-3).status();
  EXPECT_TRUE(IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("batch_size is -3, must be positive"));
  EXPECT_EQ(sampler->examples_seen(), 0);
}

TEST(BatchIteratorTest, RejectsBadOptions) {
  auto data = TinyDataset(10);
  auto status = BatchIterator::Create(nullptr, {}).status();
  EXPECT_TRUE(IsInvalidArgument(status)) << status;
  status = BatchIterator::Create(data, {.num_shards = 0}).status();
  EXPECT_TRUE(IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("num_shards is 0"));
  status = BatchIterator::Create(data, {.num_shards = 2, .shard_index = 2}).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("shard_index 2 is outside [0, 2)"));
  status = BatchIterator::Create(data, {.num_shards = 2, .shard_index = -1}).status();
  EXPECT_TRUE(IsInvalidArgument(status)) << status;
  status = BatchIterator::Create(data, {.num_shards = 12, .shard_index = 10}).status();
  EXPECT_TRUE(IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("is empty: the dataset has only 10"));

  auto it = BatchIterator::Create(data, {});
  ASSERT_TRUE(it.ok());
  status = it->Next(0).status();
  EXPECT_TRUE(IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("batch_size is 0"));
}

// ---- damaged and malformed files ----

Bytes Idx(uint8_t type, const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes out = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(d >> shift));
  }
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Bytes Gzip(const Bytes& plain) {
  uLongf size = compressBound(static_cast<uLong>(plain.size())) + 32;
  Bytes out(size);
  z_stream stream{};
  // windowBits 15 + 16: a gzip wrapper rather than zlib's.
  EXPECT_EQ(deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  stream.next_in = const_cast<Bytes::value_type*>(plain.data());
  stream.avail_in = static_cast<uInt>(plain.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

Bytes ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class FashionMnistErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("fashion_mnist_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const Bytes& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    EXPECT_TRUE(out.good()) << path;
    return path;
  }

  // ReadIdxFile(path) must fail with `code` and a message naming the path and containing
  // `detail`.
  void ExpectError(const std::string& path, absl::StatusCode code, const std::string& detail) {
    auto result = ReadIdxFile(path);
    ASSERT_FALSE(result.ok()) << path;
    EXPECT_EQ(result.status().code(), code) << result.status();
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(path));
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(detail));
  }

  fs::path dir_;
};

TEST_F(FashionMnistErrorTest, MissingFileIsNotFound) {
  ExpectError((dir_ / "absent.gz").string(), absl::StatusCode::kNotFound, "does not exist");
  auto data = LoadFashionMnist(dir_.string(), "train");
  EXPECT_TRUE(IsNotFound(data.status())) << data.status();
  EXPECT_THAT(std::string(data.status().message()),
              HasSubstr((dir_ / "train-images-idx3-ubyte.gz").string()));
}

TEST_F(FashionMnistErrorTest, UnknownSplitIsInvalidArgument) {
  auto data = LoadFashionMnist(DefaultFashionMnistDir(), "validation");
  EXPECT_TRUE(IsInvalidArgument(data.status())) << data.status();
  EXPECT_THAT(std::string(data.status().message()), HasSubstr("\"validation\""));
}

TEST_F(FashionMnistErrorTest, PlainAndGzipReadTheSame) {
  const Bytes idx = Idx(0x08, {2, 3}, {1, 2, 3, 4, 5, 255});
  for (const std::string& path : {Write("a", idx), Write("a.gz", Gzip(idx))}) {
    auto array = ReadIdxFile(path);
    ASSERT_TRUE(array.ok()) << array.status();
    EXPECT_EQ(array->dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(array->data, (Bytes{1, 2, 3, 4, 5, 255}));
  }
  // An empty array is valid.
  auto empty = ReadIdxFile(Write("empty.gz", Gzip(Idx(0x08, {0, 28, 28}, {}))));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->dims, (std::vector<int64_t>{0, 28, 28}));
  EXPECT_TRUE(empty->data.empty());
}

TEST_F(FashionMnistErrorTest, BadMagic) {
  const Bytes not_idx = {0x1f, 0x00, 0x08, 0x01, 0, 0, 0, 1, 7};
  ExpectError(Write("bad_magic", not_idx), absl::StatusCode::kInvalidArgument,
              "not an IDX file (magic 0x1f000801");
  ExpectError(Write("bad_magic.gz", Gzip(not_idx)), absl::StatusCode::kInvalidArgument,
              "not an IDX file");
  ExpectError(Write("float", Idx(0x0D, {1}, {0, 0, 0, 0})), absl::StatusCode::kInvalidArgument,
              "element type 0xd is not supported");
  ExpectError(Write("rank0", Idx(0x08, {}, {})), absl::StatusCode::kInvalidArgument,
              "IDX rank 0 is outside [1, 8]");
  ExpectError(Write("empty", {}), absl::StatusCode::kDataLoss, "ends after 0 bytes");
  ExpectError(Write("short_header", {0, 0, 8, 3, 0, 0, 0, 1}), absl::StatusCode::kDataLoss,
              "ends inside the IDX header");
  ExpectError(dir_.string(), absl::StatusCode::kInvalidArgument, "is not a regular file");
}

TEST_F(FashionMnistErrorTest, TruncatedAndCorruptGzip) {
  const Bytes real = ReadBytes(DefaultFashionMnistDir() + "/t10k-labels-idx1-ubyte.gz");
  ASSERT_GT(real.size(), size_t{1000});
  ExpectError(Write("truncated.gz", Bytes(real.begin(), real.begin() + real.size() / 2)),
              absl::StatusCode::kDataLoss, "truncated gzip stream");
  // Cut inside the 8-byte trailer: all the data decompresses, the check cannot be read.
  ExpectError(Write("no_trailer.gz", Bytes(real.begin(), real.end() - 4)),
              absl::StatusCode::kDataLoss, "truncated gzip stream");
  Bytes bad_crc = real;
  bad_crc[bad_crc.size() - 8] ^= 0xff;  // the first byte of the CRC-32
  ExpectError(Write("bad_crc.gz", bad_crc), absl::StatusCode::kDataLoss,
              "corrupt gzip data (incorrect data check)");
  Bytes bad_header = real;
  bad_header[2] = 0x07;  // compression method 7 does not exist
  ExpectError(Write("bad_method.gz", bad_header), absl::StatusCode::kDataLoss, "corrupt gzip data");
}

TEST_F(FashionMnistErrorTest, HeaderClaimingMoreDataThanPresent) {
  const Bytes short_data = Idx(0x08, {100}, Bytes(10, 1));
  ExpectError(Write("short", short_data), absl::StatusCode::kDataLoss,
              "declares [100] = 100 bytes of data but the file holds 10");
  ExpectError(Write("short.gz", Gzip(short_data)), absl::StatusCode::kDataLoss,
              "declares [100] = 100 bytes of data but the decompressed file holds only 10");
  // Far more than a small .gz can hold: rejected before reading or allocating.
  ExpectError(Write("huge.gz", Gzip(Idx(0x08, {60000, 28000, 28}, Bytes(10, 1)))),
              absl::StatusCode::kDataLoss, "more than a gzip file of");
  ExpectError(Write("huge", Idx(0x08, {60000, 28000, 28}, Bytes(10, 1))),
              absl::StatusCode::kDataLoss, "bytes of data but the file holds 10");
  ExpectError(Write("overflow", Idx(0x08, {0xffffffff, 0xffffffff, 0xffffffff}, {})),
              absl::StatusCode::kInvalidArgument, "impossibly large");
  // And less.
  const Bytes long_data = Idx(0x08, {10}, Bytes(12, 1));
  ExpectError(Write("long", long_data), absl::StatusCode::kDataLoss, "the file holds 12");
  ExpectError(Write("long.gz", Gzip(long_data)), absl::StatusCode::kDataLoss,
              "data continues past the 10 bytes the header declares");
}

TEST_F(FashionMnistErrorTest, LoadsSmallDatasetFromPlainFiles) {
  Write("t10k-images-idx3-ubyte", Idx(0x08, {2, 1, 3}, {0, 51, 255, 102, 0, 0}));
  Write("t10k-labels-idx1-ubyte.gz", Gzip(Idx(0x08, {2}, {3, 0})));
  auto data = LoadFashionMnist(dir_.string(), "t10k");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->size, 2);
  EXPECT_EQ(data->rows, 1);
  EXPECT_EQ(data->cols, 3);
  EXPECT_EQ(data->pixels, (std::vector<uint8_t>{0, 51, 255, 102, 0, 0}));
  EXPECT_EQ(data->labels, (std::vector<int32_t>{3, 0}));
  auto batch = ExampleRange(*data, 0, 2);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->images,
            Tensor::FromVector<float>({0, 0.2f, 1, 0.4f, 0, 0}, TensorShape({2, 3})));
}

TEST_F(FashionMnistErrorTest, ImageAndLabelFilesMustAgree) {
  const std::string images =
      Write("t10k-images-idx3-ubyte.gz", Gzip(Idx(0x08, {5, 2, 2}, Bytes(20, 9))));
  const std::string labels = Write("t10k-labels-idx1-ubyte.gz", Gzip(Idx(0x08, {6}, Bytes(6, 1))));
  auto data = LoadFashionMnist(dir_.string(), "t10k");
  EXPECT_TRUE(IsInvalidArgument(data.status())) << data.status();
  EXPECT_THAT(std::string(data.status().message()),
              HasSubstr(images + " holds 5 images but " + labels + " holds 6 labels"));

  Write("t10k-labels-idx1-ubyte.gz", Gzip(Idx(0x08, {5}, {1, 2, 10, 3, 4})));
  data = LoadFashionMnist(dir_.string(), "t10k");
  EXPECT_TRUE(IsInvalidArgument(data.status())) << data.status();
  EXPECT_THAT(std::string(data.status().message()),
              HasSubstr(labels + ": label 10 of example 2 is outside [0, 9]"));

  Write("t10k-images-idx3-ubyte.gz", Gzip(Idx(0x08, {5, 4}, Bytes(20, 9))));
  data = LoadFashionMnist(dir_.string(), "t10k");
  EXPECT_TRUE(IsInvalidArgument(data.status())) << data.status();
  EXPECT_THAT(std::string(data.status().message()),
              HasSubstr(images + ": images need 3 dimensions [count, rows, cols], found [5, 4]"));

  Write("t10k-images-idx3-ubyte.gz", Gzip(Idx(0x08, {5, 2, 2}, Bytes(20, 9))));
  Write("t10k-labels-idx1-ubyte.gz", Gzip(Idx(0x08, {5, 1}, Bytes(5, 1))));
  data = LoadFashionMnist(dir_.string(), "t10k");
  EXPECT_TRUE(IsInvalidArgument(data.status())) << data.status();
  EXPECT_THAT(std::string(data.status().message()), HasSubstr("labels need 1 dimension"));
}

}  // namespace
}  // namespace tw
