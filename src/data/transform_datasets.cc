// The datasets that transform others: Map (num_parallel_calls, in order), Filter, Batch,
// PaddedBatch, Shuffle, Repeat, Take, Skip, Shard, Zip, Concatenate, Prefetch and Cache
// (in memory), with TF 1.x's semantics.
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "src/data/dataset.h"
#include "src/data/function.h"
#include "src/ops/array_util.h"

namespace tw::data {
namespace {

using DatasetPtr = std::shared_ptr<const DatasetBase>;
using Children = std::vector<DatasetPtr>;

int64_t IntAttrOr(const proto::DatasetDef& def, const std::string& name, int64_t fallback) {
  int64_t v = fallback;
  if (def.attrs().count(name) && !GetDatasetAttr(def, name, &v).ok()) return fallback;
  return v;
}

// ---- Map ----

class MapDataset;
class MapIterator : public IteratorBase {
 public:
  MapIterator(DatasetPtr keep, const MapDataset& d, std::unique_ptr<IteratorBase> input);
  ~MapIterator() override;
  Status GetNext(Element* out, bool* end) override;

 private:
  // Parallel calls take runs of up to kRun consecutive inputs and leave their results
  // together: a thread hand-off per run instead of per element, which on small functions
  // (a record's parse) costs as much as the call.
  static constexpr int64_t kRun = 8;
  void Work();
  struct Result {
    Status status;
    Element element;
    bool end = false;
  };
  DatasetPtr keep_;
  const MapDataset& d_;
  const int64_t window_;  // at most this many results ahead of the consumer
  // One worker reads at a time, numbering the inputs in order.
  absl::Mutex input_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::unique_ptr<IteratorBase> input_ ABSL_GUARDED_BY(input_mu_);
  int64_t next_in_ ABSL_GUARDED_BY(input_mu_) = 0;  // the next input's sequence number
  bool input_ended_ ABSL_GUARDED_BY(input_mu_) = false;
  // Results by sequence number, for GetNext in order.
  absl::Mutex mu_;
  int64_t next_out_ ABSL_GUARDED_BY(mu_) = 0;  // the next result GetNext returns
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<int64_t, Result> results_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> workers_;
};

class MapDataset : public DatasetBase {
 public:
  MapDataset(DatasetPtr input, std::shared_ptr<DatasetFunctionRunner> fn, int64_t parallel)
      : input_(std::move(input)), fn_(std::move(fn)), parallel_(parallel) {}
  std::string DebugString() const override { return "Map(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new MapIterator(self(), *this, std::move(input)));
  }
  const DatasetFunctionRunner& fn() const { return *fn_; }
  int64_t parallel() const { return parallel_; }

 private:
  const DatasetPtr input_;
  const std::shared_ptr<DatasetFunctionRunner> fn_;
  const int64_t parallel_;
};

MapIterator::MapIterator(DatasetPtr keep, const MapDataset& d, std::unique_ptr<IteratorBase> input)
    : keep_(std::move(keep)), d_(d), window_(2 * kRun * d.parallel()), input_(std::move(input)) {
  if (d_.parallel() > 1) {
    for (int64_t i = 0; i < d_.parallel(); ++i) workers_.emplace_back([this] { Work(); });
  }
}

MapIterator::~MapIterator() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (auto& t : workers_) t.join();
}

void MapIterator::Work() {
  while (true) {
    std::vector<Element> ins;
    std::vector<Result> results;
    int64_t first = 0;
    {
      absl::MutexLock reading(&input_mu_);
      if (input_ended_) return;
      first = next_in_;
      {
        // Starts a run once there is room for all of it: one wake-up per run.
        absl::MutexLock lock(&mu_);
        auto room = [this, first]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || first - next_out_ <= window_ - kRun;
        };
        mu_.Await(absl::Condition(&room));
        if (stopping_) return;
      }
      while (static_cast<int64_t>(results.size()) < kRun) {
        Element in;
        Result r;
        r.status = input_->GetNext(&in, &r.end);
        ++next_in_;
        if (r.status.ok() && r.end) {
          input_ended_ = true;
          results.push_back(std::move(r));
          break;
        }
        ins.push_back(std::move(in));
        results.push_back(std::move(r));
      }
    }
    for (size_t i = 0; i < ins.size(); ++i) {
      if (results[i].status.ok()) results[i].status = d_.fn().Call(ins[i], &results[i].element);
    }
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < results.size(); ++i) results_[first + i] = std::move(results[i]);
  }
}

