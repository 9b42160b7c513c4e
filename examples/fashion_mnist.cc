#include "examples/fashion_mnist.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <random>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tw {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr int kMaxIdxRank = 8;
constexpr int64_t kMaxIdxBytes = int64_t{1} << 62;  // keeps size arithmetic far from overflow
// Deflate cannot do better than about 1032:1, so a .gz file of S bytes cannot decompress
// to more than this many times S (plus a little for tiny files). Headers that claim more
// are rejected before anything is read.
constexpr int64_t kMaxDeflateRatio = 1032;
// Reserved up front at most; beyond this the buffer grows only with data actually read,
// so a lying header cannot make us allocate memory the file does not back.
constexpr int64_t kMaxUpfrontReservation = int64_t{64} << 20;
constexpr int64_t kReadChunk = int64_t{1} << 20;
constexpr int kMaxImageSide = 1 << 15;

std::string ErrnoText(int error) { return std::generic_category().message(error); }

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// gzerror's text without the "<fd:N>: " that gzdopen'ed files put before it.
std::string GzMessage(gzFile_s* file, int* code) {
  std::string message = gzerror(file, code);
  if (message.rfind("<fd:", 0) == 0) {
    const size_t end = message.find(">: ");
    if (end != std::string::npos) message.erase(0, end + 3);
  }
  return message;
}

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads up to `n` bytes (fewer only at the end of the data). Damaged gzip input is DataLoss
// here, so a short count means the data really ended.
StatusOr<int64_t> ReadUpTo(gzFile_s* file, const std::string& path, void* buffer, int64_t n) {
  int64_t total = 0;
  auto* out = static_cast<char*>(buffer);
  while (total < n) {
    const unsigned ask = static_cast<unsigned>(std::min<int64_t>(n - total, kReadChunk));
    const int got = gzread(file, out + total, ask);
    if (got < 0) {
      int code = Z_OK;
      const std::string message = GzMessage(file, &code);
      if (code == Z_ERRNO) return errors::Unavailable("cannot read ", path, ": ", ErrnoText(errno));
      if (code == Z_MEM_ERROR) {
        return errors::ResourceExhausted("out of memory decompressing ", path);
      }
      return errors::DataLoss(path, ": corrupt gzip data (", message, ")");
    }
    total += got;
    if (static_cast<unsigned>(got) < ask) {
      // zlib reports a stream that stops early as Z_BUF_ERROR with a short (not failed) read.
      int code = Z_OK;
      const std::string message = GzMessage(file, &code);
      if (code == Z_BUF_ERROR) {
        return errors::DataLoss(path, ": truncated gzip stream (", message, ")");
      }
      if (code != Z_OK) return errors::DataLoss(path, ": corrupt gzip data (", message, ")");
      break;
    }
  }
  return total;
}

// Opens `path` for gzip-or-plain reading; sets `*file_size` to its size on disk.
StatusOr<GzFile> OpenForReading(const std::string& path, int64_t* file_size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      return errors::NotFound("IDX file ", path, " does not exist");
    }
    if (error == EACCES) {
      return errors::PermissionDenied("cannot open IDX file ", path, ": ", ErrnoText(error));
    }
    return errors::Unavailable("cannot open IDX file ", path, ": ", ErrnoText(error));
  }
  struct stat info;
  if (fstat(fd, &info) != 0) {
    const int error = errno;
    close(fd);
    return errors::Unavailable("cannot stat IDX file ", path, ": ", ErrnoText(error));
  }
  if (!S_ISREG(info.st_mode)) {
    close(fd);
    return errors::InvalidArgument("IDX file ", path, " is not a regular file");
  }
  *file_size = static_cast<int64_t>(info.st_size);
  gzFile_s* file = gzdopen(fd, "rb");  // takes ownership of fd on success
  if (file == nullptr) {
    close(fd);
    return errors::ResourceExhausted("cannot set up gzip reading of ", path);
  }
  gzbuffer(file, 256 * 1024);  // fewer, larger reads than the 8 KiB default
  return GzFile(file);
}

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// SplitMix64's finalizer: spreads seed, shard and epoch over all 64 bits.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, n) by rejection. Written out because std::uniform_int_distribution and
// std::shuffle are allowed to differ between standard libraries, and orders must be
// reproducible wherever the trainer runs.
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t n) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = kMax - kMax % n;
  uint64_t r;
  do {
    r = rng();
  } while (r >= limit);
  return r % n;
}

