// The datasets whose function makes a dataset per input element: FlatMap (each made
// dataset's elements in turn) and Interleave (cycle_length of them at once, block_length
// elements from each in turn, deterministic as TF 1.x's interleave).
#include <deque>

#include "src/data/dataset.h"
#include "src/data/function.h"

namespace tw::data {
namespace {

using DatasetPtr = std::shared_ptr<const DatasetBase>;

class InterleaveDataset : public DatasetBase {
 public:
  InterleaveDataset(DatasetPtr input, std::shared_ptr<DatasetFunctionRunner> fn,
                    proto::DatasetDef made, BuildContext ctx, int64_t cycle, int64_t block)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        made_(std::move(made)),
        ctx_(std::move(ctx)),
        cycle_(cycle),
        block_(block) {}
  std::string DebugString() const override {
    return (cycle_ == 1 ? "FlatMap(" : "Interleave(") + input_->DebugString() + ")";
  }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    TW_ASSIGN_OR_RETURN(auto input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Iterator(self(), *this, std::move(input)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(DatasetPtr keep, const InterleaveDataset& d, std::unique_ptr<IteratorBase> in)
        : keep_(std::move(keep)), d_(d), input_(std::move(in)) {}
    Status GetNext(Element* out, bool* end) override {
      while (true) {
        // Opens datasets until the cycle is full or the input ends.
        while (!input_end_ && static_cast<int64_t>(cycle_.size()) < d_.cycle_) {
          Element in;
          TW_RETURN_IF_ERROR(input_->GetNext(&in, &input_end_));
          if (input_end_) break;
          TW_ASSIGN_OR_RETURN(auto made, Make(in));
          cycle_.push_back({std::move(made), 0});
        }
        if (cycle_.empty()) {
          *end = true;
          return OkStatus();
        }
        Slot& slot = cycle_.front();
        bool slot_end = false;
        TW_RETURN_IF_ERROR(slot.iterator->GetNext(out, &slot_end));
        if (slot_end) {
          cycle_.pop_front();  // its place goes to the next input element
          continue;
        }
        if (++slot.taken >= d_.block_) {  // the next in the cycle
          slot.taken = 0;
          cycle_.push_back(std::move(cycle_.front()));
          cycle_.pop_front();
        }
        return OkStatus();
      }
    }

   private:
    struct Slot {
      std::unique_ptr<IteratorBase> iterator;
      int64_t taken = 0;
    };
    StatusOr<std::unique_ptr<IteratorBase>> Make(const Element& in) {
      auto inputs = std::make_shared<std::vector<Tensor>>();
      TW_RETURN_IF_ERROR(d_.fn_->Call(in, inputs.get()));
      BuildContext ctx = d_.ctx_;
      ctx.inputs = inputs.get();
      TW_ASSIGN_OR_RETURN(DatasetPtr made, BuildDataset(d_.made_, ctx));
      return made->MakeIterator();
    }
    DatasetPtr keep_;
    const InterleaveDataset& d_;
    std::unique_ptr<IteratorBase> input_;
    bool input_end_ = false;
    std::deque<Slot> cycle_;
  };
  const DatasetPtr input_;
  const std::shared_ptr<DatasetFunctionRunner> fn_;
  const proto::DatasetDef made_;
  const BuildContext ctx_;
  const int64_t cycle_, block_;
};

StatusOr<DatasetPtr> BuildInterleave(const proto::DatasetDef& def, const BuildContext& ctx,
                                     std::vector<DatasetPtr> children) {
  if (children.size() != 1 || def.functions_size() != 1) {
    return errors::InvalidArgument("dataset ", def.op(),
                                   " needs one input dataset and one function");
  }
  const proto::DatasetFunction& f = def.functions(0);
  if (!f.has_output_dataset()) {
    return errors::InvalidArgument(def.op(), ": its function must return a dataset");
  }
  int64_t cycle = 1, block = 1;
  if (def.op() == "Interleave") {
    TW_RETURN_IF_ERROR(GetDatasetAttr(def, "cycle_length", &cycle));
    TW_RETURN_IF_ERROR(GetDatasetAttr(def, "block_length", &block));
    if (cycle <= 0) return errors::InvalidArgument("cycle_length must be > 0, got ", cycle);
    if (block <= 0) return errors::InvalidArgument("block_length must be > 0, got ", block);
  }
  TW_ASSIGN_OR_RETURN(
      auto fn, DatasetFunctionRunner::Create(
                   f, ctx, def.op() == "Interleave" ? "interleave function" : "flat_map function"));
  // The made datasets' own inputs come from the function; the rest of the context (device,
  // file policy) is the building step's. The captured iterator inputs are not theirs.
  BuildContext made_ctx = ctx;
  made_ctx.inputs = nullptr;
  return std::make_shared<InterleaveDataset>(children[0], fn, f.output_dataset(), made_ctx, cycle,
                                             block);
}
TW_REGISTER_DATASET("FlatMap", BuildInterleave);
TW_REGISTER_DATASET("Interleave", BuildInterleave);

}  // namespace
}  // namespace tw::data
