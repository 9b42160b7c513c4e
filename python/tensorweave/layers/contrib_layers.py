"""tf.contrib.layers (and tf.contrib.slim's layer functions) as TF 1.x builds them.

The layers make "weights" and "biases" (not tf.layers' "kernel"/"bias") in a variable scope
named "fully_connected", "Conv", "BatchNorm" (with suffixes when taken) or `scope`, as model
variables (GLOBAL_VARIABLES and MODEL_VARIABLES, also WEIGHTS and BIASES), so checkpoints
carry TF's names; activation_fn defaults to relu, and every layer function takes
arg_scope defaults (@add_arg_scope). The initializers are contrib's formulas (a truncated
normal of stddev sqrt(1.3 * factor / n), not core's VarianceScaling)."""

import math
import numbers

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.arg_scope import add_arg_scope
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers import convolutional
from tensorweave.layers import dropout as dropout_layers
from tensorweave.layers import normalization
from tensorweave.ops import array_ops
from tensorweave.ops import init_ops
from tensorweave.ops import math_ops
from tensorweave.ops import nn_conv
from tensorweave.ops import nn_ops
from tensorweave.ops import random_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.platform import tf_logging as logging

WEIGHTS = "weights"
BIASES = "biases"


# ---- initializers ----

def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=dtypes.float32):
    """contrib's He/Xavier family: uniform in +-sqrt(3 * factor / n), or a truncated normal
    of stddev sqrt(1.3 * factor / n); n the fan in, out or their average."""
    if not dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError("Unknown mode %s [FAN_IN, FAN_OUT, FAN_AVG]" % mode)

    def _initializer(shape, dtype=dtype, partition_info=None):
        shape = [int(d) for d in shape]
        if shape:
            fan_in = float(shape[-2]) if len(shape) > 1 else float(shape[-1])
            fan_out = float(shape[-1])
        else:
            fan_in = fan_out = 1.0
        for dim in shape[:-2]:
            fan_in *= dim
            fan_out *= dim
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=seed)
        return random_ops.truncated_normal(shape, 0.0, math.sqrt(1.3 * factor / n), dtype,
                                           seed=seed)

    return _initializer


def xavier_initializer(uniform=True, seed=None, dtype=dtypes.float32):
    """Glorot's initializer in contrib's form: variance_scaling(1.0, FAN_AVG)."""
    return variance_scaling_initializer(1.0, "FAN_AVG", uniform, seed, dtype)


xavier_initializer_conv2d = xavier_initializer


# ---- regularizers ----

def _check_scale(scale):
    if isinstance(scale, numbers.Integral):
        raise ValueError("scale cannot be an integer: %s" % (scale,))
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError("Setting a scale less than 0 on a regularizer: %g" % scale)
        if scale == 0.0:
            logging.info("Scale of 0 disables regularizer.")
            return False
    return True


