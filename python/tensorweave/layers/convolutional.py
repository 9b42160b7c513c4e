"""tf.layers' convolution, pooling and flatten layers (and tf.keras.layers' in graph mode),
over tf.nn's ops: conv2d / Conv2D make "kernel" [kh, kw, in_channels, filters] and "bias"
[filters] in a variable scope named after the layer ("conv2d", "conv2d_1", ... by
default), as TF names them, so checkpoints carry TF's names. Pools and flatten hold no
variables; their ops go under a name scope of the layer's name."""

import functools

from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers import core
from tensorweave.ops import array_ops
from tensorweave.ops import init_ops
from tensorweave.ops import nn_conv
from tensorweave.ops import nn_ops
from tensorweave.ops import variable_scope as vs


def _pair(value, name):
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) != 2:
        raise ValueError("The `%s` argument must be a tuple of 2 integers. Received: %s"
                         % (name, value))
    return value


def _channels_last(data_format):
    if data_format not in ("channels_last", None):
        raise ValueError("data_format %r: only 'channels_last' (NHWC) is supported on CPU, "
                         "as in TF" % (data_format,))


def _activation(activation):
    return core.ACTIVATIONS[activation] if isinstance(activation, str) else activation


def _conv2d_here(inputs, filters, kernel_size, strides, padding, dilation_rate, activation,
                 use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, activity_regularizer, trainable):
    """The layer inside the current variable scope."""
    channels = inputs.shape.as_list()[-1] if inputs.shape.ndims == 4 else None
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    dtype = inputs.dtype.base_dtype
    kernel = vs.get_variable("kernel", list(kernel_size) + [channels, filters], dtype=dtype,
                             initializer=kernel_initializer, regularizer=kernel_regularizer,
                             trainable=trainable)
    outputs = nn_conv.conv2d(inputs, kernel, strides=list(strides), padding=padding.upper(),
                             dilations=list(dilation_rate), name="Conv2D")
    if use_bias:
        bias = vs.get_variable("bias", [filters], dtype=dtype, initializer=bias_initializer,
                               regularizer=bias_regularizer, trainable=trainable)
        outputs = nn_ops.bias_add(outputs, bias)
    activation = _activation(activation)
    if activation is not None:
        outputs = activation(outputs)
    if activity_regularizer is not None:
        ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, activity_regularizer(outputs))
    return outputs


class Conv2D(core.VariableLayer):
    """The 2-D convolution layer as an object (variables "kernel" and "bias")."""

    _default_name = "conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        _channels_last(data_format)
        super().__init__(name)
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.padding = padding
        self.activation = _activation(activation)
        self.use_bias = use_bias
        self._variable_names = ("kernel", "bias") if use_bias else ("kernel",)
        self._initializers = (kernel_initializer,
                              bias_initializer or init_ops.zeros_initializer())
        self._regularizers = (kernel_regularizer, bias_regularizer, activity_regularizer)
        self.trainable = trainable

    def _build_here(self, inputs):
        return _conv2d_here(inputs, self.filters, self.kernel_size, self.strides,
                            self.padding, self.dilation_rate, self.activation, self.use_bias,
                            *self._initializers, *self._regularizers, self.trainable)

    kernel = property(lambda self: self._variable("kernel"))
    bias = property(lambda self: self._variable("bias") if self.use_bias else None)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    _channels_last(data_format)
    inputs = convert_to_tensor(inputs)
    if reuse is True and name is None:
        scope = vs.variable_scope("conv2d", reuse=True)
    else:
        scope = vs.variable_scope(name, default_name="conv2d", reuse=reuse)
    with scope:
        return _conv2d_here(inputs, int(filters), _pair(kernel_size, "kernel_size"),
                            _pair(strides, "strides"), padding,
                            _pair(dilation_rate, "dilation_rate"), activation, use_bias,
                            kernel_initializer, bias_initializer, kernel_regularizer,
                            bias_regularizer, activity_regularizer, trainable)


class _Pooling2D:
    """A pooling layer: `pool` over pool_size windows, under a name scope of its name."""

    def __init__(self, pool, default_name, pool_size, strides, padding="valid",
                 data_format="channels_last", name=None, **kwargs):
        _channels_last(data_format)
        self._pool = pool
        self._default_name = default_name
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = _pair(strides if strides is not None else pool_size, "strides")
        self.padding = padding
        self.name = name

    def __call__(self, inputs):
        with ops.name_scope(self.name, self._default_name, [inputs]):
            return self._pool(inputs, ksize=list(self.pool_size), strides=list(self.strides),
                              padding=self.padding.upper())

    apply = __call__


class MaxPooling2D(_Pooling2D):
    def __init__(self, pool_size, strides=None, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(nn_conv.max_pool, "max_pooling2d", pool_size, strides, padding,
                         data_format, name)


class AveragePooling2D(_Pooling2D):
    def __init__(self, pool_size, strides=None, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(nn_conv.avg_pool, "average_pooling2d", pool_size, strides, padding,
                         data_format, name)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    return MaxPooling2D(pool_size, strides, padding, data_format, name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    return AveragePooling2D(pool_size, strides, padding, data_format, name)(inputs)


class Flatten:
    """[batch, ...] -> [batch, product of the rest]: static when the rest is known."""

    def __init__(self, data_format=None, name=None, **kwargs):
        self.name = name

    def __call__(self, inputs):
        inputs = convert_to_tensor(inputs)
        with ops.name_scope(self.name, "flatten", [inputs]):
            rest = inputs.shape.as_list()[1:] if inputs.shape.ndims is not None else None
            if rest is not None and all(d is not None for d in rest):
                size = functools.reduce(lambda a, b: a * b, rest, 1)
                return array_ops.reshape(inputs, [-1, size])
            return array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))

    apply = __call__


def flatten(inputs, name=None, data_format="channels_last"):
    return Flatten(data_format, name)(inputs)