Status MapIterator::GetNext(Element* out, bool* end) {
  if (workers_.empty()) {
    Element in;
    {
      absl::MutexLock reading(&input_mu_);  // uncontended: no workers
      TW_RETURN_IF_ERROR(input_->GetNext(&in, end));
    }
    if (*end) return OkStatus();
    return d_.fn().Call(in, out);
  }
  absl::MutexLock lock(&mu_);
  auto ready = [this]()
                   ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return results_.count(next_out_) > 0; };
  mu_.Await(absl::Condition(&ready));
  Result r = std::move(results_[next_out_]);
  if (r.end) {  // stays at the end: later calls see it again
    *end = true;
    return OkStatus();
  }
  results_.erase(next_out_++);
  if (!r.status.ok()) return r.status;
  *out = std::move(r.element);
  return OkStatus();
}

StatusOr<std::shared_ptr<DatasetFunctionRunner>> OnlyFunction(const proto::DatasetDef& def,
                                                              const BuildContext& ctx,
                                                              const std::string& what) {
  if (def.functions_size() != 1) {
    return errors::InvalidArgument("dataset ", def.op(), " needs one function, got ",
                                   def.functions_size());
  }
  return DatasetFunctionRunner::Create(def.functions(0), ctx, what);
}

TW_REGISTER_DATASET("Map",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      TW_ASSIGN_OR_RETURN(auto fn, OnlyFunction(def, ctx, "map function"));
                      return std::make_shared<MapDataset>(input, fn,
                                                          IntAttrOr(def, "num_parallel_calls", 1));
                    });

// ---- Filter ----

class FilterDataset : public DatasetBase {
 public:
  FilterDataset(DatasetPtr input, std::shared_ptr<DatasetFunctionRunner> fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}
  std::string DebugString() const override { return "Filter(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Iterator(self(), *fn_, std::move(input)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, const DatasetFunctionRunner& fn, std::unique_ptr<IteratorBase> in)
        : keep_(std::move(keep)), fn_(fn), input_(std::move(in)) {}
    Status GetNext(Element* out, bool* end) override {
      Element keep;
      while (true) {
        TW_RETURN_IF_ERROR(input_->GetNext(out, end));
        if (*end) return OkStatus();
        TW_RETURN_IF_ERROR(fn_.Call(*out, &keep));
        if (keep.size() != 1 || keep[0].dtype() != DT_BOOL || keep[0].num_elements() != 1) {
          return errors::InvalidArgument(
              "Filter predicate `predicate` must return a scalar boolean tensor.");
        }
        if (keep[0].flat<bool>()[0]) return OkStatus();
      }
    }

   private:
    DatasetPtr keep_;
    const DatasetFunctionRunner& fn_;
    std::unique_ptr<IteratorBase> input_;
  };
  const DatasetPtr input_;
  const std::shared_ptr<DatasetFunctionRunner> fn_;
};

TW_REGISTER_DATASET("Filter",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
                      TW_ASSIGN_OR_RETURN(auto fn, OnlyFunction(def, ctx, "filter predicate"));
                      return std::make_shared<FilterDataset>(input, fn);
                    });

// ---- Batch and PaddedBatch ----

