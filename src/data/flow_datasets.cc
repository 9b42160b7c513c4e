// The datasets that reorder, repeat, cut, combine and buffer others: Shuffle, Repeat, Take,
// Skip, Shard, Zip, Concatenate, Prefetch and Cache (in memory or in a file), with TF 1.x's
// semantics.
#include <unistd.h>

#include <atomic>
#include <deque>
#include <filesystem>
#include <random>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "src/core/tensor_coding.h"
#include "src/data/dataset.h"
#include "src/io/record_reader.h"
#include "src/io/record_writer.h"
#include "tensorweave/protobuf/tensor.pb.h"

namespace tw::data {
namespace {

using DatasetPtr = std::shared_ptr<const DatasetBase>;
using Children = std::vector<DatasetPtr>;

StatusOr<int64_t> IntAttr(const proto::DatasetDef& def, const std::string& name) {
  int64_t v = 0;
  TW_RETURN_IF_ERROR(GetDatasetAttr(def, name, &v));
  return v;
}

// ---- Shuffle ----

// A buffer of buffer_size elements from which each GetNext takes one at random, refilled
// from the input; TF's Dataset.shuffle. With reshuffle_each_iteration each new iterator
// (each epoch of a repeat) draws a new order; a seed fixes the sequence of orders.
class ShuffleDataset : public DatasetBase {
 public:
  // Unseeded (seed and seed2 0), the orders come from `unseeded`.
  ShuffleDataset(DatasetPtr input, int64_t buffer, int64_t seed, int64_t seed2, uint64_t unseeded,
                 bool reshuffle)
      : input_(std::move(input)), buffer_(buffer), reshuffle_(reshuffle) {
    if (seed != 0 || seed2 != 0) {
      std::seed_seq sequence{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                             static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)};
      seeds_.seed(sequence);
    } else {
      seeds_.seed(unseeded);
    }
    first_seed_ = seeds_();
  }
  std::string DebugString() const override { return "Shuffle(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    uint64_t seed = first_seed_;
    if (reshuffle_) {
      absl::MutexLock lock(&mu_);
      seed = iterations_++ == 0 ? first_seed_ : seeds_();
    }
    return std::unique_ptr<IteratorBase>(new Iterator(self(), buffer_, seed, std::move(input)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, int64_t buffer, uint64_t seed, std::unique_ptr<IteratorBase> in)
        : keep_(std::move(keep)), capacity_(buffer), random_(seed), input_(std::move(in)) {}
    Status GetNext(Element* out, bool* end) override {
      while (!input_end_ && static_cast<int64_t>(buffer_.size()) < capacity_) {
        Element e;
        TW_RETURN_IF_ERROR(input_->GetNext(&e, &input_end_));
        if (!input_end_) buffer_.push_back(std::move(e));
      }
      if (buffer_.empty()) {
        *end = true;
        return OkStatus();
      }
      const size_t pick = std::uniform_int_distribution<size_t>(0, buffer_.size() - 1)(random_);
      *out = std::move(buffer_[pick]);
      buffer_[pick] = std::move(buffer_.back());
      buffer_.pop_back();
      return OkStatus();
    }

   private:
    DatasetPtr keep_;
    const int64_t capacity_;
    std::mt19937_64 random_;
    std::unique_ptr<IteratorBase> input_;
    std::vector<Element> buffer_;
    bool input_end_ = false;
  };
  const DatasetPtr input_;
  const int64_t buffer_;
  const bool reshuffle_;
  uint64_t first_seed_ = 0;
  mutable absl::Mutex mu_;
  mutable std::mt19937_64 seeds_ ABSL_GUARDED_BY(mu_);
  mutable int64_t iterations_ ABSL_GUARDED_BY(mu_) = 0;
};

TW_REGISTER_DATASET("Shuffle",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      TW_ASSIGN_OR_RETURN(int64_t buffer, IntParam(def, ctx, "buffer_size"));
                      TW_ASSIGN_OR_RETURN(int64_t seed, IntAttr(def, "seed"));
                      TW_ASSIGN_OR_RETURN(int64_t seed2, IntAttr(def, "seed2"));
                      bool reshuffle = true;
                      TW_RETURN_IF_ERROR(
                          GetDatasetAttr(def, "reshuffle_each_iteration", &reshuffle));
                      if (buffer <= 0)
                        return errors::InvalidArgument("buffer_size must be greater than zero.");
                      return std::make_shared<ShuffleDataset>(input, buffer, seed, seed2,
                                                              UnseededSeed(ctx), reshuffle);
                    });

// ---- Repeat: count times (-1: forever) ----

class RepeatDataset : public DatasetBase {
 public:
  RepeatDataset(DatasetPtr input, int64_t count) : input_(std::move(input)), count_(count) {}
  std::string DebugString() const override { return "Repeat(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self(), *this));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, const RepeatDataset& d) : keep_(std::move(keep)), d_(d) {}
    Status GetNext(Element* out, bool* end) override {
      while (d_.count_ < 0 || done_ < d_.count_) {
        if (current_ == nullptr) {
          TW_ASSIGN_OR_RETURN(current_, d_.input_->MakeIterator());
        }
        bool epoch_end = false;
        TW_RETURN_IF_ERROR(current_->GetNext(out, &epoch_end));
        if (!epoch_end) {
          produced_in_epoch_ = true;
          return OkStatus();
        }
        current_.reset();
        ++done_;
        // An empty input repeated forever would loop forever: it ends, as in TF.
        if (!produced_in_epoch_) break;
        produced_in_epoch_ = false;
      }
      *end = true;
      return OkStatus();
    }

   private:
    DatasetPtr keep_;
    const RepeatDataset& d_;
    std::unique_ptr<IteratorBase> current_;
    int64_t done_ = 0;
    bool produced_in_epoch_ = false;
  };
  const DatasetPtr input_;
  const int64_t count_;
};

TW_REGISTER_DATASET("Repeat",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      TW_ASSIGN_OR_RETURN(int64_t count, IntParam(def, ctx, "count"));
                      return std::make_shared<RepeatDataset>(input, count);
                    });

