"""TF 1.x's partitioned variables: get_variable(..., partitioner=...) splits a variable
along dimension 0 into parts "<name>/part_<i>" (the first shape[0] % n parts one row
longer), which a replica_device_setter spreads over the ps tasks. The parts are ordinary
variables (trainable, initialized, saved as slices of one checkpoint variable, so a
checkpoint restores onto another partitioning); embedding_lookup reads rows from the part
holding them (tensorweave/train/variables.h's PartitionedVariable::Lookup)."""

import collections
import inspect

import numpy as np

from tensorweave import _native
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import variables

_SaveSliceInfo = collections.namedtuple("SaveSliceInfo",
                                        ["full_name", "full_shape", "var_offset", "var_shape"])


# The partitioners are the C++ ones (tensorweave/train/partitioners.h); these are TF's
# callables over them: partitioner(shape, dtype) -> the partition list.

def _dims(shape):
    return [-1 if d is None else d for d in tensor_shape.as_shape(shape).as_list()]


def fixed_size_partitioner(num_shards, axis=0):
    """Splits into `num_shards` parts (at most the dimension's size)."""
    def partitioner(shape, dtype=None, **unused):
        return _native.fixed_size_partitions(_dims(shape), num_shards, axis)
    return partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """As many parts as keep each at least min_slice_size bytes, at most max_partitions
    (and at most the dimension's size)."""
    # Arguments are checked now, as TF does, by the C++ partitioner on a one-row shape.
    _native.min_max_variable_partitions([1], "float32", max_partitions, min_slice_size, 0,
                                        bytes_per_string_element)

    def partitioner(shape, dtype, **unused):
        return _native.min_max_variable_partitions(
            _dims(shape), dtypes.as_dtype(dtype).name, max_partitions, min_slice_size, axis,
            bytes_per_string_element)
    return partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """As few parts as keep each under max_shard_bytes (at most max_shards)."""
    # Arguments are checked now, as TF does, by the C++ partitioner on a one-row shape.
    _native.variable_axis_size_partitions([1], "float32", max_shard_bytes, 0,
                                          bytes_per_string_element, max_shards or 0)

    def partitioner(shape, dtype, **unused):
        return _native.variable_axis_size_partitions(
            _dims(shape), dtypes.as_dtype(dtype).name, max_shard_bytes, axis,
            bytes_per_string_element, max_shards or 0)
    return partitioner


