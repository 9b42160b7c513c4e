// Datasets whose elements come from a callback of this process: tf.data's from_generator,
// whose Python generator the Python layer registers here (python/native/data_binding.cc).
// The callback runs on the iterator's thread. A pipeline built in another process (the
// iterator placed on another task) finds no such generator: FailedPrecondition naming it,
// as TensorFlow's py_func-based generator is bound to its process too.
//
// Thread-safe: the registry is locked; each source is used by one iterator at a time.
#ifndef TENSORWEAVE_SRC_DATA_GENERATOR_DATASET_H_
#define TENSORWEAVE_SRC_DATA_GENERATOR_DATASET_H_

#include <functional>
#include <memory>

#include "src/data/dataset.h"

namespace tw::data {

// One pass of a generator.
class GeneratorSource {
 public:
  virtual ~GeneratorSource() = default;
  // The next element, or *end_of_sequence; errors as the callback reports them.
  virtual Status Next(Element* out, bool* end_of_sequence) = 0;
};

// Starts a pass (each iterator over the dataset makes one).
using GeneratorFactory = std::function<StatusOr<std::unique_ptr<GeneratorSource>>()>;

// Registers `factory`; the id goes in a "Generator" dataset's `id` attribute.
int64_t RegisterGenerator(GeneratorFactory factory);

}  // namespace tw::data

#endif  // TENSORWEAVE_SRC_DATA_GENERATOR_DATASET_H_
