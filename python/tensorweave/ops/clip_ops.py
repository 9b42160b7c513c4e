"""tf.clip_by_value, clip_by_norm, global_norm and clip_by_global_norm, composed from ops as
TF 1.15 composes them (names, None entries and IndexedSlices included)."""

import collections.abc

from tensorweave import raw_ops
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import array_ops
from tensorweave.ops import math_ops


def _values(t, name):
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def _like(t, values):
    """values in t's form: IndexedSlices with t's indices when t is one."""
    if isinstance(t, IndexedSlices):
        return IndexedSlices(values, t.indices, t.dense_shape)
    return values


def _check_no_broadcast(values, result):
    """TF's guard against bounds that would broadcast t to a larger shape."""
    if not values.shape.is_compatible_with(result.shape):
        raise ValueError("Shapes %s and %s are incompatible" % (values.shape, result.shape))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """max(min(t, clip_value_max), clip_value_min); the bounds broadcast only to t's shape."""
    with ops.name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = _values(t, "t")
        t_min = math_ops.minimum(values, clip_value_max)
        _check_no_broadcast(values, t_min)
        t_max = math_ops.maximum(t_min, clip_value_min, name=scope)
        _check_no_broadcast(values, t_max)
        return _like(t, t_max)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t, axes), clip_norm); a zero norm leaves t (no NaN, and no
    NaN gradient: TF's double-where)."""
    with ops.name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = _values(t, "t")
        l2sum = math_ops.reduce_sum(math_ops.multiply(values, values), axes, keepdims=True)
        pred = math_ops.greater(l2sum, 0.0)
        l2sum_safe = array_ops.where(pred, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(pred, math_ops.sqrt(l2sum_safe), l2sum)
        intermediate = math_ops.multiply(values, clip_norm)
        _check_no_broadcast(values, intermediate)
        values_clip = array_ops.identity(
            math_ops.truediv(intermediate, math_ops.maximum(l2norm, clip_norm)), name=scope)
        return _like(t, values_clip)


def _check_sequence(t_list):
    if not isinstance(t_list, collections.abc.Sequence) or isinstance(t_list, str):
        raise TypeError("t_list should be a sequence")
    return list(t_list)


def global_norm(t_list, name=None):
    """sqrt(sum of every tensor's squares), None entries ignored (IndexedSlices: their
    values)."""
    t_list = _check_sequence(t_list)
    with ops.name_scope(name, "global_norm", t_list):
        values = [_values(t, "t_%d" % i) if t is not None else None
                  for i, t in enumerate(t_list)]
        half_squared_norms = []
        for v in values:
            if v is not None:
                with ops.colocate_with(v):
                    half_squared_norms.append(raw_ops.L2Loss(t=v, name="L2Loss"))
        half_squared_norm = math_ops.reduce_sum(array_ops.stack(half_squared_norms))
        return math_ops.sqrt(math_ops.multiply(half_squared_norm, 2.0), name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(t * clip_norm / max(global_norm, clip_norm) for each t, global_norm): None stays None,
    IndexedSlices stay IndexedSlices; an infinite or NaN norm makes every value NaN."""
    t_list = _check_sequence(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with ops.name_scope(name, "clip_by_global_norm", t_list + [clip_norm]) as scope:
        use_norm = convert_to_tensor(use_norm)
        clip_norm = convert_to_tensor(clip_norm, dtype=use_norm.dtype)
        scale_for_finite = math_ops.multiply(
            clip_norm, math_ops.minimum(math_ops.truediv(1.0, use_norm),
                                        math_ops.truediv(1.0, clip_norm)))
        # A no-op for a finite norm; inf or NaN makes the scale NaN.
        scale = math_ops.add(scale_for_finite, math_ops.subtract(use_norm, use_norm))
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            v = _values(t, "t_%d" % i)
            with ops.colocate_with(v):
                clipped.append(_like(t, array_ops.identity(math_ops.multiply(v, scale),
                                                           name="%s_%d" % (scope, i))))
        return clipped, use_norm
