"""Python values to tensors: `constant` and `convert_to_tensor`, with TF 1.x's rules.

Without a dtype, a Python float becomes float32, an int int32 (int64 if it does not fit),
a bool bool, bytes/str string; numpy arrays keep their dtype. With one, the value must
fit it: a float where an int32 is expected is a TypeError, as in TF.
"""

import numbers

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape


def _is_string(value):
    return isinstance(value, (bytes, str))


def _flatten(value):
    if isinstance(value, (list, tuple, range)):
        for v in value:
            yield from _flatten(v)
    else:
        yield value


def _infer_dtype(value):
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return dtypes.as_dtype(value.dtype)
    leaves = list(_flatten(value))
    if any(v is None for v in leaves):
        raise ValueError("None values not supported.")
    if leaves and all(_is_string(v) for v in leaves):
        return dtypes.string
    if leaves and all(isinstance(v, (bool, np.bool_)) for v in leaves):
        return dtypes.bool
    if all(isinstance(v, numbers.Integral) for v in leaves):
        if all(-2**31 <= int(v) < 2**31 for v in leaves):
            return dtypes.int32
        return dtypes.int64
    if all(isinstance(v, numbers.Real) for v in leaves):
        return dtypes.float32
    if all(isinstance(v, numbers.Complex) for v in leaves):
        return dtypes.complex128
    raise TypeError("Failed to convert object of type %s to Tensor. Contents: %s. Consider "
                    "casting elements to a supported type." % (type(value), value))


def to_numpy(value, dtype=None):
    """`value` as a numpy array of `dtype` (inferred when None), checked as TF checks it."""
    if value is None:
        raise ValueError("None values not supported.")
    dtype = _infer_dtype(value) if dtype is None else dtypes.as_dtype(dtype)
    if dtype == dtypes.string:
        try:
            array = np.array(value, dtype=object)
        except ValueError as e:
            raise ValueError("Argument must be a dense tensor: %s - got shape %s, but wanted %s."
                             % (value, "ragged", "dense")) from e
        flat = array.reshape(-1)
        for i, v in enumerate(flat):
            if isinstance(v, str):
                flat[i] = v.encode("utf-8")
            elif not isinstance(v, bytes):
                raise TypeError("Expected string, got %r of type '%s' instead." %
                                (v, type(v).__name__))
        return array
    if not isinstance(value, np.ndarray):
        for v in _flatten(value):
            if v is None:
                raise ValueError("None values not supported.")
            if dtype.is_integer and isinstance(v, float) and not float(v).is_integer():
                raise TypeError("Expected %s, got %r of type '%s' instead." %
                                (dtype.name, v, type(v).__name__))
            if (dtype.is_integer or dtype.is_floating or dtype.is_complex) and _is_string(v):
                raise TypeError("Expected %s, got %r of type '%s' instead." %
                                (dtype.name, v, type(v).__name__))
    try:
        return np.asarray(value, dtype=dtype.as_numpy_dtype)
    except ValueError as e:
        raise ValueError("Argument must be a dense tensor: %s - got shape %s, but wanted a "
                         "dense shape." % (value, "ragged")) from e


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A Const node holding `value` (reshaped or filled to `shape` when given)."""
    array = to_numpy(value, dtype)
    if shape is not None:
        shape = tuple(tensor_shape.as_shape(shape).as_list())
        if verify_shape:
            if array.shape != shape:
                raise TypeError("Expected Tensor's shape: %s, got %s." % (shape, array.shape))
        elif array.size == 1:
            array = np.full(shape, array.reshape(-1)[0], dtype=array.dtype)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise TypeError("Expected Tensor's shape: %s, got %s." % (shape, array.shape))
    op = ops.get_default_graph().create_op(
        "Const", [], {"value": array, "dtype": dtypes.as_dtype(array.dtype)}, name=name)
    return op.outputs[0]


def _is_graph_tensor(value):
    return isinstance(value, ops.Tensor) or (hasattr(value, "_as_graph_element") and
                                             not isinstance(value, ops.Operation))


def _contains_tensor(value):
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return _is_graph_tensor(value)


def _first_dtype(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            found = _first_dtype(v)
            if found is not None:
                return found
        return None
    return convert_to_tensor(value).dtype if _is_graph_tensor(value) else None


def _autopack(value, dtype, name):
    """A list (or nested lists) of tensors and values as one tensor, as TF 1.x packs them:
    each element converted with the first tensor's dtype, then stacked (Pack) under the
    name scope `name` ("packed"), nested lists under their index."""
    from tensorweave.ops import array_ops
    with ops.name_scope(name) as scope:
        parts = []
        for i, element in enumerate(value):
            if isinstance(element, (list, tuple)) and _contains_tensor(element):
                parts.append(_autopack(element, dtype, str(i)))
            elif _is_graph_tensor(element):
                parts.append(convert_to_tensor(element, dtype=dtype))
            else:
                parts.append(constant(element, dtype=dtype, name=str(i)))
        return array_ops.stack(parts, axis=0, name=scope)


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None):
    """A Tensor for `value`: a Tensor as is (checked against `dtype`), else a constant."""
    if hasattr(value, "_as_graph_element") and not isinstance(value, ops.Tensor):
        value = value._as_graph_element()
        if isinstance(value, ops.Operation):
            raise TypeError("Can't convert Operation '%s' to Tensor (target dtype=%s, name=%r)"
                            % (value.name, dtype, name))
    if isinstance(value, ops.Tensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                             % (dtypes.as_dtype(dtype).name, value.dtype.name, value))
        return value
    if isinstance(value, ops.Operation):
        raise TypeError("Can't convert Operation '%s' to Tensor (target dtype=%s, name=%r)" %
                        (value.name, dtype, name))
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        return _autopack(value, dtype if dtype is not None else _first_dtype(value),
                         name or "packed")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype, name=name or "Const")
