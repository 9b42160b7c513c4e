// The whole public API of tensorweave in one include.
#ifndef TENSORWEAVE_TENSORWEAVE_H_
#define TENSORWEAVE_TENSORWEAVE_H_

#include "tensorweave/cluster_spec.h"
#include "tensorweave/data.h"
#include "tensorweave/device_name.h"
#include "tensorweave/gradient.h"
#include "tensorweave/ops.h"
#include "tensorweave/run_config.h"
#include "tensorweave/scope.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "tensorweave/status.h"
#include "tensorweave/summary.h"
#include "tensorweave/tensor.h"
#include "tensorweave/tensor_shape.h"
#include "tensorweave/train/device_setter.h"
#include "tensorweave/train/gradients.h"
#include "tensorweave/train/hooks.h"
#include "tensorweave/train/monitored_session.h"
#include "tensorweave/train/optimizer.h"
#include "tensorweave/train/saver.h"
#include "tensorweave/train/sync_replicas.h"
#include "tensorweave/train/variables.h"
#include "tensorweave/types.h"

#endif  // TENSORWEAVE_TENSORWEAVE_H_
