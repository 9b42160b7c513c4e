#include "src/data/generator_dataset.h"

#include <map>

#include "absl/synchronization/mutex.h"

namespace tw::data {
namespace {

struct Registry {
  absl::Mutex mu;
  int64_t next ABSL_GUARDED_BY(mu) = 1;
  std::map<int64_t, GeneratorFactory> factories ABSL_GUARDED_BY(mu);
};

Registry& TheRegistry() {
  static auto* registry = new Registry();
  return *registry;
}

class GeneratorDataset : public DatasetBase {
 public:
  explicit GeneratorDataset(GeneratorFactory factory) : factory_(std::move(factory)) {}
  std::string DebugString() const override { return "Generator"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self(), *this));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const DatasetBase> keep, const GeneratorDataset& d)
        : keep_(std::move(keep)), d_(d) {}
    Status GetNext(Element* out, bool* end) override {
      // The pass starts at the first element, on the iterator's thread.
      if (source_ == nullptr) {
        TW_ASSIGN_OR_RETURN(source_, d_.factory_());
      }
      return source_->Next(out, end);
    }

   private:
    std::shared_ptr<const DatasetBase> keep_;
    const GeneratorDataset& d_;
    std::unique_ptr<GeneratorSource> source_;
  };
  const GeneratorFactory factory_;
};

}  // namespace

int64_t RegisterGenerator(GeneratorFactory factory) {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  const int64_t id = r.next++;
  r.factories[id] = std::move(factory);
  return id;
}

TW_REGISTER_DATASET(
    "Generator",
    [](const proto::DatasetDef& def, const BuildContext&,
       auto) -> StatusOr<std::shared_ptr<const DatasetBase>> {
      int64_t id = 0;
      TW_RETURN_IF_ERROR(GetDatasetAttr(def, "id", &id));
      Registry& r = TheRegistry();
      absl::MutexLock lock(&r.mu);
      auto it = r.factories.find(id);
      if (it == r.factories.end()) {
        return errors::FailedPrecondition(
            "from_generator's generator ", id,
            " is not in this process: a generator runs in the Python process that made the "
            "dataset, so place its iterator on that process's task");
      }
      return std::make_shared<GeneratorDataset>(it->second);
    });

}  // namespace tw::data
