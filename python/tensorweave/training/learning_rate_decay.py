"""TF 1.x's learning-rate schedules over the global step (tf.train.exponential_decay, ...):
each composed from ops as TF 1.15's schedules compose them, in their name scopes, with the
step and constants cast to the learning rate's dtype. Where TF uses tf.cond or tf.case
(which tensorweave lacks so far), an element-wise select of both branches gives the same
value."""

import math

from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import cwise_math
from tensorweave.ops import math_ops


def _require_step(global_step, what):
    if global_step is None:
        raise ValueError("global_step is required for %s." % what)


def _rate_and_step(learning_rate, global_step):
    lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
    return lr, lr.dtype, math_ops.cast(global_step, lr.dtype)


def _exponential(learning_rate, global_step, decay_steps, decay_rate, staircase, name,
                 default_name):
    with ops.name_scope(name, default_name) as scope:
        lr, dtype, step = _rate_and_step(learning_rate, global_step)
        decay_steps = math_ops.cast(decay_steps, dtype)
        decay_rate = math_ops.cast(decay_rate, dtype)
        p = math_ops.truediv(step, decay_steps)
        if staircase:
            p = cwise_math.floor(p)
        return math_ops.multiply(lr, math_ops.pow(decay_rate, p), name=scope)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * decay_rate ^ (global_step / decay_steps), the exponent floored with
    staircase."""
    _require_step(global_step, "exponential_decay")
    return _exponential(learning_rate, global_step, decay_steps, decay_rate, staircase, name,
                        "ExponentialDecay")


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * exp(-decay_rate * global_step / decay_steps) (TF: exponential decay
    with rate exp(-decay_rate))."""
    _require_step(global_step, "natural_exp_decay")
    with ops.name_scope(name, "NaturalExpDecay"):
        rate = math_ops.exp(math_ops.negative(convert_to_tensor(
            decay_rate, dtype=convert_to_tensor(learning_rate).dtype)))
    return _exponential(learning_rate, global_step, decay_steps, rate, staircase, name,
                        "ExponentialDecay")


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """learning_rate / (1 + decay_rate * global_step / decay_steps), the ratio floored with
    staircase."""
    _require_step(global_step, "inverse_time_decay")
    with ops.name_scope(name, "InverseTimeDecay") as scope:
        lr, dtype, step = _rate_and_step(learning_rate, global_step)
        p = math_ops.truediv(step, math_ops.cast(decay_steps, dtype))
        if staircase:
            p = cwise_math.floor(p)
        denom = math_ops.add(math_ops.cast(1, dtype),
                             math_ops.multiply(math_ops.cast(decay_rate, dtype), p))
        return math_ops.truediv(lr, denom, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """(learning_rate - end) * (1 - step / decay_steps) ^ power + end, the step capped at
    decay_steps; with cycle, decay_steps grows to the first multiple above the step."""
    _require_step(global_step, "polynomial_decay")
    with ops.name_scope(name, "PolynomialDecay") as scope:
        lr, dtype, step = _rate_and_step(learning_rate, global_step)
        end = math_ops.cast(end_learning_rate, dtype)
        power = math_ops.cast(power, dtype)
        steps = math_ops.cast(decay_steps, dtype)
        if cycle:
            # TF: cond(step == 0, 1, ceil(step / decay_steps)).
            multiplier = array_ops.where(math_ops.equal(step, 0.0),
                                         array_ops.ones_like(step),
                                         cwise_math.ceil(math_ops.truediv(step, steps)))
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.truediv(step, steps)
        return math_ops.add(
            math_ops.multiply(math_ops.subtract(lr, end),
                              math_ops.pow(math_ops.subtract(1.0, p), power)),
            end, name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps)) + alpha)."""
    _require_step(global_step, "cosine decay")
    with ops.name_scope(name, "CosineDecay"):
        lr, dtype, step = _rate_and_step(learning_rate, global_step)
        steps = math_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(step, steps)
        fraction = math_ops.truediv(step, steps)
        cosine = math_ops.multiply(
            0.5, math_ops.add(1.0, cwise_math.cos(math_ops.multiply(
                convert_to_tensor(math.pi, dtype=dtype), fraction))))
        decayed = math_ops.add(math_ops.multiply(1.0 - alpha, cosine), alpha)
        return math_ops.multiply(lr, decayed)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] for x <= boundaries[0], values[i] for boundaries[i-1] < x <= boundaries[i],
    values[-1] above the last boundary. Boundaries are taken in increasing order (TF's
    tf.case would fail at run time on overlapping intervals)."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with ops.name_scope(name, "PiecewiseConstant"):
        x = convert_to_tensor(x)
        bounds = [math_ops.cast(convert_to_tensor(b), x.dtype.base_dtype) for b in boundaries]
        vals = [convert_to_tensor(v) for v in values]
        for v in vals[1:]:
            if v.dtype.base_dtype != vals[0].dtype.base_dtype:
                raise ValueError("Values must have elements all with the same dtype (%s vs "
                                 "%s)." % (vals[0].dtype.base_dtype, v.dtype.base_dtype))
        result = vals[0]
        for b, v in zip(bounds, vals[1:]):
            result = array_ops.where(math_ops.greater(x, b), v, result)
        return result
