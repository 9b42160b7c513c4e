"""tf.layers.dense: y = activation(x @ kernel + bias), with "kernel" [in, units] and
"bias" [units] in a variable scope named `name` ("dense", "dense_1", ... by default)."""

from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import init_ops
from tensorweave.ops import math_ops
from tensorweave.ops import nn_ops
from tensorweave.ops import variable_scope as vs


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    inputs = convert_to_tensor(inputs)
    shape = inputs.shape
    if shape.ndims is None or shape.ndims < 2:
        raise ValueError("Input 0 of layer dense is incompatible with the layer: expected "
                         "min_ndim=2, found ndim=%s. Full shape received: %s" %
                         (shape.ndims, shape))
    if shape.ndims != 2:
        raise NotImplementedError("dense: only inputs of rank 2 are supported, got %s" % shape)
    fan_in = shape.as_list()[-1]
    if fan_in is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    dtype = inputs.dtype.base_dtype
    with vs.variable_scope(name, default_name="dense", reuse=reuse):
        kernel = vs.get_variable("kernel", [fan_in, units], dtype=dtype,
                                 initializer=kernel_initializer,
                                 regularizer=kernel_regularizer, trainable=trainable)
        outputs = math_ops.matmul(inputs, kernel)
        if use_bias:
            bias = vs.get_variable("bias", [units], dtype=dtype, initializer=bias_initializer,
                                   regularizer=bias_regularizer, trainable=trainable)
            outputs = nn_ops.bias_add(outputs, bias)
        if activation is not None:
            outputs = activation(outputs)
        if activity_regularizer is not None:
            ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES,
                                  activity_regularizer(outputs))
        return outputs
