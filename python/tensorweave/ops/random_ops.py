"""Random tensors: random_normal, truncated_normal, random_uniform."""

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import math_ops


_DEFAULT_GRAPH_SEED = 87654321


def _seeds(seed):
    """TF's get_seed: with neither seed, (0, 0), fresh randomness each run; with a graph
    seed, the op's seed is the graph's op count, so two ops differ; (0, 0) from explicit
    seeds becomes (0, 2**31 - 1), which the kernels do not read as "unseeded"."""
    graph = ops.get_default_graph()
    graph_seed = graph.seed
    if graph_seed is None and seed is None:
        return 0, 0
    if graph_seed is None:
        graph_seed = _DEFAULT_GRAPH_SEED
    if seed is None:
        seed = graph.version  # the number of ops so far
    if graph_seed == 0 and seed == 0:
        return 0, 2**31 - 1
    return graph_seed, seed


def _shaped(op_type, shape, dtype, seed, name):
    seed1, seed2 = _seeds(seed)
    shape_tensor = convert_to_tensor(shape, dtype=dtypes.int32)
    return getattr(raw_ops, op_type)(shape=shape_tensor, dtype=dtypes.as_dtype(dtype),
                                     seed=seed1, seed2=seed2, name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    with ops.name_scope(name, "random_normal") as scope:
        x = _shaped("RandomStandardNormal", shape, dtype, seed, "RandomStandardNormal")
        return math_ops.add(math_ops.multiply(x, stddev), mean, name=scope)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    with ops.name_scope(name, "truncated_normal") as scope:
        x = _shaped("TruncatedNormal", shape, dtype, seed, "TruncatedNormal")
        return math_ops.add(math_ops.multiply(x, stddev), mean, name=scope)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise NotImplementedError("random_uniform: only floating dtypes are supported")
    if maxval is None:
        maxval = 1
    with ops.name_scope(name, "random_uniform") as scope:
        x = _shaped("RandomUniform", shape, dtype, seed, "RandomUniform")
        return math_ops.add(math_ops.multiply(x, math_ops.subtract(
            convert_to_tensor(maxval, dtype=dtype), minval)), minval, name=scope)


def random_shuffle(value, seed=None, name=None):
    """tf.random_shuffle / tf.random.shuffle: value's first dimension in a random order,
    seeded as the other random ops (the graph seed and the op's)."""
    seed1, seed2 = _seeds(seed)
    return raw_ops.RandomShuffle(value=value, seed=seed1, seed2=seed2,
                                 name=name or "RandomShuffle")
