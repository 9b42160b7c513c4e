"""Array ops with TF 1.x's names and signatures."""

import builtins

import numpy as np

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import constant, convert_to_tensor


def placeholder(dtype, shape=None, name=None):
    """A tensor that must be fed; its `shape` (None dims allowed) is checked on feed."""
    dtype = dtypes.as_dtype(dtype)
    shape = tensor_shape.as_shape(shape) if shape is not None else tensor_shape.unknown_shape()
    return raw_ops.Placeholder(dtype=dtype, shape=shape, name=name or "Placeholder")


def placeholder_with_default(input, shape, name=None):  # noqa: A002 (TF's name)
    """`input` unless fed; its static shape is `shape`, which fed values must have."""
    value = convert_to_tensor(input)
    return raw_ops.PlaceholderWithDefault(input=value, dtype=value.dtype,
                                          shape=tensor_shape.as_shape(shape),
                                          name=name or "PlaceholderWithDefault")


def identity(input, name=None):  # noqa: A002
    value = convert_to_tensor(input)
    return raw_ops.Identity(input=value, name=name or "Identity")


def stop_gradient(input, name=None):  # noqa: A002
    """`input`, through which tf.gradients does not flow."""
    return raw_ops.StopGradient(input=convert_to_tensor(input), name=name or "StopGradient")


def reshape(tensor, shape, name=None):
    shape_tensor = convert_to_tensor(shape, dtype=dtypes.int32) if not isinstance(
        shape, ops.Tensor) else shape
    return raw_ops.Reshape(tensor=tensor, shape=shape_tensor, name=name or "Reshape")


def concat(values, axis, name="concat"):
    return raw_ops.Concat(values=list(values), axis=axis, name=name)


def stack(values, axis=0, name="stack"):
    return raw_ops.Pack(values=list(values), axis=axis, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    value = convert_to_tensor(value)
    if num is None:
        if value.shape.ndims is None or value.shape[axis].value is None:
            raise ValueError("Cannot infer num from shape %s" % value.shape)
        num = value.shape[axis].value
    return raw_ops.Unpack(value=value, num=num, axis=axis, name=name)


def fill(dims, value, name=None):
    return raw_ops.Fill(dims=dims, value=value, name=name or "Fill")


# Above this many elements, zeros and ones are a Fill, not a constant the graph carries.
_MAX_CONSTANT_ELEMENTS = 1000


def _large(shape):
    dims = tensor_shape.as_shape(shape).as_list()
    return int(np.prod(dims)) > _MAX_CONSTANT_ELEMENTS


def zeros(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    if isinstance(shape, ops.Tensor) or (dtype != dtypes.string and _large(shape)):
        return fill(shape, constant(0, dtype=dtype), name=name or "zeros")
    zero = b"" if dtype == dtypes.string else 0
    return constant(np.full(tensor_shape.as_shape(shape).as_list(), zero,
                            dtype=dtype.as_numpy_dtype), dtype=dtype, name=name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    if isinstance(shape, ops.Tensor) or _large(shape):
        return fill(shape, constant(1, dtype=dtype), name=name or "ones")
    return constant(np.ones(tensor_shape.as_shape(shape).as_list(), dtype=dtype.as_numpy_dtype),
                    dtype=dtype, name=name or "ones")


def zeros_like(tensor, dtype=None, name=None):
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
        from tensorweave.ops import math_ops
        return math_ops.cast(raw_ops.ZerosLike(x=tensor), dtype, name=name)
    return raw_ops.ZerosLike(x=tensor, name=name or "zeros_like")


def ones_like(tensor, dtype=None, name=None):
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
        from tensorweave.ops import math_ops
        return math_ops.cast(raw_ops.OnesLike(x=tensor), dtype, name=name)
    return raw_ops.OnesLike(x=tensor, name=name or "ones_like")


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return raw_ops.Shape(input=input, out_type=out_type, name=name or "Shape")


def slice(input_, begin, size, name=None):  # noqa: A001 (TF's name)
    return raw_ops.Slice(input=input_, begin=begin, size=size, name=name or "Slice")


def gather(params, indices, validate_indices=None, name=None, axis=0):
    if axis != 0:
        raise NotImplementedError("gather: only axis=0 is supported by this runtime")
    return raw_ops.Gather(params=params, indices=indices, name=name or "GatherV2")


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    if mode.upper() != "CONSTANT" or constant_values != 0:
        raise NotImplementedError("pad: only mode='CONSTANT' with zeros is supported")
    return raw_ops.Pad(input=tensor, paddings=paddings, name=name or "Pad")


def where(condition, x=None, y=None, name=None):
    """The indices of the true elements ([num_true, rank], int64), or, with x and y, the
    elements of x where condition holds and of y elsewhere."""
    if x is None and y is None:
        return raw_ops.Where(input=condition, name=name or "Where")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return raw_ops.Select(condition=condition, t=x, e=y, name=name or "Select")


def _slice_helper(tensor, key):
    """TF's basic indexing, t[1], t[:, 2], t[1:3, ::1], t[-1], through Slice and Reshape:
    integers and slices with step 1, one per dimension from the first (the rest are taken
    whole). Negative bounds need the dimension's static size."""
    keys = key if isinstance(key, builtins.tuple) else (key,)
    if tensor.shape.ndims is None:
        raise NotImplementedError("indexing a tensor of unknown rank")
    dims = tensor.shape.as_list()
    if len(keys) > len(dims):
        raise ValueError("Index out of range using input dim %d; input has only %d dims" %
                         (len(keys), len(dims)))
    begin, size, kept = [], [], []
    for i, d in enumerate(dims):
        k = keys[i] if i < len(keys) else builtins.slice(None)
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            k = int(k)
            if k < 0:
                if d is None:
                    raise NotImplementedError("a negative index needs the dimension's size")
                k += d
            if d is not None and not 0 <= k < d:
                raise ValueError("slice index %d of dimension %d out of bounds." % (keys[i], i))
            begin.append(k)
            size.append(1)
        elif isinstance(k, builtins.slice) and k.step in (None, 1):
            start, stop = k.start or 0, k.stop
            if start < 0 or (stop is not None and stop < 0):
                if d is None:
                    raise NotImplementedError("a negative bound needs the dimension's size")
                start = start + d if start < 0 else start
                stop = stop + d if stop is not None and stop < 0 else stop
            if d is not None:
                start = min(start, d)
                stop = d if stop is None else min(stop, d)
            begin.append(start)
            size.append(-1 if stop is None else max(stop - start, 0))
            kept.append(i)
        else:
            raise NotImplementedError("indexing with %r: only integers and slices with step 1"
                                      % (k,))
    out = raw_ops.Slice(input=tensor, begin=begin, size=size, name="strided_slice")
    if len(kept) == len(dims):
        return out
    sliced = out.shape.as_list()
    new_shape = [sliced[i] for i in kept]
    if any(d is None for d in new_shape):
        raise NotImplementedError("indexing away a dimension of a tensor whose other "
                                  "dimensions are unknown")
    return raw_ops.Reshape(tensor=out, shape=new_shape, name="strided_slice")