// Stacks `elements` component by component; with `padded_shapes` (one per component, -1
// for "the batch's largest"), pads with `padding_values` (one scalar per component). The
// strings of elements no other tensor sees are moved into the batch, not copied.
StatusOr<Element> StackBatch(std::vector<Element>& elements,
                             const std::vector<PartialShape>* padded_shapes,
                             const Element* padding_values) {
  Element out;
  const size_t components = elements[0].size();
  for (size_t c = 0; c < components; ++c) {
    const Tensor& first = elements[0][c];
    std::vector<int64_t> dims(first.shape().dims().begin(), first.shape().dims().end());
    for (const Element& e : elements) {
      if (e.size() != components || e[c].dtype() != first.dtype()) {
        return errors::InvalidArgument("Cannot batch elements of different structures");
      }
      const TensorShape& shape = e[c].shape();
      if (padded_shapes == nullptr) {
        if (!(shape == first.shape())) {
          return errors::InvalidArgument(
              "Cannot batch tensors with different shapes in component ", c,
              ". First element had shape ", first.shape().DebugString(), " and element ",
              &e - elements.data(), " had shape ", shape.DebugString(), ".");
        }
        continue;
      }
      if (shape.rank() != static_cast<int>(dims.size())) {
        return errors::InvalidArgument("Cannot pad component ", c, " of rank ", shape.rank(),
                                       " and ", dims.size(), " in one batch");
      }
      for (int d = 0; d < shape.rank(); ++d) dims[d] = std::max(dims[d], shape.dim(d));
    }
    if (padded_shapes != nullptr) {
      const PartialShape& want = (*padded_shapes)[c];
      if (!want.unknown_rank) {
        if (want.dims.size() != dims.size()) {
          return errors::InvalidArgument("padded_shapes[", c, "] ", want.DebugString(),
                                         " has another rank than the component's ",
                                         first.shape().DebugString());
        }
        for (size_t d = 0; d < dims.size(); ++d) {
          if (want.dims[d] >= 0) {
            if (dims[d] > want.dims[d]) {
              return errors::DataLoss(
                  "Attempted to pad to a smaller size than the input "
                  "element.");
            }
            dims[d] = want.dims[d];
          }
        }
      }
    }
    dims.insert(dims.begin(), static_cast<int64_t>(elements.size()));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Create(dims));
    TW_ASSIGN_OR_RETURN(Tensor batch, Tensor::Allocate(first.dtype(), shape));
    const bool strings = first.dtype() == DT_STRING;
    const size_t width = strings ? 0 : DataTypeSize(first.dtype());
    if (padded_shapes != nullptr) {  // fill with the padding value first
      const Tensor& pad = (*padding_values)[c];
      if (pad.dtype() != first.dtype()) {
        return errors::InvalidArgument("padding_values[", c, "] is ", DataTypeName(pad.dtype()),
                                       " but the component is ", DataTypeName(first.dtype()));
      }
      for (int64_t j = 0; j < batch.num_elements(); ++j) {
        if (strings) {
          batch.flat<std::string>()[j] = pad.flat<std::string>()[0];
        } else {
          std::memcpy(static_cast<char*>(batch.raw_data()) + j * width, pad.raw_data(), width);
        }
      }
    }
    for (size_t i = 0; i < elements.size(); ++i) {
      Tensor& e = elements[i][c];
      if (strings && padded_shapes == nullptr && !e.BufferIsShared()) {
        auto from = e.flat<std::string>();
        std::move(from.begin(), from.end(),
                  batch.flat<std::string>().begin() + static_cast<int64_t>(i) * e.num_elements());
        continue;
      }
      tw::internal::CopyIntoPaddedSlot(e, static_cast<int64_t>(i), &batch);
    }
    out.push_back(std::move(batch));
  }
  return out;
}

