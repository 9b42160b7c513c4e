"""tf.nn activations beyond relu/sigmoid/tanh (elu, selu, leaky_relu, relu6, softplus,
softsign: the ops of src/ops/activation_ops.cc), tf.nn.dropout, swish, crelu,
weighted_cross_entropy_with_logits and log_poisson_loss, composed as TF 1.15 composes them."""

import math
import numbers

from tensorweave import raw_ops
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import math_ops
from tensorweave.ops import nn_ops
from tensorweave.ops import random_ops


def elu(features, name=None):
    return raw_ops.Elu(features=features, name=name or "Elu")


def selu(features, name=None):
    return raw_ops.Selu(features=features, name=name or "Selu")


def softplus(features, name=None):
    return raw_ops.Softplus(features=features, name=name or "Softplus")


def softsign(features, name=None):
    return raw_ops.Softsign(features=features, name=name or "Softsign")


def relu6(features, name=None):
    with ops.name_scope(name, "Relu6", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        return raw_ops.Relu6(features=features, name=scope)


def leaky_relu(features, alpha=0.2, name=None):
    """features where > 0, else alpha * features; integer features are cast to float32."""
    with ops.name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        features = convert_to_tensor(features, name="features")
        if features.dtype.is_integer:
            features = math_ops.cast(features, "float32")
        if hasattr(alpha, "item"):  # a NumPy scalar or 0-d array
            alpha = alpha.item()
        return raw_ops.LeakyRelu(features=features, alpha=float(alpha), name=scope)


def _noise_shape(x, noise_shape):
    """TF's _get_noise_shape: x's shape when None; None entries of a list filled from x's
    static shape where it is known."""
    if noise_shape is None:
        return array_ops.shape(x)
    if isinstance(noise_shape, (list, tuple)) and x.shape.ndims == len(noise_shape):
        dims = x.shape.as_list()
        return [d if n is None else n for n, d in zip(noise_shape, dims)]
    return noise_shape


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF 1.15's tf.nn.dropout: each element (or each noise_shape slice) kept with
    probability keep_prob = 1 - rate and scaled by 1 / keep_prob, else 0. keep_prob 1 (rate
    0) returns x itself; a Python keep_prob outside (0, 1] is a ValueError."""
    if keep_prob is not None:
        if rate is not None:
            raise ValueError("Cannot specify both 'rate' and 'keep_prob'.")
        try:
            rate = 1. - keep_prob
        except TypeError:
            raise ValueError("keep_prob must be a floating point number or Tensor "
                             "(got %r)" % (keep_prob,))
    if rate is None:
        raise ValueError("You must provide a rate to dropout.")
    with ops.name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError("x has to be a floating point tensor since it's going to be "
                             "scaled. Got a %s tensor instead." % x.dtype)
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError("rate must be a scalar tensor or a float in the range [0, 1), "
                                 "got %g" % rate)
            if rate == 0:
                return x
        rate = convert_to_tensor(rate, dtype=x.dtype, name="rate")
        if rate.shape.ndims not in (None, 0):
            raise ValueError("Shapes %s and () are incompatible" % rate.shape)
        random_tensor = random_ops.random_uniform(_noise_shape(x, noise_shape), seed=seed,
                                                  dtype=x.dtype)
        keep_prob = math_ops.subtract(1.0, rate)
        scale = math_ops.truediv(1.0, keep_prob)
        # Kept where the draw in [0, 1) is >= rate: probability 1 - rate.
        keep_mask = math_ops.greater_equal(random_tensor, rate)
        ret = math_ops.multiply(math_ops.multiply(x, scale), math_ops.cast(keep_mask, x.dtype),
                                name=scope)
        ret.set_shape(x.shape)
        return ret


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """(1 - z) * x + (1 + (q - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0)) per element (z
    the labels, q pos_weight), TF's numerically stable form."""
    if labels is None:
        labels = targets
    elif targets is not None:
        raise ValueError("Cannot specify both 'labels' and 'targets'.")
    with ops.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        if (logits.shape.ndims is not None and labels.shape.ndims is not None and
                not logits.shape.is_compatible_with(labels.shape)):
            raise ValueError("logits and labels must have the same shape (%s vs %s)" %
                             (logits.shape, labels.shape))
        pos_weight = convert_to_tensor(pos_weight, dtype=logits.dtype, name="pos_weight")
        log_weight = math_ops.add(math_ops.multiply(math_ops.subtract(pos_weight, 1.0), labels),
                                  1.0)
        softplus_neg = math_ops.add(
            math_ops.log(math_ops.add(math_ops.exp(math_ops.negative(math_ops.abs(logits))),
                                      1.0)),
            nn_ops.relu(math_ops.negative(logits)))
        return math_ops.add(math_ops.multiply(math_ops.subtract(1.0, labels), logits),
                            math_ops.multiply(log_weight, softplus_neg), name=scope)


def swish(features):
    """features * sigmoid(features) (TF 1.15's tf.nn.swish, composed of its ops)."""
    features = convert_to_tensor(features, name="features")
    return math_ops.multiply(features, math_ops.sigmoid(features))


def crelu(features, name=None, axis=-1):
    """relu of [features, -features] concatenated along axis."""
    with ops.name_scope(name, "CRelu", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        c = array_ops.concat([features, math_ops.negative(features)], axis, name=scope)
        return nn_ops.relu(c)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets; with compute_full_loss, plus Stirling's
    approximation of log(targets!) where targets > 1 (TF's form)."""
    with ops.name_scope(name, "log_poisson_loss", [targets, log_input]):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, dtype=log_input.dtype, name="targets")
        if (log_input.shape.ndims is not None and targets.shape.ndims is not None and
                not log_input.shape.is_compatible_with(targets.shape)):
            raise ValueError("log_input and targets must have the same shape (%s vs %s)" %
                             (log_input.shape, targets.shape))
        result = math_ops.subtract(math_ops.exp(log_input),
                                   math_ops.multiply(log_input, targets))
        if compute_full_loss:
            stirling = math_ops.add(
                math_ops.subtract(math_ops.multiply(targets, math_ops.log(targets)), targets),
                math_ops.multiply(0.5, math_ops.log(math_ops.multiply(2 * math.pi, targets))))
            zeros = array_ops.zeros_like(targets)
            small = math_ops.logical_and(math_ops.greater_equal(targets, 0.0),
                                         math_ops.less_equal(targets, 1.0))
            result = math_ops.add(result, array_ops.where(small, zeros, stirling))
        return result