// ---- Take, Skip, Shard: which input positions pass ----

class SelectDataset : public DatasetBase {
 public:
  // Passes the elements at positions p with skip <= p < skip + take (take -1: all), and
  // p % every == offset.
  SelectDataset(std::string name, DatasetPtr input, int64_t skip, int64_t take, int64_t every,
                int64_t offset)
      : name_(std::move(name)),
        input_(std::move(input)),
        skip_(skip),
        take_(take),
        every_(every),
        offset_(offset) {}
  std::string DebugString() const override { return name_ + "(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Iterator(self(), *this, std::move(input)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, const SelectDataset& d, std::unique_ptr<IteratorBase> in)
        : keep_(std::move(keep)), d_(d), input_(std::move(in)) {}
    Status GetNext(Element* out, bool* end) override {
      while (true) {
        if (d_.take_ >= 0 && position_ >= d_.skip_ + d_.take_) {
          *end = true;
          input_.reset();  // nothing more is read from it
          return OkStatus();
        }
        TW_RETURN_IF_ERROR(input_->GetNext(out, end));
        if (*end) return OkStatus();
        const int64_t p = position_++;
        if (p >= d_.skip_ && p % d_.every_ == d_.offset_) return OkStatus();
      }
    }

   private:
    DatasetPtr keep_;
    const SelectDataset& d_;
    std::unique_ptr<IteratorBase> input_;
    int64_t position_ = 0;
  };
  const std::string name_;
  const DatasetPtr input_;
  const int64_t skip_, take_, every_, offset_;
};

TW_REGISTER_DATASET("Take",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      TW_ASSIGN_OR_RETURN(int64_t count, IntParam(def, ctx, "count"));
                      return std::make_shared<SelectDataset>("Take", input, 0,
                                                             count < 0 ? -1 : count, 1, 0);
                    });

TW_REGISTER_DATASET("Skip",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      TW_ASSIGN_OR_RETURN(int64_t count, IntParam(def, ctx, "count"));
                      // skip(-1) skips everything, as in TF.
                      return std::make_shared<SelectDataset>(
                          "Skip", input, count < 0 ? INT64_MAX : count, -1, 1, 0);
                    });

