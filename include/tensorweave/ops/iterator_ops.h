// Graph-building functions for a tf.data iterator's checkpoints: its state as a string
// tensor to save, and an op that puts an iterator back where a saved state left it
// (tensorweave/train/saver.h saves iterators given to it with these). An iterator is the
// DT_RESOURCE handle its Iterator or OneShotIterator node gives.
#ifndef TENSORWEAVE_OPS_ITERATOR_OPS_H_
#define TENSORWEAVE_OPS_ITERATOR_OPS_H_

#include "tensorweave/scope.h"

namespace tw::ops {

// The iterator's state, a scalar string: its pipeline, its inputs and the number of
// elements produced. FailedPrecondition when run before the iterator is initialized.
Output SerializeIterator(const Scope& scope, Input iterator);

// Rebuilds the pipeline `state` (SerializeIterator's output) describes on `iterator` and
// replays its elements up to the saved position, so that the next element is the one that
// followed the save; the iterator need not be initialized. Takes time in proportion to
// the position (docs/architecture.md, "Input pipelines").
Operation DeserializeIterator(const Scope& scope, Input iterator, Input state);

}  // namespace tw::ops

#endif  // TENSORWEAVE_OPS_ITERATOR_OPS_H_
