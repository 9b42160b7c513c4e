"""tf.layers.batch_normalization and the BatchNormalization layer (tf.layers.BatchNormalization,
tf.keras.layers.BatchNormalization in graph mode), as TF 1.x builds them.

Variables, in a variable scope named after the layer ("batch_normalization", "..._1"):
"gamma" (ones) and "beta" (zeros) when scale / center, "moving_mean" (zeros) and
"moving_variance" (ones), both non-trainable. Inputs of rank 4 normalized over axis 3 or 1
take the fused path (FusedBatchNormV3; the moving variance follows the Bessel-corrected
batch variance, as TF's fused path); other inputs take TF's composite path (nn.moments and
nn.batch_normalization; the biased variance). In training the moving statistics move by
`moving -= (moving - batch) * (1 - momentum)` (TF's AssignMovingAvg ops): these update ops
are the layer's `updates`, and tf.layers (not keras) also adds them to
tf.GraphKeys.UPDATE_OPS, as TF 1.x does.

`training` is a Python bool or a scalar bool tensor. With a tensor both forms are built and
Select picks one; the moving averages then move by a decay of (1 - momentum) when training
and 0 otherwise (Keras's smart_cond on the momentum, without control flow)."""

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.layers import core
from tensorweave.ops import array_ops
from tensorweave.ops import init_ops
from tensorweave.ops import math_ops
from tensorweave.ops import nn_norm
from tensorweave.ops import variable_scope as vs
from tensorweave.ops import variables


def _is_tensor(value):
    return isinstance(value, ops.Tensor)


def _select(training, when_training, otherwise):
    return array_ops.where(training, when_training, otherwise)