// Batches the SparseTensor at components [c, c + 3) of `elements` (indices [n, rank],
// values [n], dense_shape [rank]) as tf.data does: one SparseTensor of rank + 1, whose
// indices begin with the element's place in the batch and whose dense shape is the batch
// size then the largest of each dimension.
StatusOr<std::array<Tensor, 3>> BatchSparse(const std::vector<Element>& elements, size_t c) {
  int64_t total = 0, rank = -1;
  std::vector<int64_t> largest;
  for (size_t i = 0; i < elements.size(); ++i) {
    const Tensor& indices = elements[i][c];
    const Tensor& values = elements[i][c + 1];
    const Tensor& shape = elements[i][c + 2];
    if (indices.dtype() != DT_INT64 || indices.rank() != 2 || values.rank() != 1 ||
        shape.dtype() != DT_INT64 || shape.rank() != 1 || indices.dim(0) != values.dim(0) ||
        indices.dim(1) != shape.dim(0) || values.dtype() != elements[0][c + 1].dtype()) {
      return errors::InvalidArgument(
          "component ", c, " of element ", i, " is not a SparseTensor (indices ",
          indices.shape().DebugString(), ", values ", values.shape().DebugString(),
          ", dense_shape ", shape.shape().DebugString(), ")");
    }
    if (rank < 0) {
      rank = shape.dim(0);
      largest.assign(rank, 0);
    } else if (shape.dim(0) != rank) {
      return errors::InvalidArgument("Cannot batch SparseTensors of ranks ", rank, " and ",
                                     shape.dim(0), " in component ", c);
    }
    for (int64_t d = 0; d < rank; ++d) largest[d] = std::max(largest[d], shape.flat<int64_t>()[d]);
    total += values.dim(0);
  }
  std::vector<int64_t> dense_shape{static_cast<int64_t>(elements.size())};
  dense_shape.insert(dense_shape.end(), largest.begin(), largest.end());
  TW_ASSIGN_OR_RETURN(TensorShape index_shape, TensorShape::Create({total, rank + 1}));
  TW_ASSIGN_OR_RETURN(Tensor indices, Tensor::Allocate(DT_INT64, index_shape));
  TW_ASSIGN_OR_RETURN(TensorShape value_shape, TensorShape::Create({total}));
  TW_ASSIGN_OR_RETURN(Tensor values, Tensor::Allocate(elements[0][c + 1].dtype(), value_shape));
  int64_t* to = indices.flat<int64_t>().data();
  int64_t at = 0;
  for (size_t i = 0; i < elements.size(); ++i) {
    const Tensor& from = elements[i][c];
    const int64_t* row = from.flat<int64_t>().data();
    for (int64_t n = 0; n < from.dim(0); ++n, row += rank) {
      *to++ = static_cast<int64_t>(i);
      to = std::copy(row, row + rank, to);
    }
    const Tensor& v = elements[i][c + 1];
    if (v.dtype() == DT_STRING) {
      std::copy(v.flat<std::string>().begin(), v.flat<std::string>().end(),
                values.flat<std::string>().begin() + at);
    } else if (v.num_elements() > 0) {
      const size_t width = DataTypeSize(v.dtype());
      std::memcpy(static_cast<char*>(values.raw_data()) + at * width, v.raw_data(),
                  v.num_elements() * width);
    }
    at += v.num_elements();
  }
  return std::array<Tensor, 3>{std::move(indices), std::move(values),
                               Tensor::FromVector<int64_t>(dense_shape)};
}

// Batches elements whose components [c, c + 3) for each c in `sparse` are SparseTensors
// (BatchSparse) and whose others are stacked (StackBatch).
StatusOr<Element> StackWithSparse(std::vector<Element>& elements,
                                  const std::vector<int64_t>& sparse) {
  const size_t components = elements[0].size();
  std::vector<bool> in_sparse(components, false);
  for (int64_t c : sparse) {
    if (c < 0 || static_cast<size_t>(c) + 3 > components) {
      return errors::InvalidArgument("Batch: sparse component ", c, " is outside the ", components,
                                     " components of the element");
    }
    std::fill_n(in_sparse.begin() + c, 3, true);
  }
  std::vector<Element> dense(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    if (elements[i].size() != components) {
      return errors::InvalidArgument("Cannot batch elements of different structures");
    }
    for (size_t c = 0; c < components; ++c) {
      if (!in_sparse[c]) dense[i].push_back(std::move(elements[i][c]));
    }
  }
  TW_ASSIGN_OR_RETURN(Element stacked, StackBatch(dense, nullptr, nullptr));
  Element out;
  size_t next_dense = 0;
  for (size_t c = 0; c < components; ++c) {
    if (!in_sparse[c]) {
      out.push_back(std::move(stacked[next_dense++]));
    } else if (std::find(sparse.begin(), sparse.end(), static_cast<int64_t>(c)) != sparse.end()) {
      TW_ASSIGN_OR_RETURN(auto triple, BatchSparse(elements, c));
      for (Tensor& t : triple) out.push_back(std::move(t));
    }
  }
  return out;
}