TW_REGISTER_DATASET("Shard",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      TW_ASSIGN_OR_RETURN(int64_t num_shards, IntParam(def, ctx, "num_shards"));
                      TW_ASSIGN_OR_RETURN(int64_t index, IntParam(def, ctx, "index"));
                      if (num_shards <= 0)
                        return errors::InvalidArgument(
                            "Number of shards must be greater than zero (currently num_shards = ",
                            num_shards, ").");
                      if (index < 0 || index >= num_shards) {
                        return errors::InvalidArgument("Index must be between 0 and ",
                                                       num_shards - 1,
                                                       " (currently index = ", index, ").");
                      }
                      return std::make_shared<SelectDataset>("Shard", input, 0, -1, num_shards,
                                                             index);
                    });

// ---- Zip and Concatenate ----

class ZipDataset : public DatasetBase {
 public:
  ZipDataset(Children inputs, bool concatenate)
      : inputs_(std::move(inputs)), concatenate_(concatenate) {}
  std::string DebugString() const override { return concatenate_ ? "Concatenate" : "Zip"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    std::vector<std::unique_ptr<IteratorBase>> its;
    for (const auto& in : inputs_) {
      TW_ASSIGN_OR_RETURN(auto it, in->MakeIterator());
      its.push_back(std::move(it));
    }
    return std::unique_ptr<IteratorBase>(new Iterator(self(), concatenate_, std::move(its)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, bool concatenate, std::vector<std::unique_ptr<IteratorBase>> its)
        : keep_(std::move(keep)), concatenate_(concatenate), its_(std::move(its)) {}
    Status GetNext(Element* out, bool* end) override {
      if (concatenate_) {
        for (; current_ < its_.size(); ++current_) {
          TW_RETURN_IF_ERROR(its_[current_]->GetNext(out, end));
          if (!*end) return OkStatus();
          *end = false;
        }
        *end = true;
        return OkStatus();
      }
      Element all, part;
      for (auto& it : its_) {  // the shortest input ends the zip
        TW_RETURN_IF_ERROR(it->GetNext(&part, end));
        if (*end) return OkStatus();
        all.insert(all.end(), part.begin(), part.end());
      }
      *out = std::move(all);
      return OkStatus();
    }

   private:
    DatasetPtr keep_;
    const bool concatenate_;
    std::vector<std::unique_ptr<IteratorBase>> its_;
    size_t current_ = 0;
  };
  const Children inputs_;
  const bool concatenate_;
};

TW_REGISTER_DATASET("Zip",
                    [](const proto::DatasetDef& def, const BuildContext&,
                       Children children) -> StatusOr<DatasetPtr> {
                      if (children.empty())
                        return errors::InvalidArgument("Zip needs at least one dataset");
                      return std::make_shared<ZipDataset>(std::move(children), false);
                    });

TW_REGISTER_DATASET("Concatenate",
                    [](const proto::DatasetDef& def, const BuildContext&,
                       Children children) -> StatusOr<DatasetPtr> {
                      if (children.size() != 2)
                        return errors::InvalidArgument("Concatenate needs two datasets");
                      return std::make_shared<ZipDataset>(std::move(children), true);
                    });

// ---- Prefetch: a thread that keeps buffer_size elements ready ----

class PrefetchDataset : public DatasetBase {
 public:
  PrefetchDataset(DatasetPtr input, int64_t buffer) : input_(std::move(input)), buffer_(buffer) {}
  std::string DebugString() const override { return "Prefetch(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Iterator(self(), buffer_, std::move(input)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, int64_t buffer, std::unique_ptr<IteratorBase> in)
        : keep_(std::move(keep)),
          capacity_(buffer),
          input_(std::move(in)),
          thread_([this] { Fill(); }) {}
    ~Iterator() override {
      {
        absl::MutexLock lock(&mu_);
        stopping_ = true;
      }
      thread_.join();
    }
    Status GetNext(Element* out, bool* end) override {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !buffer_.empty() || ended_; };
      mu_.Await(absl::Condition(&ready));
      if (buffer_.empty()) {
        *end = true;
        return OkStatus();
      }
      Item item = std::move(buffer_.front());
      buffer_.pop_front();
      if (!item.status.ok()) return item.status;
      *out = std::move(item.element);
      return OkStatus();
    }

