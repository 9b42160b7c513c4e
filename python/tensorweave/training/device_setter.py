"""TF 1.x's replica_device_setter over tensorweave/train/device_setter.h: model state on
the ps tasks (round robin, or a strategy such as GreedyLoadBalancingStrategy), everything
else on the worker, and devices the program names merged in."""

import re

import numpy as np

from tensorweave import _native
from tensorweave.training import server_lib
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape

# The op types that hold model state, as TF's STANDARD_PS_OPS (those this runtime has:
# `Variable`; the others never occur in its graphs).
STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors",
                   "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp")


def byte_size_load_fn(op):
    """The bytes a variable op will hold, from its `shape` and `dtype` attributes; the shape
    must be fully defined."""
    shape = tensor_shape.as_shape(op.get_attr("shape"))
    shape.assert_is_fully_defined()
    return shape.num_elements() * dtypes.as_dtype(op.get_attr("dtype")).size


class GreedyLoadBalancingStrategy:
    """Each op goes to the ps task with the least load so far (`load_fn`, e.g.
    byte_size_load_fn); ties go to the lowest task."""

    def __init__(self, num_tasks, load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op):
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


class _RoundRobinStrategy:
    """Only for programs that build one explicitly: replica_device_setter's default round
    robin is the C++ setter's own."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for `tf.device`, or None when there are no ps tasks (so `with
    tf.device(None)` leaves placement alone, as in TF)."""
    if cluster is not None:
        if isinstance(cluster, dict):
            cluster_spec = cluster
        elif isinstance(cluster, server_lib.ClusterDef):  # as TF, a ClusterDef too
            cluster_spec = server_lib.ClusterSpec(cluster).as_dict()
        elif hasattr(cluster, "as_dict"):
            cluster_spec = cluster.as_dict()
        else:  # TF's error for anything else
            raise TypeError("cluster must be a dictionary or ClusterSpec")
        job = re.search(r"/job:([^/]+)", _native.canonical_device(ps_device or ""))
        if job is None or not cluster_spec.get(job.group(1)):
            return None
        ps_tasks = len(cluster_spec[job.group(1)])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if ps_strategy is not None and not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    setter = _native.ReplicaDeviceSetter(ps_tasks, ps_device or "", worker_device or "",
                                         bool(merge_devices), list(ps_ops), ps_strategy)

    def device_function(op):
        return setter.device_for(op, op.type, op.name, op.device)

    return device_function
