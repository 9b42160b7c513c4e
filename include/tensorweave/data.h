// tf.data in C++: input pipelines built as TF 1.x's Python builds them, and iterators
// over them in a graph. A Dataset is a value: each transformation returns a new one.
//
//   auto parse = [](const tw::Scope& s, const std::vector<tw::Output>& args) { ... };
//   tw::data::Dataset batches = tw::data::Dataset::TFRecord(files)
//                                   .Shard(num_workers, index)
//                                   .Repeat()
//                                   .Shuffle(10000, /*seed=*/1)
//                                   .Batch(100)
//                                   .Map(parse)
//                                   .Prefetch(1);
//   auto it = tw::data::MakeOneShotIterator(root.WithDevice(worker), batches);
//   std::vector<tw::Output> next = tw::data::GetNext(root.WithDevice(worker), *it);
//
// The pipeline runs in the task whose device the iterator has, when a step runs GetNext:
// reading, functions and prefetching on threads of the iterator's own (src/data). A
// function (Map, Filter) is a graph of its own, built once by `FunctionBody` from
// placeholders of the element's components; the values it needs are constants in it.
// Errors met while building (a function that does not build, a bad argument) are kept by
// the Dataset and returned by MakeOneShotIterator, naming the transformation.
#ifndef TENSORWEAVE_DATA_H_
#define TENSORWEAVE_DATA_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensorweave/protobuf/dataset.pb.h"
#include "tensorweave/scope.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::data {

// Builds a function's graph in `scope` from its arguments (one per element component) and
// returns its results (the new element's components).
using FunctionBody =
    std::function<std::vector<Output>(const Scope& scope, const std::vector<Output>& args)>;

class Dataset {
 public:
  // ---- sources ----
  // The records of TFRecord files, in order; compression_type "", "ZLIB" or "GZIP".
  static Dataset TFRecord(const std::vector<std::string>& files,
                          const std::string& compression_type = "");
  // The lines of text files, without their newlines.
  static Dataset TextLine(const std::vector<std::string>& files);
  // start, start + step, ... before stop (int64 scalars).
  static Dataset Range(int64_t start, int64_t stop, int64_t step = 1);
  // The slices of `components` along their first dimension (one element per row).
  static Dataset TensorSlices(const std::vector<Tensor>& components);

  // ---- transformations, with tf.data's semantics ----
  // `fn` on each element; num_parallel_calls > 1 calls it on that many threads, in order.
  Dataset Map(const FunctionBody& fn, int64_t num_parallel_calls = 1) const;
  // The elements for which `predicate` (one bool scalar) is true.
  Dataset Filter(const FunctionBody& predicate) const;
  Dataset Batch(int64_t batch_size, bool drop_remainder = false) const;
  // A buffer of buffer_size elements drawn at random; seed 0 is a fresh order each run,
  // another seed a fixed sequence of orders; reshuffled each epoch of a Repeat.
  Dataset Shuffle(int64_t buffer_size, int64_t seed = 0) const;
  Dataset Repeat(int64_t count = -1) const;  // -1: forever
  Dataset Take(int64_t count) const;
  Dataset Skip(int64_t count) const;
  Dataset Shard(int64_t num_shards, int64_t index) const;
  Dataset Prefetch(int64_t buffer_size) const;

  // The element's components: their dtypes, and their shapes where known (nullopt: even
  // the rank is unknown; TensorShape::kUnknownDim for an unknown dimension).
  const std::vector<DataType>& output_types() const { return types_; }
  const std::vector<std::optional<TensorShape>>& output_shapes() const { return shapes_; }
  // The pipeline as the iterator ops take it: its description and the tensors its
  // `inputs` refer to by position. The first error met while building, if any.
  const proto::DatasetDef& def() const { return def_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  const Status& status() const { return status_; }

 private:
  Dataset() = default;
  // This dataset as the only child of a new `op` node, with the same elements.
  Dataset Transformed(const std::string& op) const;
  // Transformed, with integer attributes.
  Dataset WithInts(const std::string& op,
                   std::initializer_list<std::pair<const char*, int64_t>> attrs) const;
  // Transformed, with `fn` traced into the node's function: the elements become its results.
  Dataset WithFunction(const std::string& op, const FunctionBody& fn, const char* what) const;

  proto::DatasetDef def_;
  std::vector<Tensor> inputs_;
  std::vector<DataType> types_;
  std::vector<std::optional<TensorShape>> shapes_;
  Status status_;
};

// An iterator resource in `scope`'s graph (on its device), made and initialized on
// `dataset` the first time a step uses it (TF's make_one_shot_iterator). The dataset's
// error, or the node's.
struct Iterator {
  Output handle;
  std::vector<DataType> types;
};
StatusOr<Iterator> MakeOneShotIterator(const Scope& scope, const Dataset& dataset);

// The iterator's next element, one output per component; a step running it fails with
// OutOfRange "End of sequence" after the last.
std::vector<Output> GetNext(const Scope& scope, const Iterator& iterator);

}  // namespace tw::data

#endif  // TENSORWEAVE_DATA_H_
