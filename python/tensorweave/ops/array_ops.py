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


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    """The number of elements: the product of the shape (a constant when it is static)."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.shape.is_fully_defined():
        return constant(int(np.prod(input.shape.as_list(), dtype=np.int64)), dtype=out_type,
                        name=name or "Size")
    from tensorweave.ops import math_ops
    return math_ops.reduce_prod(shape(input, out_type=out_type), name=name or "Size")


def slice(input_, begin, size, name=None):  # noqa: A001 (TF's name)
    return raw_ops.Slice(input=input_, begin=begin, size=size, name=name or "Slice")


def gather(params, indices, validate_indices=None, name=None, axis=0):
    if axis != 0:
        raise NotImplementedError("gather: only axis=0 is supported by this runtime")
    return raw_ops.Gather(params=params, indices=indices, name=name or "GatherV2")


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """`tensor` surrounded by zeros (CONSTANT) or by mirror images of its edges (REFLECT
    without the edge element, SYMMETRIC with it; the MirrorPad op); mode in any case."""
    mode = mode.upper()
    if mode in ("REFLECT", "SYMMETRIC"):
        return raw_ops.MirrorPad(input=tensor, paddings=paddings, mode=mode,
                                 name=name or "MirrorPad")
    if mode != "CONSTANT":
        raise ValueError("Unknown padding mode: %s" % mode)
    if constant_values != 0:
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
    """TF's subscripts through the StridedSlice op, as TF 1.x builds them: integers (and
    scalar int tensors) take one index and drop the dimension, slices take start:stop:step
    (any step but 0, negative included), `...` stands for the dimensions not named, None
    (tf.newaxis) inserts one; on tensors of any rank, known or not."""
    keys = key if isinstance(key, builtins.tuple) else (key,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
             "shrink_axis_mask": 0}
    for index, k in enumerate(keys):
        bit = 1 << index
        if isinstance(k, builtins.slice):
            begin.append(0 if k.start is None else k.start)
            end.append(0 if k.stop is None else k.stop)
            strides.append(1 if k.step is None else k.step)
            masks["begin_mask"] |= bit if k.start is None else 0
            masks["end_mask"] |= bit if k.stop is None else 0
        elif k is Ellipsis:
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif k is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["new_axis_mask"] |= bit
        elif _is_index(k):
            begin.append(k)
            end.append(k + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
        else:
            raise TypeError("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis "
                            "(`None`) and scalar tf.int32/tf.int64 tensors are valid indices, "
                            "got %r" % (k,))
    with ops.name_scope(None, "strided_slice") as name:
        return raw_ops.StridedSlice(input=tensor, begin=_index_vector(begin, "stack"),
                                    end=_index_vector(end, "stack_1"),
                                    strides=_index_vector(strides, "stack_2"), name=name,
                                    **masks)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """tf.strided_slice: the StridedSlice op with its masks as given (what `tensor[...]`
    builds from a subscript); `strides` defaults to ones. `var` (TF's sliced-assign hook)
    is accepted and unused, as TF's graph-mode op does."""
    with ops.name_scope(name, "StridedSlice", [input_, begin, end]) as scope:
        begin = _index_vector(list(begin), "begin") if isinstance(begin, (list, builtins.tuple)) \
            else convert_to_tensor(begin, name="begin")
        end = _index_vector(list(end), "end") if isinstance(end, (list, builtins.tuple)) \
            else convert_to_tensor(end, name="end")
        if strides is None:
            strides = ones_like(begin, name="strides")
        elif isinstance(strides, (list, builtins.tuple)):
            strides = _index_vector(list(strides), "strides")
        return raw_ops.StridedSlice(input=input_, begin=begin, end=end, strides=strides,
                                    begin_mask=begin_mask, end_mask=end_mask,
                                    ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask,
                                    shrink_axis_mask=shrink_axis_mask, name=scope)


def _is_index(k):
    if isinstance(k, bool):
        return False
    if isinstance(k, (int, np.integer)):
        return True
    return (isinstance(k, ops.Tensor) and k.dtype in (dtypes.int32, dtypes.int64) and
            k.shape.ndims in (None, 0))


def _index_vector(values, name):
    """A constant int32 vector when every entry is a Python int (so shapes stay static),
    else the entries packed (int64 when any is)."""
    if all(isinstance(v, (int, np.integer)) for v in values):
        wide = any(not -2**31 <= int(v) < 2**31 for v in values)
        return constant([int(v) for v in values], dtype=dtypes.int64 if wide else dtypes.int32,
                        name=name)
    dtype = dtypes.int64 if any(isinstance(v, ops.Tensor) and v.dtype == dtypes.int64
                                for v in values) else dtypes.int32
    from tensorweave.ops import math_ops
    parts = [math_ops.cast(v, dtype) if isinstance(v, ops.Tensor) and v.dtype != dtype
             else convert_to_tensor(v, dtype=dtype) for v in values]
    return stack(parts, name=name)