   private:
    struct Item {
      Status status;
      Element element;
    };
    void Fill() {
      while (true) {
        {
          absl::MutexLock lock(&mu_);
          auto room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
            return stopping_ || static_cast<int64_t>(buffer_.size()) < capacity_;
          };
          mu_.Await(absl::Condition(&room));
          if (stopping_) return;
        }
        Item item;
        bool end = false;
        item.status = input_->GetNext(&item.element, &end);
        absl::MutexLock lock(&mu_);
        if (item.status.ok() && end) {
          ended_ = true;
          return;
        }
        buffer_.push_back(std::move(item));
      }
    }
    DatasetPtr keep_;
    const int64_t capacity_;
    std::unique_ptr<IteratorBase> input_;
    absl::Mutex mu_;
    std::deque<Item> buffer_ ABSL_GUARDED_BY(mu_);
    bool ended_ ABSL_GUARDED_BY(mu_) = false;
    bool stopping_ ABSL_GUARDED_BY(mu_) = false;
    std::thread thread_;  // last: starts after the members it uses
  };
  const DatasetPtr input_;
  const int64_t buffer_;
};

TW_REGISTER_DATASET("Prefetch",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      TW_ASSIGN_OR_RETURN(int64_t buffer, IntParam(def, ctx, "buffer_size"));
                      // AUTOTUNE (-1) and 0 keep one batch ready, TF's usual choice on CPU.
                      return std::make_shared<PrefetchDataset>(input, buffer > 0 ? buffer : 1);
                    });

// ---- Cache (in memory): the first full pass is kept and replayed ----

class CacheDataset : public DatasetBase {
 public:
  explicit CacheDataset(DatasetPtr input) : input_(std::move(input)) {}
  std::string DebugString() const override { return "Cache(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    {
      absl::MutexLock lock(&mu_);
      if (complete_) return std::unique_ptr<IteratorBase>(new Replay(self(), cache_));
    }
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Record(self(), *this, std::move(input)));
  }

 private:
  class Replay : public IteratorBase {
   public:
    Replay(DatasetPtr keep, std::shared_ptr<const std::vector<Element>> cache)
        : keep_(std::move(keep)), cache_(std::move(cache)) {}
    Status GetNext(Element* out, bool* end) override {
      if (next_ >= cache_->size()) {
        *end = true;
        return OkStatus();
      }
      *out = (*cache_)[next_++];
      return OkStatus();
    }

   private:
    DatasetPtr keep_;
    std::shared_ptr<const std::vector<Element>> cache_;
    size_t next_ = 0;
  };
  class Record : public IteratorBase {
   public:
    Record(DatasetPtr keep, const CacheDataset& d, std::unique_ptr<IteratorBase> in)
        : keep_(std::move(keep)),
          d_(d),
          input_(std::move(in)),
          seen_(std::make_shared<std::vector<Element>>()) {}
    Status GetNext(Element* out, bool* end) override {
      TW_RETURN_IF_ERROR(input_->GetNext(out, end));
      if (!*end) {
        seen_->push_back(*out);
        return OkStatus();
      }
      absl::MutexLock lock(&d_.mu_);  // a whole pass: later iterators replay it
      if (!d_.complete_) {
        d_.cache_ = seen_;
        d_.complete_ = true;
      }
      return OkStatus();
    }

   private:
    DatasetPtr keep_;
    const CacheDataset& d_;
    std::unique_ptr<IteratorBase> input_;
    std::shared_ptr<std::vector<Element>> seen_;
  };
  const DatasetPtr input_;
  mutable absl::Mutex mu_;
  mutable bool complete_ ABSL_GUARDED_BY(mu_) = false;
  mutable std::shared_ptr<const std::vector<Element>> cache_ ABSL_GUARDED_BY(mu_);
};

// ---- Cache (in a file): the first full pass is written, later passes read it ----