class BatchDataset : public DatasetBase {
 public:
  BatchDataset(DatasetPtr input, int64_t size, bool drop_remainder,
               std::optional<std::vector<PartialShape>> padded_shapes, Element padding_values,
               std::vector<int64_t> sparse = {})
      : input_(std::move(input)),
        size_(size),
        drop_remainder_(drop_remainder),
        padded_shapes_(std::move(padded_shapes)),
        padding_values_(std::move(padding_values)),
        sparse_(std::move(sparse)) {}
  std::string DebugString() const override {
    return std::string(padded_shapes_ ? "PaddedBatch(" : "Batch(") + input_->DebugString() + ")";
  }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Iterator(self(), *this, std::move(input)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, const BatchDataset& d, std::unique_ptr<IteratorBase> in)
        : keep_(std::move(keep)), d_(d), input_(std::move(in)) {}
    Status GetNext(Element* out, bool* end) override {
      std::vector<Element> elements;
      bool input_end = false;
      while (static_cast<int64_t>(elements.size()) < d_.size_) {
        Element e;
        TW_RETURN_IF_ERROR(input_->GetNext(&e, &input_end));
        if (input_end) break;
        elements.push_back(std::move(e));
      }
      if (elements.empty() ||
          (d_.drop_remainder_ && static_cast<int64_t>(elements.size()) < d_.size_)) {
        *end = true;
        return OkStatus();
      }
      if (!d_.sparse_.empty()) {
        TW_ASSIGN_OR_RETURN(*out, StackWithSparse(elements, d_.sparse_));
        return OkStatus();
      }
      TW_ASSIGN_OR_RETURN(*out,
                          StackBatch(elements, d_.padded_shapes_ ? &*d_.padded_shapes_ : nullptr,
                                     &d_.padding_values_));
      return OkStatus();
    }

   private:
    DatasetPtr keep_;
    const BatchDataset& d_;
    std::unique_ptr<IteratorBase> input_;
  };
  const DatasetPtr input_;
  const int64_t size_;
  const bool drop_remainder_;
  const std::optional<std::vector<PartialShape>> padded_shapes_;
  const Element padding_values_;
  const std::vector<int64_t> sparse_;  // the first components of SparseTensors
};

StatusOr<DatasetPtr> BuildBatch(const proto::DatasetDef& def, const BuildContext& ctx,
                                Children children) {
  TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
  TW_ASSIGN_OR_RETURN(const int64_t size, IntParam(def, ctx, "batch_size"));
  bool drop = false;
  if (def.attrs().count("drop_remainder"))
    TW_RETURN_IF_ERROR(GetDatasetAttr(def, "drop_remainder", &drop));
  if (size <= 0) return errors::InvalidArgument("Batch size must be greater than zero.");
  if (def.op() == "Batch" || !def.attrs().count("padded_shapes")) {
    // SparseTensor components (three each): attribute sparse_components, their first.
    std::vector<int64_t> sparse;
    if (def.attrs().count("sparse_components"))
      TW_RETURN_IF_ERROR(GetDatasetAttr(def, "sparse_components", &sparse));
    return std::make_shared<BatchDataset>(input, size, drop, std::nullopt, Element{},
                                          std::move(sparse));
  }
  std::vector<PartialShape> shapes;
  TW_RETURN_IF_ERROR(GetDatasetAttr(def, "padded_shapes", &shapes));
  Element padding;
  // The padding values are the inputs before a batch size given as a tensor.
  const int values = def.inputs_size() - (def.attrs().count("batch_size_input") ? 1 : 0);
  for (int i = 0; i < values; ++i) {
    TW_ASSIGN_OR_RETURN(Tensor t, DatasetInput(def, ctx, i));
    if (t.num_elements() != 1) {
      return errors::InvalidArgument("padding_values[", i, "] must be a scalar, got ",
                                     t.shape().DebugString());
    }
    padding.push_back(std::move(t));
  }
  if (padding.size() != shapes.size()) {
    return errors::InvalidArgument("padded_batch has ", shapes.size(), " padded_shapes but ",
                                   padding.size(), " padding_values");
  }
  return std::make_shared<BatchDataset>(input, size, drop, std::move(shapes), std::move(padding));
}
TW_REGISTER_DATASET("Batch", BuildBatch);
TW_REGISTER_DATASET("PaddedBatch", BuildBatch);

}  // namespace
}  // namespace tw::data
