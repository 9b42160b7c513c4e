"""tf.distribute.experimental.partitioners: TF 2's partitioner classes, over the C++
partitioners TF 1.x's functions use (tensorweave/train/partitioners.h). A partitioner is
called with (shape, dtype, axis=0) and gives the number of parts along each dimension."""

from tensorweave.ops import partitioned_variables as _pv


class Partitioner:
    def __call__(self, shape, dtype, axis=0):
        raise NotImplementedError


class FixedShardsPartitioner(Partitioner):
    """`num_shards` parts (at most the dimension's size)."""

    def __init__(self, num_shards):
        self._num_shards = num_shards

    def __call__(self, shape, dtype=None, axis=0):
        return _pv.fixed_size_partitioner(self._num_shards, axis)(shape, dtype)


class MinSizePartitioner(Partitioner):
    """As many parts as keep each at least `min_shard_bytes`, at most `max_shards`."""

    def __init__(self, min_shard_bytes=256 << 10, max_shards=1, bytes_per_string=16):
        if min_shard_bytes < 1:
            raise ValueError("Argument `min_shard_bytes` must be positive. Received: %s"
                             % min_shard_bytes)
        if max_shards < 1:
            raise ValueError("Argument `max_shards` must be positive. Received: %s" % max_shards)
        if bytes_per_string < 1:
            raise ValueError("Argument `bytes_per_string` must be positive. Received: %s"
                             % bytes_per_string)
        self._args = (max_shards, min_shard_bytes, bytes_per_string)

    def __call__(self, shape, dtype, axis=0):
        max_shards, min_bytes, per_string = self._args
        return _pv.min_max_variable_partitioner(max_shards, axis, min_bytes,
                                                per_string)(shape, dtype)


class MaxSizePartitioner(Partitioner):
    """As few parts as keep each under `max_shard_bytes` (at most `max_shards`)."""

    def __init__(self, max_shard_bytes, max_shards=None, bytes_per_string=16):
        if max_shard_bytes < 1:
            raise ValueError("Argument `max_shard_bytes` must be positive. Received %s"
                             % max_shard_bytes)
        if max_shards is not None and max_shards < 1:
            raise ValueError("Argument `max_shards` must be positive. Received %s" % max_shards)
        if bytes_per_string < 1:
            raise ValueError("Argument `bytes_per_string` must be positive. Received: %s"
                             % bytes_per_string)
        self._args = (max_shard_bytes, max_shards, bytes_per_string)

    def __call__(self, shape, dtype, axis=0):
        max_bytes, max_shards, per_string = self._args
        return _pv.variable_axis_size_partitioner(max_bytes, axis, per_string,
                                                  max_shards)(shape, dtype)