def _regularizer(scale, scope, default_name, penalty):
    if not _check_scale(scale):
        return lambda _: None

    def regularize(weights):
        with ops.name_scope(scope, default_name, [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, penalty(weights), name=name)
    return regularize


def l2_regularizer(scale, scope=None):
    """weights -> scale * l2_loss(weights) (half the sum of squares)."""
    return _regularizer(scale, scope, "l2_regularizer", nn_ops.l2_loss)


def l1_regularizer(scale, scope=None):
    """weights -> scale * sum(|weights|)."""
    return _regularizer(scale, scope, "l1_regularizer",
                        lambda w: math_ops.reduce_sum(math_ops.abs(w)))


def sum_regularizer(regularizer_list, scope=None):
    def regularize(weights):
        penalties = [p for p in (r(weights) for r in regularizer_list) if p is not None]
        if not penalties:
            return None
        with ops.name_scope(scope, "sum_regularizer", [weights]) as name:
            return math_ops.add_n(penalties, name=name)
    return regularize


def apply_regularization(regularizer, weights_list=None):
    """The sum of `regularizer` over `weights_list` (the WEIGHTS collection by default),
    added to REGULARIZATION_LOSSES."""
    if not weights_list:
        weights_list = ops.get_collection(WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with ops.name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [p for p in (regularizer(w) for w in weights_list) if p is not None]
        if not penalties:
            raise ValueError("No regularization penalties found")
        summed = math_ops.add_n(penalties, name=scope)
        ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed


# ---- layers ----

def _model_variable(name, shape, dtype, initializer, regularizer, trainable, collections,
                    kind):
    made = vs.get_variable(
        name, shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable,
        collections=[ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.MODEL_VARIABLES, kind])
    extra = collections.get(name) if isinstance(collections, dict) else collections
    for collection in extra or ():
        ops.add_to_collection(collection, made)
    return made


def _collect_output(outputs_collections, name, outputs):
    for collection in outputs_collections or ():
        ops.add_to_collection(collection, outputs)
    return outputs


def _finish(outputs, normalizer_fn, normalizer_params, activation_fn):
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return outputs


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn_ops.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=None,
                    weights_regularizer=None, biases_initializer=init_ops.zeros_initializer(),
                    biases_regularizer=None, reuse=None, variables_collections=None,
                    outputs_collections=None, trainable=True, scope=None):
    """inputs [..., n] times weights [n, num_outputs], plus biases (unless a normalizer_fn
    is given or biases_initializer is None), then normalizer_fn and activation_fn."""
    if not isinstance(num_outputs, numbers.Integral):
        raise ValueError("num_outputs type should be one of [<class 'int'>], got %s."
                         % type(num_outputs))
    with vs.variable_scope(scope, "fully_connected", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        depth = inputs.get_shape().as_list()[-1] if inputs.get_shape().ndims else None
        if depth is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        dtype = inputs.dtype.base_dtype
        weights = _model_variable("weights", [depth, num_outputs], dtype,
                                  weights_initializer or xavier_initializer(),
                                  weights_regularizer, trainable, variables_collections, WEIGHTS)
        rank = inputs.get_shape().ndims
        flat = inputs if rank == 2 else array_ops.reshape(inputs, [-1, depth])
        outputs = math_ops.matmul(flat, weights)
        if rank != 2:
            outer = array_ops.shape(inputs)[:-1]
            outputs = array_ops.reshape(outputs, array_ops.concat([outer, [num_outputs]], 0))
        if normalizer_fn is None and biases_initializer is not None:
            biases = _model_variable("biases", [num_outputs], dtype, biases_initializer,
                                     biases_regularizer, trainable, variables_collections,
                                     BIASES)
            outputs = nn_ops.bias_add(outputs, biases)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
        return _collect_output(outputs_collections, sc.name, outputs)


@add_arg_scope
def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
           rate=1, activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
           weights_initializer=None, weights_regularizer=None,
           biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None,
           reuse=None, variables_collections=None, outputs_collections=None, trainable=True,
           scope=None):
    """A 2-D convolution with "weights" [kh, kw, in, num_outputs] and "biases", NHWC."""
    if data_format not in (None, "NHWC"):
        raise ValueError("data_format %r: only NHWC is supported on CPU, as in TF"
                         % (data_format,))
    kh, kw = convolutional._pair(kernel_size, "kernel_size")
    sh, sw = convolutional._pair(stride, "stride")
    rh, rw = convolutional._pair(rate, "rate")
    with vs.variable_scope(scope, "Conv", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        channels = inputs.get_shape().as_list()[-1] if inputs.get_shape().ndims == 4 else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. "
                             "Found `None`.")
        dtype = inputs.dtype.base_dtype
        weights = _model_variable("weights", [kh, kw, channels, num_outputs], dtype,
                                  weights_initializer or xavier_initializer(),
                                  weights_regularizer, trainable, variables_collections, WEIGHTS)
        outputs = nn_conv.conv2d(inputs, weights, strides=[1, sh, sw, 1],
                                 padding=padding.upper(), dilations=[1, rh, rw, 1],
                                 name="Conv2D")
        if normalizer_fn is None and biases_initializer is not None:
            biases = _model_variable("biases", [num_outputs], dtype, biases_initializer,
                                     biases_regularizer, trainable, variables_collections,
                                     BIASES)
            outputs = nn_ops.bias_add(outputs, biases)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
        return _collect_output(outputs_collections, sc.name, outputs)


convolution2d = conv2d


def _pool(kind, default_name, inputs, kernel_size, stride, padding, data_format,
          outputs_collections, scope):
    if data_format not in (None, "NHWC"):
        raise ValueError("data_format %r: only NHWC is supported on CPU, as in TF"
                         % (data_format,))
    kh, kw = convolutional._pair(kernel_size, "kernel_size")
    sh, sw = convolutional._pair(stride, "stride")
    with ops.name_scope(scope, default_name, [inputs]) as sc:
        pool = nn_conv.max_pool if kind == "max" else nn_conv.avg_pool
        outputs = pool(inputs, ksize=[1, kh, kw, 1], strides=[1, sh, sw, 1],
                       padding=padding.upper(), name=kind.capitalize() + "Pool")
        return _collect_output(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    return _pool("max", "MaxPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    return _pool("avg", "AvgPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, ...] to [batch, k]."""
    with ops.name_scope(scope, "Flatten", [inputs]) as sc:
        outputs = convolutional.flatten(inputs)
        return _collect_output(outputs_collections, sc, outputs)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True,
            outputs_collections=None, scope=None, seed=None):
    """Dropout with keep_prob while is_training (a bool or a bool tensor), else identity."""
    with ops.name_scope(scope, "Dropout", [inputs]) as sc:
        outputs = dropout_layers.dropout(inputs, rate=1 - keep_prob, noise_shape=noise_shape,
                                         seed=seed, training=is_training)
        return _collect_output(outputs_collections, sc, outputs)


class _ContribBatchNorm(normalization.BatchNormalization):
    _adds_update_ops = False  # batch_norm puts them in its updates_collections


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001,
               activation_fn=None, param_initializers=None,
               updates_collections=ops.GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               data_format="NHWC", zero_debias_moving_mean=False, scope=None,
               renorm=False, fused=None):
    """contrib's batch_norm: variables "BatchNorm/beta" (center), "gamma" (scale, off by
    default), "moving_mean", "moving_variance"; the moving averages' update ops go to
    `updates_collections`, or run with the layer when it is None."""
    if zero_debias_moving_mean or renorm:
        raise NotImplementedError("batch_norm: zero_debias_moving_mean and renorm are not "
                                  "supported")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    init = param_initializers or {}
    with vs.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        layer = _ContribBatchNorm(
            axis=1 if data_format == "NCHW" else -1, momentum=decay, epsilon=epsilon,
            center=center, scale=scale, beta_initializer=init.get("beta"),
            gamma_initializer=init.get("gamma"), moving_mean_initializer=init.get("moving_mean"),
            moving_variance_initializer=init.get("moving_variance"), trainable=trainable,
            name=sc)
        outputs = layer(inputs, training=is_training)
        if updates_collections is None:
            if layer.updates:
                with ops.control_dependencies(layer.updates):
                    outputs = array_ops.identity(outputs)
        else:
            if isinstance(updates_collections, str):
                updates_collections = [updates_collections]
            for collection in updates_collections:
                for update in layer.updates:
                    ops.add_to_collection(collection, update)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collect_output(outputs_collections, sc.name, outputs)