class PartitionedVariable:
    """One variable stored as parts along dimension 0."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        self._name = name
        self._shape = tensor_shape.as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._variable_list = list(variable_list)
        self._partitions = list(partitions)
        self._value = None

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        return len(self._variable_list)

    def _get_variable_list(self):
        return list(self._variable_list)

    def _get_partitions(self):
        return list(self._partitions)

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)

    def get_shape(self):
        return self._shape

    def as_tensor(self):
        """The whole variable: the parts read and concatenated."""
        with ops.name_scope(None), ops.name_scope(self._name + "/"):
            return array_ops.concat([v.value() for v in self._variable_list], 0,
                                    name="ConcatPartitions")

    def _as_graph_element(self):
        if self._value is None:
            self._value = self.as_tensor()
        return self._value

    def __repr__(self):
        return "<tf.PartitionedVariable '%s' shape=%s parts=%d>" % (
            self._name, self._shape, len(self._variable_list))


def create(full_name, shape, dtype, initializer, partitioner, trainable, collections_):
    """get_variable's partitioned case: the parts, each initialized by `initializer` for its
    own shape."""
    if shape is None:
        raise ValueError("Shape of a new partitioned variable (%s) must be fully defined, but "
                         "instead was %s." % (full_name, shape))
    shape = tensor_shape.as_shape(shape)
    if not shape.is_fully_defined() or shape.ndims < 1:
        raise ValueError("Shape of a new partitioned variable (%s) must be fully defined and "
                         "of rank 1 or more, but instead was %s." % (full_name, shape))
    partitions = partitioner(shape=shape, dtype=dtype)
    if not isinstance(partitions, (list, tuple)) or len(partitions) != shape.ndims:
        raise ValueError("Partitioner returned a partition list that does not match the "
                         "Variable's rank: %s vs. %s" % (partitions, shape))
    dims = shape.as_list()
    num = min(int(partitions[0]), dims[0])
    if num < 1:
        raise ValueError("Partitioner returned zero partitions for axis 0: %s" % partitions)
    base, extra = divmod(dims[0], num)
    parts, offset = [], 0
    graph = ops.get_default_graph()
    for i in range(num):
        part_dims = [base + (1 if i < extra else 0)] + dims[1:]
        info = _PartitionInfo(dims, [offset] + [0] * (len(dims) - 1))
        init = (lambda d=part_dims, p=info: _call_initializer(initializer, d, dtype, p)) \
            if callable(initializer) else _slice_value(initializer, offset, part_dims[0], dtype)
        with graph.name_scope(None):
            part = variables.Variable(init, trainable=trainable, collections=collections_,
                                      name="%s/part_%d" % (full_name, i), dtype=dtype)
        part._save_slice_info = _SaveSliceInfo(full_name, dims, [offset] + [0] * (len(dims) - 1),
                                               part_dims)
        parts.append(part)
        offset += part_dims[0]
    return PartitionedVariable(full_name, shape, dtype, parts, [num] + [1] * (len(dims) - 1))


class _PartitionInfo(collections.namedtuple("PartitionInfo", ["full_shape", "var_offset"])):
    """What an initializer of a part learns of its place in the whole (TF's)."""

    def single_offset(self, shape):
        return self.var_offset[0]


def _call_initializer(initializer, shape, dtype, partition_info):
    """initializer(shape, dtype=, partition_info=) when it takes partition_info (as TF
    checks), else without."""
    try:
        params = inspect.signature(initializer).parameters
    except (TypeError, ValueError):
        params = {}
    if "partition_info" in params or any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return initializer(shape, dtype=dtype, partition_info=partition_info)
    return initializer(shape, dtype=dtype)


def _slice_value(value, offset, rows, dtype):
    return convert_to_tensor(np.asarray(value)[offset:offset + rows], dtype=dtype)


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """Rows `ids` of `params`: a tensor or variable (gather), or a PartitionedVariable or a
    list of variables whose parts are split by `partition_strategy` ("mod": id i in part
    i % n at row i // n; "div": contiguous rows)."""
    if max_norm is not None:
        raise NotImplementedError("embedding_lookup: max_norm is not supported")
    if partition_strategy not in ("mod", "div"):
        raise ValueError("Unrecognized partition strategy: " + partition_strategy)
    if isinstance(params, (list, tuple)) and len(params) == 1:
        params = params[0]
    if not isinstance(params, (list, tuple, PartitionedVariable)):
        return array_ops.gather(params, ids, name=name or "embedding_lookup")
    parts = list(params)
    if not all(isinstance(p, variables.Variable) for p in parts):
        raise TypeError("embedding_lookup: the parts of params must be Variables")
    dims = [p.shape.as_list() for p in parts]
    offsets = list(np.cumsum([0] + [d[0] for d in dims[:-1]]))
    full_shape = [sum(d[0] for d in dims)] + dims[0][1:]
    graph = parts[0].graph
    ids = convert_to_tensor(ids)
    with graph._native_building(name or "embedding_lookup", "Identity") as device:
        node, index = _native.partitioned_lookup(
            graph._native,
            [(p.op.name, p.dtype.as_datatype_enum, d) for p, d in zip(parts, dims)],
            [int(o) for o in offsets], full_shape, ids._native_ref, partition_strategy, device)
    out = graph.get_operation_by_name(node).outputs[index]
    # As TF's lookup: the ids' shape, then a row's (the parts' own lookups lose it).
    out.set_shape(ids.shape.concatenate(full_shape[1:]))
    return out