// The file holds TFRecords: per element, one record with the number of components, then
// one serialized TensorProto per component. A pass writes "<file>.tmp-<n>" and renames it
// to "<file>" when it ends, so a cut-short pass leaves no cache behind and a later one
// reads only whole passes.
class FileCacheDataset : public DatasetBase {
 public:
  FileCacheDataset(DatasetPtr input, std::string file) : input_(std::move(input)), file_(file) {}
  std::string DebugString() const override { return "Cache(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    if (std::filesystem::exists(file_)) {
      TW_ASSIGN_OR_RETURN(auto reader, io::RecordReader::Open(file_));
      return std::unique_ptr<IteratorBase>(new Replay(self(), std::move(reader)));
    }
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    static std::atomic<int64_t> passes{0};
    const std::string tmp =
        file_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(passes.fetch_add(1));
    TW_ASSIGN_OR_RETURN(auto writer, io::RecordWriter::Create(tmp, {.truncate = true}));
    return std::unique_ptr<IteratorBase>(
        new Record(self(), std::move(input), std::move(writer), tmp, file_));
  }

 private:
  class Replay : public IteratorBase {
   public:
    Replay(DatasetPtr keep, std::unique_ptr<io::RecordReader> r)
        : keep_(std::move(keep)), r_(std::move(r)) {}
    Status GetNext(Element* out, bool* end) override {
      std::string record;
      Status s = r_->Next(&record);
      if (IsOutOfRange(s)) {
        *end = true;
        return OkStatus();
      }
      TW_RETURN_IF_ERROR(s);
      int64_t n = 0;
      if (!absl::SimpleAtoi(record, &n) || n < 0 || n > (1 << 20)) {
        return errors::DataLoss(r_->path(), ": not a tensorweave dataset cache");
      }
      out->clear();
      for (int64_t i = 0; i < n; ++i) {
        TW_RETURN_IF_ERROR(r_->Next(&record));
        proto::TensorProto p;
        if (!p.ParseFromString(record)) {
          return errors::DataLoss(r_->path(), ": a cached tensor cannot be parsed");
        }
        TW_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(p));
        out->push_back(std::move(t));
      }
      return OkStatus();
    }

   private:
    DatasetPtr keep_;
    std::unique_ptr<io::RecordReader> r_;
  };
  class Record : public IteratorBase {
   public:
    Record(DatasetPtr keep, std::unique_ptr<IteratorBase> in, std::unique_ptr<io::RecordWriter> w,
           std::string tmp, std::string file)
        : keep_(std::move(keep)),
          input_(std::move(in)),
          w_(std::move(w)),
          tmp_(std::move(tmp)),
          file_(std::move(file)) {}
    ~Record() override {
      if (w_ != nullptr) {  // the pass did not end: no cache
        (void)w_->Close();
        std::filesystem::remove(tmp_);
      }
    }
    Status GetNext(Element* out, bool* end) override {
      TW_RETURN_IF_ERROR(input_->GetNext(out, end));
      if (w_ == nullptr) return OkStatus();
      if (*end) {
        TW_RETURN_IF_ERROR(w_->Close());
        w_.reset();
        std::error_code error;
        std::filesystem::rename(tmp_, file_, error);
        if (error)
          return errors::Internal("cannot rename ", tmp_, " to ", file_, ": ", error.message());
        return OkStatus();
      }
      TW_RETURN_IF_ERROR(w_->Write(std::to_string(out->size())));
      for (const Tensor& t : *out) {
        proto::TensorProto p;
        TensorToProto(t, &p);
        TW_RETURN_IF_ERROR(w_->Write(p.SerializeAsString()));
      }
      return OkStatus();
    }

   private:
    DatasetPtr keep_;
    std::unique_ptr<IteratorBase> input_;
    std::unique_ptr<io::RecordWriter> w_;
    const std::string tmp_, file_;
  };
  const DatasetPtr input_;
  const std::string file_;
};

TW_REGISTER_DATASET("Cache",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      std::string filename;
                      if (def.attrs().count("filename")) {
                        TW_RETURN_IF_ERROR(GetDatasetAttr(def, "filename", &filename));
                      }
                      if (filename.empty()) return std::make_shared<CacheDataset>(input);
                      TW_RETURN_IF_ERROR(ctx.file_access.Check(filename, "cache file"));
                      return std::make_shared<FileCacheDataset>(input, filename);
                    });

}  // namespace
}  // namespace tw::data
