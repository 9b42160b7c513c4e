// tf.data.experimental's datasets that are not compositions of the others: IgnoreErrors
// (ignore_errors), Unbatch (unbatch) and SampleFromDatasets (sample_from_datasets), with
// TF 1.x's semantics.
#include <random>

#include "src/data/dataset.h"

namespace tw::data {
namespace {

using DatasetPtr = std::shared_ptr<const DatasetBase>;
using Children = std::vector<DatasetPtr>;

// A dataset of one input whose elements `It` makes from the input's iterator.
template <typename It>
class OneInputDataset : public DatasetBase {
 public:
  OneInputDataset(std::string name, DatasetPtr input)
      : name_(std::move(name)), input_(std::move(input)) {}
  std::string DebugString() const override { return name_ + "(" + input_->DebugString() + ")"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new It(self(), std::move(input)));
  }

 private:
  const std::string name_;
  const DatasetPtr input_;
};

// Registers `op` as a OneInputDataset<It>.
template <typename It>
DatasetFactory OneInput(const std::string& op) {
  return [op](const proto::DatasetDef& def, const BuildContext&,
              Children children) -> StatusOr<DatasetPtr> {
    TW_ASSIGN_OR_RETURN(DatasetPtr input, OnlyChild(def, children));
    return std::make_shared<OneInputDataset<It>>(op, input);
  };
}

// ---- IgnoreErrors: the input's elements, without those whose making failed ----

class IgnoreErrorsIterator : public IteratorBase {
 public:
  IgnoreErrorsIterator(DatasetPtr keep, std::unique_ptr<IteratorBase> input)
      : keep_(std::move(keep)), input_(std::move(input)) {}
  // The sources move past what failed (a file that does not open, a damaged record's
  // file), so the loop ends.
  Status GetNext(Element* out, bool* end) override {
    while (!input_->GetNext(out, end).ok()) out->clear();
    return OkStatus();
  }

 private:
  DatasetPtr keep_;
  std::unique_ptr<IteratorBase> input_;
};
TW_REGISTER_DATASET("IgnoreErrors", OneInput<IgnoreErrorsIterator>("IgnoreErrors"));

// ---- Unbatch: each row of the input's elements, as an element ----

class UnbatchIterator : public IteratorBase {
 public:
  UnbatchIterator(DatasetPtr keep, std::unique_ptr<IteratorBase> input)
      : keep_(std::move(keep)), input_(std::move(input)) {}
  Status GetNext(Element* out, bool* end) override {
    while (row_ >= rows_) {
      batch_.clear();
      row_ = rows_ = 0;
      TW_RETURN_IF_ERROR(input_->GetNext(&batch_, end));
      if (*end) return OkStatus();
      TW_RETURN_IF_ERROR(CheckBatch());
    }
    out->clear();
    for (const Tensor& t : batch_) {
      TW_ASSIGN_OR_RETURN(Tensor slice, t.Slice(row_, row_ + 1));
      std::vector<int64_t> dims(t.shape().dims().begin() + 1, t.shape().dims().end());
      TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Create(dims));
      TW_ASSIGN_OR_RETURN(Tensor row, slice.Reshaped(shape));  // a view: no copy
      out->push_back(std::move(row));
    }
    ++row_;
    return OkStatus();
  }

 private:
  // Every component has rank >= 1 and the same first dimension (TF's messages).
  Status CheckBatch() {
    for (size_t i = 0; i < batch_.size(); ++i) {
      if (batch_[i].rank() == 0) {
        return errors::InvalidArgument("Input element components must have rank >= 1");
      }
      const int64_t rows = batch_[i].shape().dim(0);
      if (i > 0 && rows != rows_) {
        return errors::InvalidArgument(
            "Input element must have the same batch size in each component. Component 0 "
            "had size ",
            rows_, " but component ", i, " had size ", rows, ".");
      }
      rows_ = rows;
    }
    return OkStatus();
  }
  DatasetPtr keep_;
  std::unique_ptr<IteratorBase> input_;
  Element batch_;
  int64_t row_ = 0, rows_ = 0;
};
TW_REGISTER_DATASET("Unbatch", OneInput<UnbatchIterator>("Unbatch"));

