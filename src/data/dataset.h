// tf.data's datasets and iterators in C++. A pipeline is described by a proto::DatasetDef
// (tensorweave/protobuf/dataset.proto: a tree of dataset ops with attributes, functions and
// input positions) plus the tensors it takes from the outer graph; BuildDataset turns that
// into immutable DatasetBase objects, and each MakeIterator call into a fresh iterator that
// walks the elements (a vector of tensors, one per component) in order.
//
// Datasets are immutable and shared (shared_ptr) by the iterators made from them. An
// iterator is used by one thread at a time (IteratorResource serializes its callers);
// transformations that work ahead (prefetch, parallel map) run threads of their own,
// stopped when the iterator goes.
#ifndef TENSORWEAVE_SRC_DATA_DATASET_H_
#define TENSORWEAVE_SRC_DATA_DATASET_H_

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/framework/attr_value.h"
#include "src/framework/device_base.h"
#include "src/framework/file_access.h"
#include "tensorweave/protobuf/dataset.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::data {

using Element = std::vector<Tensor>;

class IteratorBase {
 public:
  virtual ~IteratorBase() = default;
  // The next element into *out, or *end_of_sequence = true (and *out untouched) after the
  // last. Errors name the dataset; an iterator that failed may be called again (a parsing
  // error in one element does not end the sequence, as in TF).
  virtual Status GetNext(Element* out, bool* end_of_sequence) = 0;
};

class DatasetBase : public std::enable_shared_from_this<DatasetBase> {
 public:
  virtual ~DatasetBase() = default;
  // A new iterator from the first element. Thread-safe.
  virtual StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const = 0;
  // "TensorSlice", "Map(TFRecord)": for messages.
  virtual std::string DebugString() const = 0;

 protected:
  std::shared_ptr<const DatasetBase> self() const { return shared_from_this(); }
};

// Where unseeded random transformations (a shuffle without a seed) take their seeds: one
// stream from one base, drawn in build order, so a pipeline rebuilt from the same base (an
// iterator restored from a checkpoint) shuffles as the original did. Thread-safe.
class SeedSource {
 public:
  explicit SeedSource(uint64_t base) : random_(base) {}
  uint64_t Next() {
    absl::MutexLock lock(&mu_);
    return random_();
  }

 private:
  absl::Mutex mu_;
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);
};

// What building a pipeline needs from the kernel that builds it.
struct BuildContext {
  DeviceBase* device = nullptr;  // where functions run; must outlive the datasets
  // Where file datasets may read (the building step's policy, copied).
  FileAccessPolicy file_access = FileAccessPolicy::Unrestricted();
  const std::vector<Tensor>* inputs = nullptr;  // the iterator op's inputs
  std::shared_ptr<SeedSource> seeds;            // null: fresh entropy for each draw
};

// A seed for an unseeded random transformation: from ctx.seeds, or fresh entropy.
uint64_t UnseededSeed(const BuildContext& ctx);

// Builds the pipeline `def` describes. InvalidArgument naming the dataset op and the
// attribute or input at fault; the file datasets' errors (NotFound, PermissionDenied) when
// they check their files.
StatusOr<std::shared_ptr<const DatasetBase>> BuildDataset(const proto::DatasetDef& def,
                                                          const BuildContext& ctx);

// ---- for dataset implementations (src/data/*_datasets.cc) ----

// The dataset kinds, by op name: static registration, as the ops.
using DatasetFactory = std::function<StatusOr<std::shared_ptr<const DatasetBase>>(
    const proto::DatasetDef& def, const BuildContext& ctx,
    std::vector<std::shared_ptr<const DatasetBase>> children)>;
namespace internal {
struct DatasetRegistrar {
  DatasetRegistrar(const std::string& op, DatasetFactory factory);
};
}  // namespace internal

// Attribute `name` of `def`; InvalidArgument naming the op and attribute when missing or of
// another kind.
template <typename T>
Status GetDatasetAttr(const proto::DatasetDef& def, const std::string& name, T* value) {
  auto it = def.attrs().find(name);
  if (it == def.attrs().end()) {
    return errors::InvalidArgument("dataset ", def.op(), " has no attribute \"", name, "\"");
  }
  proto::NodeDef node;
  node.set_name(def.op());
  (*node.mutable_attr())[name] = it->second;
  return GetNodeAttr(node, name, value);
}

// The one input dataset of a transformation; InvalidArgument naming the op otherwise.
StatusOr<std::shared_ptr<const DatasetBase>> OnlyChild(
    const proto::DatasetDef& def, const std::vector<std::shared_ptr<const DatasetBase>>& children);

// Input `i` of `def` (a position among the iterator op's inputs).
StatusOr<Tensor> DatasetInput(const proto::DatasetDef& def, const BuildContext& ctx, int i);

// An integer parameter of `def` (a batch size, a count): attribute `name`, or, when the
// program gave a tensor (tf.data takes either), the int32 or int64 scalar that is input
// attrs[name + "_input"] of `def`. InvalidArgument naming the op and the parameter.
StatusOr<int64_t> IntParam(const proto::DatasetDef& def, const BuildContext& ctx,
                           const std::string& name);

}  // namespace tw::data

#define TW_DATASET_CONCAT_INNER(a, b) a##b
#define TW_DATASET_CONCAT(a, b) TW_DATASET_CONCAT_INNER(a, b)
// Registers `factory` for the dataset op named (at namespace scope in a .cc file).
#define TW_REGISTER_DATASET(op, ...)                                                      \
  [[maybe_unused]] static const ::tw::data::internal::DatasetRegistrar TW_DATASET_CONCAT( \
      tw_dataset_registrar_, __COUNTER__)(op, __VA_ARGS__)

#endif  // TENSORWEAVE_SRC_DATA_DATASET_H_
