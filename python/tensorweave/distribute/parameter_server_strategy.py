"""tf.distribute.experimental.ParameterServerStrategy: the model's variables on the ps
tasks (round robin, or split by a partitioner), steps run on the workers by a
ClusterCoordinator (coordinator.py). Placement is the C++ device setter's
(tensorweave/train/device_setter.h)."""

import contextlib
import enum

from tensorweave.distribute import cluster_resolver as cluster_resolver_lib
from tensorweave.framework import ops
from tensorweave.ops import math_ops
from tensorweave.ops import variable_scope
from tensorweave.training import device_setter


class ReduceOp(enum.Enum):
    SUM = "SUM"
    MEAN = "MEAN"


class InputContext:
    """What an input function needs to read its part of the data: which pipeline it is of
    how many (one per worker here) and the replicas per step."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self.num_replicas_in_sync != 0:
            raise ValueError("The `global_batch_size` %r is not divisible by "
                             "`num_replicas_in_sync` %r " % (global_batch_size,
                                                             self.num_replicas_in_sync))
        return global_batch_size // self.num_replicas_in_sync


class ParameterServerStrategy:
    """Variables created in `scope()` go to the ps tasks of `cluster_resolver`'s cluster
    (TF_CONFIG's when None), round robin, or in parts by `variable_partitioner` (a
    tf.distribute.experimental.partitioners class) for `tf.get_variable`. Each worker is
    one replica: `num_replicas_in_sync` is 1, and `run` calls the function once, in the
    worker's replica of the step being traced."""

    def __init__(self, cluster_resolver=None, variable_partitioner=None):
        if cluster_resolver is None:
            cluster_resolver = cluster_resolver_lib.TFConfigClusterResolver()
        cluster = cluster_resolver.cluster_spec()
        jobs = cluster.jobs if cluster else []
        if "ps" not in jobs or "worker" not in jobs:
            raise ValueError("`ParameterServerStrategy` needs a cluster with \"ps\" and "
                             "\"worker\" jobs; the cluster has %s" % (sorted(jobs),))
        self._cluster_resolver = cluster_resolver
        self._cluster = cluster
        self._variable_partitioner = variable_partitioner
        self._num_workers = cluster.num_tasks("worker")
        self._num_ps = cluster.num_tasks("ps")
        # One placement order for the variables made in scope() and in every trace.
        self._ps_strategy = device_setter._RoundRobinStrategy(self._num_ps)
        self._input_worker = None  # the worker whose dataset is being made
        self.extended = _Extended(self)

    cluster_resolver = property(lambda self: self._cluster_resolver)
    num_replicas_in_sync = property(lambda self: 1)

    def _device_function(self, worker_device=""):
        return device_setter.replica_device_setter(
            cluster=self._cluster, worker_device=worker_device, ps_strategy=self._ps_strategy)

    @contextlib.contextmanager
    def scope(self):
        """Variables made inside go to the ps tasks; other ops are left unplaced (they run
        where a step uses them)."""
        with ops.device(self._device_function()), self._partitioning():
            yield self

    @contextlib.contextmanager
    def _partitioning(self):
        if self._variable_partitioner is None:
            yield
            return
        partitioner = self._variable_partitioner

        def tf1_partitioner(shape, dtype, **unused):
            return partitioner(shape, dtype)

        with variable_scope.variable_scope(variable_scope.get_variable_scope(),
                                           partitioner=tf1_partitioner):
            yield

    @contextlib.contextmanager
    def _worker_scope(self, worker):
        """Where a trace for `worker` builds: its ops on the worker, variables it makes on
        the ps tasks, variables found again by name rather than made twice."""
        device = "/job:worker/task:%d" % worker
        with ops.device(self._device_function(device)), self._partitioning(), \
                variable_scope.variable_scope(variable_scope.get_variable_scope(),
                                              reuse=variable_scope.AUTO_REUSE):
            yield

    def run(self, fn, args=(), kwargs=None, options=None):
        return fn(*args, **(kwargs or {}))

    experimental_run_v2 = run

    def reduce(self, reduce_op, value, axis=None):
        if isinstance(reduce_op, str):
            reduce_op = ReduceOp(reduce_op.upper())
        if axis is None:
            return value
        if reduce_op == ReduceOp.SUM:
            return math_ops.reduce_sum(value, axis=axis)
        return math_ops.reduce_mean(value, axis=axis)

    def experimental_distribute_dataset(self, dataset, options=None):
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        worker = self._input_worker if self._input_worker is not None else 0
        return dataset_fn(InputContext(self._num_workers, worker, 1))

    experimental_distribute_datasets_from_function = distribute_datasets_from_function


class _Extended:
    def __init__(self, strategy):
        self._strategy = strategy

    @property
    def parameter_devices(self):
        return tuple("/job:ps/replica:0/task:%d/device:CPU:0" % i
                     for i in range(self._strategy._num_ps))

    @property
    def worker_devices(self):
        return tuple("/job:worker/replica:0/task:%d/device:CPU:0" % i
                     for i in range(self._strategy._num_workers))

    experimental_between_graph = property(lambda self: True)
    experimental_should_init = property(lambda self: True)
    should_checkpoint = property(lambda self: True)
    should_save_summary = property(lambda self: True)