// Reads <dir>/<name>.gz, or <dir>/<name> when only that exists.
StatusOr<IdxArray> ReadGzOrPlain(const std::string& dir, const std::string& name,
                                 std::string* path) {
  *path = dir + "/" + name + ".gz";
  StatusOr<IdxArray> array = ReadIdxFile(*path);
  if (!IsNotFound(array.status())) return array;
  const std::string plain = dir + "/" + name;
  struct stat info;
  if (stat(plain.c_str(), &info) != 0) {
    return errors::NotFound("IDX file ", *path, " does not exist (nor ", plain,
                            "); Debian's dataset-fashion-mnist package installs it in ",
                            DefaultFashionMnistDir(), " (bash scripts/setup.sh)");
  }
  *path = plain;
  return ReadIdxFile(plain);
}

StatusOr<Batch> AllocateBatch(int64_t batch_size, int64_t example_size) {
  TW_ASSIGN_OR_RETURN(TensorShape images_shape, TensorShape::Create({batch_size, example_size}));
  TW_ASSIGN_OR_RETURN(TensorShape labels_shape, TensorShape::Create({batch_size}));
  Batch batch;
  TW_ASSIGN_OR_RETURN(batch.images, Tensor::Allocate(DT_FLOAT, images_shape));
  TW_ASSIGN_OR_RETURN(batch.labels, Tensor::Allocate(DT_INT32, labels_shape));
  return batch;
}

// Copies example `index` of `dataset` into row `row` of a batch whose images start at
// `images` and labels at `labels`.
void CopyExample(const ImageDataset& dataset, int64_t index, int64_t row, float* images,
                 int32_t* labels) {
  const int64_t n = dataset.example_size();
  ImageDataset::ScalePixels(dataset.pixels.data() + index * n, images + row * n, n);
  labels[row] = dataset.labels[static_cast<size_t>(index)];
}

}  // namespace

// Blocks of a fixed 16 let the compiler vectorize at -O2 (its cheap cost model vectorizes no
// loop whose trip count it does not know), and __restrict tells it that the bytes do not
// alias the floats.
void ImageDataset::ScalePixels(const uint8_t* __restrict src, float* __restrict dst, int64_t n) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) dst[i + j] = PixelValue(src[i + j]);
  }
  for (; i < n; ++i) dst[i] = PixelValue(src[i]);
}

StatusOr<IdxArray> ReadIdxFile(const std::string& path) {
  int64_t file_size = 0;
  TW_ASSIGN_OR_RETURN(GzFile file, OpenForReading(path, &file_size));

  uint8_t magic[4];
  TW_ASSIGN_OR_RETURN(int64_t got, ReadUpTo(file.get(), path, magic, sizeof(magic)));
  if (got < 4) {
    return errors::DataLoss(path, ": ends after ", got, " bytes, inside the 4-byte IDX magic");
  }
  const bool compressed = gzdirect(file.get()) == 0;
  if (magic[0] != 0 || magic[1] != 0) {
    return errors::InvalidArgument(path, ": not an IDX file (magic 0x",
                                   absl::Hex(BigEndian32(magic), absl::kZeroPad8),
                                   ", expected 0x0000TTNN with type TT and rank NN)");
  }
  if (magic[2] != kUnsignedByteType) {
    return errors::InvalidArgument(path, ": IDX element type 0x", absl::Hex(magic[2]),
                                   " is not supported (only 0x08, unsigned byte)");
  }
  const int rank = magic[3];
  if (rank < 1 || rank > kMaxIdxRank) {
    return errors::InvalidArgument(path, ": IDX rank ", rank, " is outside [1, ", kMaxIdxRank, "]");
  }

  uint8_t dim_bytes[4 * kMaxIdxRank];
  TW_ASSIGN_OR_RETURN(got, ReadUpTo(file.get(), path, dim_bytes, 4 * rank));
  if (got < 4 * rank) {
    return errors::DataLoss(path, ": ends inside the IDX header (", rank, " dimensions need ",
                            4 * rank, " bytes after the magic, found ", got, ")");
  }
  IdxArray array;
  int64_t total = 1;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = BigEndian32(dim_bytes + 4 * i);
    array.dims.push_back(d);
    if (d != 0 && total > kMaxIdxBytes / d) {
      return errors::InvalidArgument(path, ": IDX dimensions ", DimsString(array.dims),
                                     (i + 1 < rank ? "..." : ""),
                                     " describe an impossibly large array");
    }
    total *= d;
  }

  const int64_t header_size = 4 + 4 * int64_t{rank};
  if (!compressed && file_size - header_size != total) {
    return errors::DataLoss(path, ": the header declares ", DimsString(array.dims), " = ", total,
                            " bytes of data but the file holds ",
                            std::max<int64_t>(0, file_size - header_size));
  }
  if (compressed && total > file_size * kMaxDeflateRatio + 4096) {
    return errors::DataLoss(path, ": the header declares ", DimsString(array.dims), " = ", total,
                            " bytes of data, more than a gzip file of ", file_size,
                            " bytes can hold");
  }

  array.data.reserve(static_cast<size_t>(std::min(total, kMaxUpfrontReservation)));
  while (static_cast<int64_t>(array.data.size()) < total) {
    const int64_t old_size = static_cast<int64_t>(array.data.size());
    const int64_t want = std::min(kReadChunk, total - old_size);
    array.data.resize(static_cast<size_t>(old_size + want));
    TW_ASSIGN_OR_RETURN(got, ReadUpTo(file.get(), path, array.data.data() + old_size, want));
    if (got < want) {
      return errors::DataLoss(path, ": the header declares ", DimsString(array.dims), " = ", total,
                              " bytes of data but the ", compressed ? "decompressed " : "",
                              "file holds only ", old_size + got);
    }
  }
  // Reading past the end also makes zlib check the gzip trailer (CRC-32 and length).
  uint8_t extra;
  TW_ASSIGN_OR_RETURN(got, ReadUpTo(file.get(), path, &extra, 1));
  if (got != 0) {
    return errors::DataLoss(path, ": data continues past the ", total,
                            " bytes the header declares for ", DimsString(array.dims));
  }
  return array;
}

