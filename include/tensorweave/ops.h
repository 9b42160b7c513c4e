// Every op's graph-building function.
#ifndef TENSORWEAVE_OPS_H_
#define TENSORWEAVE_OPS_H_

#include "tensorweave/ops/activation_ops.h"
#include "tensorweave/ops/array_ops.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/ops/cwise_math_ops.h"
#include "tensorweave/ops/index_ops.h"
#include "tensorweave/ops/io_ops.h"
#include "tensorweave/ops/math_ops.h"
#include "tensorweave/ops/nn_ops.h"
#include "tensorweave/ops/queue_ops.h"
#include "tensorweave/ops/random_ops.h"
#include "tensorweave/ops/state_ops.h"
#include "tensorweave/ops/summary_ops.h"
#include "tensorweave/ops/training_ops.h"

#endif  // TENSORWEAVE_OPS_H_
