// The seeding rule every random kernel shares, TF's: a node's `seed` and `seed2`
// attributes both 0 mean fresh randomness each time the kernel is made; otherwise the pair
// fixes the node's sequence (the Python layer derives the pair from the graph seed and the
// op seed, python/tensorweave/ops/random_ops.py).
#ifndef TENSORWEAVE_SRC_OPS_RANDOM_SEED_H_
#define TENSORWEAVE_SRC_OPS_RANDOM_SEED_H_

#include <cstdint>
#include <random>

#include "src/framework/op_kernel.h"

namespace tw::internal {

// Seeds `engine` from the node's seed and seed2; a missing attribute is the construction's
// error.
inline void SeedFromAttrs(OpKernelConstruction* c, std::mt19937_64* engine) {
  int64_t seed = 0, seed2 = 0;
  c->SetStatus(c->GetAttr("seed", &seed));
  c->SetStatus(c->GetAttr("seed2", &seed2));
  if (seed == 0 && seed2 == 0) {
    std::random_device entropy;
    engine->seed((static_cast<uint64_t>(entropy()) << 32) | entropy());
  } else {
    std::seed_seq sequence{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                           static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)};
    engine->seed(sequence);
  }
}

}  // namespace tw::internal

#endif  // TENSORWEAVE_SRC_OPS_RANDOM_SEED_H_
