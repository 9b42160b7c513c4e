"""Array ops with TF 1.x's names and signatures."""

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
    """`input` unless fed (fed values must match `shape`)."""
    value = convert_to_tensor(input)
    out = identity(value, name=name or "PlaceholderWithDefault")
    out._shape = tensor_shape.as_shape(shape)
    return out


def identity(input, name=None):  # noqa: A002
    value = convert_to_tensor(input)
    return raw_ops.Identity(input=value, name=name or "Identity")


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


def zeros(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    if isinstance(shape, ops.Tensor):
        return fill(shape, constant(0, dtype=dtype), name=name or "zeros")
    zero = b"" if dtype == dtypes.string else 0
    return constant(np.full(tensor_shape.as_shape(shape).as_list(), zero,
                            dtype=dtype.as_numpy_dtype), dtype=dtype, name=name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    if isinstance(shape, ops.Tensor):
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
    if x is None or y is None:
        raise NotImplementedError("where: the one-argument form is not supported")
    return raw_ops.Select(condition=condition, t=x, e=y, name=name or "Select")


def _slice_helper(tensor, key):
    """t[i], t[a:b] along dimension 0, through Slice and Reshape."""
    if isinstance(key, int):
        row = slice(tensor, _begin(tensor, key), _size(tensor, 1))
        return raw_ops.Reshape(tensor=row, shape=_rest_shape(tensor), name="strided_slice")
    if isinstance(key, type(np.s_[0:1])) and key.step in (None, 1):
        start = key.start or 0
        stop = key.stop
        if stop is None or start < 0 or stop < 0:
            raise NotImplementedError("slicing: only [start:stop] with non-negative bounds")
        return slice(tensor, _begin(tensor, start), _size(tensor, stop - start),
                     name="strided_slice")
    raise NotImplementedError("slicing: only t[i] and t[a:b] along the first dimension")


def _rank(tensor):
    if tensor.shape.ndims is None:
        raise NotImplementedError("slicing a tensor of unknown rank")
    return tensor.shape.ndims


def _begin(tensor, start):
    return [start] + [0] * (_rank(tensor) - 1)


def _size(tensor, count):
    return [count] + [-1] * (_rank(tensor) - 1)


def _rest_shape(tensor):
    dims = tensor.shape.as_list()[1:]
    if any(d is None for d in dims):
        raise NotImplementedError("t[i] of a tensor whose other dimensions are unknown")
    return dims