std::string DefaultFashionMnistDir() { return "/usr/share/datasets/fashion-mnist"; }

StatusOr<ImageDataset> LoadFashionMnist(const std::string& dir, std::string_view split) {
  if (split != "train" && split != "t10k") {
    return errors::InvalidArgument("Fashion-MNIST split \"", split,
                                   "\" is unknown (use \"train\" or \"t10k\")");
  }
  const std::string prefix(split);
  std::string images_path, labels_path;
  TW_ASSIGN_OR_RETURN(IdxArray images,
                      ReadGzOrPlain(dir, prefix + "-images-idx3-ubyte", &images_path));
  TW_ASSIGN_OR_RETURN(IdxArray labels,
                      ReadGzOrPlain(dir, prefix + "-labels-idx1-ubyte", &labels_path));

  if (images.dims.size() != 3) {
    return errors::InvalidArgument(images_path, ": images need 3 dimensions [count, rows, cols]",
                                   ", found ", DimsString(images.dims));
  }
  if (images.dims[1] < 1 || images.dims[1] > kMaxImageSide || images.dims[2] < 1 ||
      images.dims[2] > kMaxImageSide) {
    return errors::InvalidArgument(images_path, ": image size ", images.dims[1], "x",
                                   images.dims[2], " is outside 1x1 .. ", kMaxImageSide, "x",
                                   kMaxImageSide);
  }
  if (labels.dims.size() != 1) {
    return errors::InvalidArgument(labels_path, ": labels need 1 dimension [count], found ",
                                   DimsString(labels.dims));
  }
  if (images.dims[0] != labels.dims[0]) {
    return errors::InvalidArgument(images_path, " holds ", images.dims[0], " images but ",
                                   labels_path, " holds ", labels.dims[0], " labels");
  }

  ImageDataset dataset;
  dataset.size = images.dims[0];
  dataset.rows = static_cast<int>(images.dims[1]);
  dataset.cols = static_cast<int>(images.dims[2]);
  dataset.labels.resize(labels.data.size());
  for (size_t i = 0; i < labels.data.size(); ++i) {
    const int label = labels.data[i];
    if (label >= ImageDataset::kNumClasses) {
      return errors::InvalidArgument(labels_path, ": label ", label, " of example ", i,
                                     " is outside [0, ", ImageDataset::kNumClasses - 1, "]");
    }
    dataset.labels[i] = label;
  }
  dataset.pixels = std::move(images.data);
  return dataset;
}

