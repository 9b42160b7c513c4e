"""TF 1.x's array ops that move a tensor's elements into another shape, over the C++ ops
(src/ops/transpose_ops.cc, reshape_ops.cc, split_ops.cc, sequence_ops.cc): tf.transpose,
tf.tile, tf.broadcast_to, tf.expand_dims, tf.squeeze, tf.split, tf.reverse, tf.one_hot,
tf.cumsum, tf.range and tf.rank, with TF's signatures,
defaults and argument errors. The kernels and shape functions hold the behaviour; this module
only maps TF's Python arguments onto the ops' inputs and attributes."""

import builtins

import numpy as np

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import op_def_library
from tensorweave.framework import ops
from tensorweave.framework.constant_op import constant, convert_to_tensor


def _lookup(new_name, new_value, old_name, old_value):
    """TF's deprecated_argument_lookup: one of a renamed argument's two names."""
    if new_value is not None and old_value is not None:
        raise ValueError("Cannot specify both '%s' and '%s'" % (new_name, old_name))
    return new_value if new_value is not None else old_value


def rank(input, name=None):  # noqa: A002 (TF's name)
    """The number of dimensions of `input` as an int32 scalar (a constant when static)."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.shape.ndims is not None:
        return constant(input.shape.ndims, dtype=dtypes.int32, name=name or "Rank")
    length = raw_ops.Shape(input=raw_ops.Shape(input=input, out_type=dtypes.int32),
                           out_type=dtypes.int32)
    return raw_ops.Reshape(tensor=length, shape=constant([], dtype=dtypes.int32),
                           name=name or "Rank")


def transpose(a, perm=None, name="transpose", conjugate=False):
    """`a` with its dimensions permuted by `perm`; the dimensions reversed when it is None."""
    a = convert_to_tensor(a)
    if conjugate and a.dtype.is_complex:
        # TF conjugates complex elements; for real ones conjugate changes nothing.
        raise NotImplementedError("transpose: conjugate=True of a complex tensor needs "
                                  "ConjugateTranspose, which tensorweave does not have")
    if perm is None:
        ndims = a.shape.ndims
        if ndims is not None:
            perm = constant(list(builtins.range(ndims - 1, -1, -1)), dtype=dtypes.int32)
        else:
            r = rank(a)
            perm = raw_ops.Range(start=r - 1, limit=-1, delta=-1)
    return raw_ops.Transpose(x=a, perm=perm, name=name)


def tile(input, multiples, name=None):  # noqa: A002
    return raw_ops.Tile(input=input, multiples=multiples, name=name or "Tile")


def broadcast_to(input, shape, name=None):  # noqa: A002
    return raw_ops.BroadcastTo(input=input, shape=shape, name=name or "BroadcastTo")


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    axis = _lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return raw_ops.ExpandDims(input=input, dim=axis, name=name or "ExpandDims")


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = _lookup("axis", axis, "squeeze_dims", squeeze_dims)
    if np.isscalar(axis):
        axis = [axis]
    return raw_ops.Squeeze(input=input, squeeze_dims=[int(a) for a in axis or []],
                           name=name or "Squeeze")


# Range's operands are cast to the widest of their types, as TF's tf.range does.
_RANGE_ORDER = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """start, start + delta, ... below limit (above it for a negative delta); range(n) is
    0 .. n-1. Values of mixed types take the widest of int32 < int64 < float32 < float64,
    or `dtype` when given."""
    if limit is None:
        start, limit = 0, start
    with ops.name_scope(name, "Range", [start, limit, delta]) as scope:
        values = [convert_to_tensor(v, dtype=dtype, name=n)
                  for v, n in ((start, "start"), (limit, "limit"), (delta, "delta"))]
        if dtype is None:
            widest = max((v.dtype for v in values), key=_range_rank)
            from tensorweave.ops import math_ops
            values = [v if v.dtype == widest else math_ops.cast(v, widest) for v in values]
        return raw_ops.Range(start=values[0], limit=values[1], delta=values[2], name=scope)


def _range_rank(dtype):
    if dtype not in _RANGE_ORDER:
        raise TypeError("range: start, limit and delta must be int32, int64, float32 or "
                        "float64, got %s" % dtype.name)
    return _RANGE_ORDER.index(dtype)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """A list of the pieces of `value` along `axis`: `num_or_size_splits` equal ones (an
    int), or pieces of the listed sizes (one may be -1: the rest of the dimension)."""
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(
            num_or_size_splits, bool):
        op = op_def_library.apply_op("Split", name=name, split_dim=axis, value=value,
                                     num_split=int(num_or_size_splits))
        return list(op.outputs)
    sizes = convert_to_tensor(num_or_size_splits)
    if num is None:
        if sizes.shape.ndims != 1 or sizes.shape[0].value is None:
            raise ValueError("Cannot infer num from shape %s" % sizes.shape)
        num = sizes.shape[0].value
    op = op_def_library.apply_op("SplitV", name=name, value=value, size_splits=sizes,
                                 split_dim=axis, num_split=int(num))
    return list(op.outputs)


def reverse(tensor, axis, name=None):
    """`tensor` with the dimensions in `axis` (a list; negative counts from the end)
    reversed: TF 1.x's tf.reverse, which is tf.reverse_v2."""
    return raw_ops.ReverseV2(tensor=tensor, axis=axis, name=name or "ReverseV2")


reverse_v2 = reverse


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """on_value (1) where a new dimension of size `depth` at `axis` (default last) equals
    `indices`, off_value (0) elsewhere; the type is dtype, else on/off_value's, else float32.
    Indices outside [0, depth) give a row of off_value."""
    with ops.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        given = [convert_to_tensor(v) for v in (on_value, off_value) if v is not None]
        for v, what in zip(given, ("on_value", "off_value")):
            if dtype is not None and v.dtype != dtypes.as_dtype(dtype):
                raise TypeError("dtype {0} of {1} does not match dtype parameter {2}".format(
                    v.dtype, what, dtypes.as_dtype(dtype)))
        if len(given) == 2 and given[0].dtype != given[1].dtype:
            raise TypeError("dtype {0} of on_value does not match dtype {1} of off_value".format(
                given[0].dtype, given[1].dtype))
        if dtype is None:
            dtype = given[0].dtype if given else dtypes.float32
        dtype = dtypes.as_dtype(dtype)
        on = convert_to_tensor(1 if on_value is None else on_value, dtype=dtype, name="on_value")
        off = convert_to_tensor(0 if off_value is None else off_value, dtype=dtype,
                                name="off_value")
        return raw_ops.OneHot(indices=indices, depth=convert_to_tensor(depth, dtype=dtypes.int32),
                              on_value=on, off_value=off, axis=-1 if axis is None else axis,
                              name=scope)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):  # noqa: A002
    """Running sums of `x` along `axis`: from the end when `reverse`, each without its own
    element when `exclusive`."""
    return raw_ops.Cumsum(x=x, axis=axis, exclusive=exclusive, reverse=reverse,
                          name=name or "Cumsum")