class BatchNormalization(core.VariableLayer):
    """Batch normalization as a layer object; call it as layer(inputs, training=...)."""

    _default_name = "batch_normalization"
    _adds_update_ops = True  # tf.layers: the update ops also go to UPDATE_OPS

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None,
                 moving_mean_initializer=None, moving_variance_initializer=None,
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                 fused=None, trainable=True, virtual_batch_size=None, adjustment=None,
                 name=None, **kwargs):
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError("BatchNormalization: renorm, virtual_batch_size and "
                                      "adjustment are not supported")
        super().__init__(name)
        self.axis = axis
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = center
        self.scale = scale
        self.fused = fused
        self.trainable = trainable
        self._initializers = {
            "gamma": gamma_initializer or init_ops.ones_initializer(),
            "beta": beta_initializer or init_ops.zeros_initializer(),
            "moving_mean": moving_mean_initializer or init_ops.zeros_initializer(),
            "moving_variance": moving_variance_initializer or init_ops.ones_initializer()}
        self._regularizers = {"gamma": gamma_regularizer, "beta": beta_regularizer}
        self._variable_names = tuple(
            n for n, keep in (("gamma", scale), ("beta", center), ("moving_mean", True),
                              ("moving_variance", True)) if keep)
        self.updates = []

    def __call__(self, inputs, training=False):
        self._training = training
        return super().__call__(inputs)

    apply = __call__

    def _axis_of(self, inputs):
        ndims = inputs.shape.ndims
        if ndims is None:
            raise ValueError("Input has undefined rank.")
        axis = self.axis[0] if isinstance(self.axis, (list, tuple)) else self.axis
        if isinstance(self.axis, (list, tuple)) and len(self.axis) != 1:
            raise NotImplementedError("BatchNormalization over several axes is not supported")
        axis = axis + ndims if axis < 0 else axis
        if not 0 <= axis < ndims:
            raise ValueError("Invalid axis: %d" % axis)
        return axis

    def _check_inputs(self, inputs):
        axis = self._axis_of(inputs)
        if inputs.shape.as_list()[axis] is None:
            raise ValueError("Input has undefined `axis` dimension. Input shape: %s"
                             % inputs.shape)

    def _make_variables(self, channels, dtype):
        made = {}
        for which in self._variable_names:
            trainable = self.trainable and which in ("gamma", "beta")
            made[which] = vs.get_variable(which, [channels], dtype=dtype,
                                          initializer=self._initializers[which],
                                          regularizer=self._regularizers.get(which),
                                          trainable=trainable)
        return made

    def _build_here(self, inputs):
        axis = self._axis_of(inputs)
        ndims = inputs.shape.ndims
        channels = inputs.shape.as_list()[axis]
        dtype = inputs.dtype.base_dtype
        v = self._make_variables(channels, dtype)
        gamma = v.get("gamma")
        beta = v.get("beta")
        training = self._training
        if training is None:
            training = False
        if _is_tensor(training) and training.dtype != dtypes.bool:
            raise TypeError("training must be a Python bool or a bool tensor")
        fused = self.fused if self.fused is not None else True
        if fused and ndims == 4 and axis in (1, 3):
            outputs, mean, variance = self._fused(inputs, axis, gamma, beta, v, training,
                                                  channels, dtype)
        else:
            outputs, mean, variance = self._composite(inputs, axis, gamma, beta, v, training)
        if training is not False:
            decay = 1.0 - self.momentum
            if _is_tensor(training):
                decay = _select(training, constant(decay, dtype=dtype), constant(0, dtype=dtype))
            self._update(v["moving_mean"], mean, decay, dtype)
            self._update(v["moving_variance"], variance, decay, dtype)
        return outputs

    def _fused(self, inputs, axis, gamma, beta, v, training, channels, dtype):
        data_format = "NHWC" if axis == 3 else "NCHW"
        gamma = gamma if gamma is not None else constant(1.0, dtype=dtype, shape=[channels])
        beta = beta if beta is not None else constant(0.0, dtype=dtype, shape=[channels])
        trained = inferred = None
        if training is not False:
            trained = nn_norm.fused_batch_norm(inputs, gamma, beta, epsilon=self.epsilon,
                                               data_format=data_format)
        if training is not True:
            inferred = nn_norm.fused_batch_norm(
                inputs, gamma, beta, mean=v["moving_mean"], variance=v["moving_variance"],
                epsilon=self.epsilon, is_training=False, data_format=data_format)
        if trained is None:
            return inferred
        if inferred is None:
            return trained
        return tuple(_select(training, t, i) for t, i in zip(trained, inferred))

    def _composite(self, inputs, axis, gamma, beta, v, training):
        ndims = inputs.shape.ndims
        reduction_axes = [i for i in range(ndims) if i != axis]
        moving_mean = convert_to_tensor(v["moving_mean"])
        moving_variance = convert_to_tensor(v["moving_variance"])
        if training is False:
            mean, variance = moving_mean, moving_variance
        else:
            mean, variance = nn_norm.moments(inputs, reduction_axes)
            if training is not True:
                mean = _select(training, mean, moving_mean)
                variance = _select(training, variance, moving_variance)

        def broadcast(t):
            if t is None or axis == ndims - 1:
                return t
            shape = [1] * ndims
            shape[axis] = inputs.shape.as_list()[axis]
            return array_ops.reshape(t, shape)

        outputs = nn_norm.batch_normalization(inputs, broadcast(mean), broadcast(variance),
                                              broadcast(beta), broadcast(gamma), self.epsilon)
        return outputs, mean, variance

    def _update(self, variable, value, decay, dtype):
        with ops.name_scope(None, "AssignMovingAvg", [variable, value]) as scope:
            decay = convert_to_tensor(decay, dtype=dtype, name="decay")
            delta = math_ops.multiply(math_ops.subtract(variable, value), decay)
            update = variables.assign_sub(variable, delta, name=scope)
        self.updates.append(update)
        if self._adds_update_ops:
            ops.add_to_collection(ops.GraphKeys.UPDATE_OPS, update)

    gamma = property(lambda self: self._variable("gamma"))
    beta = property(lambda self: self._variable("beta"))
    moving_mean = property(lambda self: self._variable("moving_mean"))
    moving_variance = property(lambda self: self._variable("moving_variance"))


class KerasBatchNormalization(BatchNormalization):
    """tf.keras.layers.BatchNormalization in a TF 1.x graph: the update ops are the layer's
    `updates` only (Keras does not add them to UPDATE_OPS)."""

    _adds_update_ops = False


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer, renorm=renorm,
        fused=fused, trainable=trainable, virtual_batch_size=virtual_batch_size,
        adjustment=adjustment, name=name)
    inputs = convert_to_tensor(inputs)
    layer._check_inputs(inputs)
    if reuse is True and name is None:
        scope = vs.variable_scope("batch_normalization", reuse=True)
    else:
        scope = vs.variable_scope(name, default_name="batch_normalization", reuse=reuse)
    with scope as entered:
        layer._scope = entered
        layer._training = training
        return layer._build_here(inputs)