// ---- SampleFromDatasets: each element from an input drawn by weight ----

// Draws an input with probability proportional to its weight among those not yet ended
// (TF draws again when its choice has ended, which comes to the same); ends when all have.
class SampleFromDatasetsDataset : public DatasetBase {
 public:
  SampleFromDatasetsDataset(Children inputs, std::vector<double> weights, uint64_t seed)
      : inputs_(std::move(inputs)), weights_(std::move(weights)), seeds_(seed) {}
  std::string DebugString() const override { return "SampleFromDatasets"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    std::vector<std::unique_ptr<IteratorBase>> its;
    for (const DatasetPtr& d : inputs_) {
      TW_ASSIGN_OR_RETURN(auto it, d->MakeIterator());
      its.push_back(std::move(it));
    }
    uint64_t seed = 0;
    {
      absl::MutexLock lock(&mu_);
      seed = seeds_();  // a new sequence of draws each iteration (epoch of a repeat)
    }
    return std::unique_ptr<IteratorBase>(new Iterator(self(), std::move(its), weights_, seed));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, std::vector<std::unique_ptr<IteratorBase>> inputs,
             std::vector<double> weights, uint64_t seed)
        : keep_(std::move(keep)),
          inputs_(std::move(inputs)),
          weights_(std::move(weights)),
          random_(seed) {}
    Status GetNext(Element* out, bool* end) override {
      while (true) {
        double total = 0;
        for (double w : weights_) total += w;
        if (total <= 0) {
          *end = true;
          return OkStatus();
        }
        double pick = std::uniform_real_distribution<double>(0, total)(random_);
        size_t i = 0, last = 0;
        for (; i < weights_.size(); ++i) {
          if (weights_[i] <= 0) continue;
          last = i;
          if (pick < weights_[i]) break;
          pick -= weights_[i];
        }
        if (i == weights_.size()) i = last;  // rounding left the pick past the end
        bool input_end = false;
        TW_RETURN_IF_ERROR(inputs_[i]->GetNext(out, &input_end));
        if (!input_end) return OkStatus();
        weights_[i] = 0;  // ended: never drawn again
      }
    }

   private:
    DatasetPtr keep_;
    std::vector<std::unique_ptr<IteratorBase>> inputs_;
    std::vector<double> weights_;
    std::mt19937_64 random_;
  };
  const Children inputs_;
  const std::vector<double> weights_;
  mutable absl::Mutex mu_;
  mutable std::mt19937_64 seeds_ ABSL_GUARDED_BY(mu_);
};

TW_REGISTER_DATASET("SampleFromDatasets",
                    [](const proto::DatasetDef& def, const BuildContext& ctx,
                       Children children) -> StatusOr<DatasetPtr> {
                      auto found = def.attrs().find("weights");  // a list(float)
                      if (found == def.attrs().end() || !found->second.has_list()) {
                        return errors::InvalidArgument("dataset ", def.op(),
                                                       " needs a list of weights");
                      }
                      const std::vector<float> weights(found->second.list().f().begin(),
                                                       found->second.list().f().end());
                      int64_t seed = 0;
                      TW_RETURN_IF_ERROR(GetDatasetAttr(def, "seed", &seed));
                      if (children.empty() || weights.size() != children.size()) {
                        return errors::InvalidArgument("sample_from_datasets: ", weights.size(),
                                                       " weights for ", children.size(),
                                                       " datasets");
                      }
                      for (float w : weights) {
                        if (!(w >= 0)) {
                          return errors::InvalidArgument(
                              "sample_from_datasets: weights must be >= 0, got ", w);
                        }
                      }
                      return std::make_shared<SampleFromDatasetsDataset>(
                          std::move(children), std::vector<double>(weights.begin(), weights.end()),
                          seed != 0 ? static_cast<uint64_t>(seed) : UnseededSeed(ctx));
                    });

}  // namespace
}  // namespace tw::data