StatusOr<Batch> ExampleRange(const ImageDataset& dataset, int64_t begin, int64_t end) {
  if (begin < 0 || begin > end || end > dataset.size) {
    return errors::InvalidArgument("example range [", begin, ", ", end,
                                   ") is not within a dataset of ", dataset.size, " examples");
  }
  TW_ASSIGN_OR_RETURN(Batch batch, AllocateBatch(end - begin, dataset.example_size()));
  float* images = batch.images.flat<float>().data();
  int32_t* labels = batch.labels.flat<int32_t>().data();
  batch.indices.reserve(static_cast<size_t>(end - begin));
  for (int64_t i = begin; i < end; ++i) {
    CopyExample(dataset, i, i - begin, images, labels);
    batch.indices.push_back(i);
  }
  return batch;
}

ShardSampler::ShardSampler(int64_t dataset_size, const ShardOptions& options)
    : dataset_size_(dataset_size), options_(options) {
  Reorder();
}

StatusOr<ShardSampler> ShardSampler::Create(int64_t dataset_size, const ShardOptions& options) {
  if (dataset_size < 0) {
    return errors::InvalidArgument("the dataset size is ", dataset_size, ", must be at least 0");
  }
  if (options.num_shards < 1) {
    return errors::InvalidArgument("num_shards is ", options.num_shards, ", must be at least 1");
  }
  if (options.shard_index < 0 || options.shard_index >= options.num_shards) {
    return errors::InvalidArgument("shard_index ", options.shard_index, " is outside [0, ",
                                   options.num_shards, ")");
  }
  if (options.shard_index >= dataset_size) {
    return errors::InvalidArgument("shard ", options.shard_index, " of ", options.num_shards,
                                   " is empty: the dataset has only ", dataset_size, " examples");
  }
  return ShardSampler(dataset_size, options);
}

void ShardSampler::Reorder() {
  // Rebuilt from index order every epoch, so an epoch's order depends on (seed, shard,
  // epoch) only and not on the epochs before it.
  order_.clear();
  for (int64_t i = options_.shard_index; i < dataset_size_; i += options_.num_shards) {
    order_.push_back(i);
  }
  position_ = 0;
  if (!options_.shuffle) return;
  std::mt19937_64 rng(Mix(Mix(Mix(options_.seed) ^ static_cast<uint64_t>(options_.shard_index)) ^
                          static_cast<uint64_t>(epoch_)));
  for (size_t i = order_.size(); i > 1; --i) {
    std::swap(order_[i - 1], order_[UniformBelow(rng, i)]);
  }
}

StatusOr<std::vector<int64_t>> ShardSampler::Next(int64_t batch_size) {
  if (batch_size <= 0) {
    return errors::InvalidArgument("batch_size is ", batch_size, ", must be positive");
  }
  std::vector<int64_t> indices;
  indices.reserve(static_cast<size_t>(batch_size));
  while (static_cast<int64_t>(indices.size()) < batch_size) {
    const int64_t take =
        std::min(batch_size - static_cast<int64_t>(indices.size()), shard_size() - position_);
    indices.insert(indices.end(), order_.begin() + position_, order_.begin() + position_ + take);
    position_ += take;
    examples_seen_ += take;
    if (position_ == shard_size()) {
      ++epoch_;
      Reorder();
    }
  }
  return indices;
}

StatusOr<BatchIterator> BatchIterator::Create(std::shared_ptr<const ImageDataset> dataset,
                                              const Options& options) {
  if (dataset == nullptr) return errors::InvalidArgument("BatchIterator: the dataset is null");
  StatusOr<ShardSampler> sampler = ShardSampler::Create(dataset->size, options);
  if (!sampler.ok()) return errors::Annotate(sampler.status(), "BatchIterator: ");
  return BatchIterator(std::move(dataset), *std::move(sampler));
}

StatusOr<Batch> BatchIterator::Next(int64_t batch_size) {
  if (batch_size <= 0) {
    return errors::InvalidArgument("BatchIterator::Next: batch_size is ", batch_size,
                                   ", must be positive");
  }
  // The tensors first: an unaffordable batch is ResourceExhausted and consumes no examples.
  TW_ASSIGN_OR_RETURN(Batch batch, AllocateBatch(batch_size, dataset_->example_size()));
  TW_ASSIGN_OR_RETURN(batch.indices, sampler_.Next(batch_size));
  float* images = batch.images.flat<float>().data();
  int32_t* labels = batch.labels.flat<int32_t>().data();
  for (int64_t row = 0; row < batch_size; ++row) {
    CopyExample(*dataset_, batch.indices[static_cast<size_t>(row)], row, images, labels);
  }
  return batch;
}

}  // namespace tw
