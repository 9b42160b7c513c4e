"""tf.layers.dense and the Dense layer (tf.layers.Dense, tf.keras.layers.Dense in graph
mode): y = activation(x @ kernel + bias), with "kernel" [in, units] and "bias" [units] in a
variable scope named `name` ("dense", "dense_1", ... by default)."""

from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import init_ops
from tensorweave.ops import math_ops
from tensorweave.ops import nn_activations
from tensorweave.ops import nn_ops
from tensorweave.ops import variable_scope as vs

# The activations layers take by name.
ACTIVATIONS = {"relu": nn_ops.relu, "softmax": nn_ops.softmax, "sigmoid": nn_ops.sigmoid,
               "tanh": nn_ops.tanh, "linear": None, "elu": nn_activations.elu,
               "selu": nn_activations.selu, "softplus": nn_activations.softplus,
               "softsign": nn_activations.softsign}


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    inputs = convert_to_tensor(inputs)
    if isinstance(activation, str):  # as keras' activations.get
        activation = ACTIVATIONS[activation]
    shape = inputs.shape
    if shape.ndims is None or shape.ndims < 2:
        raise ValueError("Input 0 of layer dense is incompatible with the layer: expected "
                         "min_ndim=2, found ndim=%s. Full shape received: %s" %
                         (shape.ndims, shape))
    fan_in = shape.as_list()[-1]
    if fan_in is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    if reuse is True and name is None:
        # TF's Layer._set_scope: a reusing layer without a name reuses "dense" itself (a
        # default name cannot be reused).
        scope = vs.variable_scope("dense", reuse=True)
    else:
        scope = vs.variable_scope(name, default_name="dense", reuse=reuse)
    with scope:
        return _dense_here(inputs, units, activation, use_bias, kernel_initializer,
                           bias_initializer, kernel_regularizer, bias_regularizer,
                           activity_regularizer, trainable)


def _dense_here(inputs, units, activation, use_bias, kernel_initializer, bias_initializer,
                kernel_regularizer, bias_regularizer, activity_regularizer, trainable):
    """The layer inside the current variable scope: its "kernel" and "bias" made or reused
    there."""
    shape = inputs.shape
    fan_in = shape.as_list()[-1]
    dtype = inputs.dtype.base_dtype
    kernel = vs.get_variable("kernel", [fan_in, units], dtype=dtype,
                             initializer=kernel_initializer,
                             regularizer=kernel_regularizer, trainable=trainable)
    if shape.ndims == 2:
        outputs = math_ops.matmul(inputs, kernel)
    else:
        # TF's tensordot over the last axis: [..., in] -> [..., units].
        outer = shape.as_list()[:-1]
        flat = math_ops.matmul(array_ops.reshape(inputs, [-1, fan_in]), kernel)
        if all(d is not None for d in outer):
            target = outer + [units]
        else:
            target = array_ops.concat([array_ops.shape(inputs)[:-1], [units]], 0)
        outputs = array_ops.reshape(flat, target)
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


class VariableLayer:
    """A layer object with variables: they are made at the first call, in a variable scope
    named after the layer (`default_name` with a suffix when unnamed), and every later call
    reuses them. Subclasses check the inputs in `_check_inputs` (before any scope is made),
    build in `_build_here(inputs)` and name their variables in `_variable_names`."""

    _default_name = None
    _variable_names = ()

    def __init__(self, name):
        self._name = name
        self._scope = None  # the variable scope of the first call

    @property
    def name(self):
        return self._scope.name if self._scope is not None else self._name

    def _check_inputs(self, inputs):
        pass

    def __call__(self, inputs):
        inputs = convert_to_tensor(inputs)
        self._check_inputs(inputs)
        if self._scope is None:
            scope = vs.variable_scope(self._name, default_name=self._default_name)
        else:
            scope = vs.variable_scope(self._scope, reuse=True)
        with scope as entered:
            self._scope = self._scope or entered
            return self._build_here(inputs)

    apply = __call__

    def _variable(self, which):
        if self._scope is None:
            return None
        return vs._graph_store(ops.get_default_graph())["vars"].get(
            self._scope.name + "/" + which)

    @property
    def weights(self):
        return [v for v in (self._variable(n) for n in self._variable_names) if v is not None]

    trainable_weights = trainable_variables = variables = weights


class Dense(VariableLayer):
    """The dense layer as an object (variables "kernel" and "bias")."""

    _default_name = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(name)
        if isinstance(activation, str):
            activation = ACTIVATIONS[activation]
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self._variable_names = ("kernel", "bias") if use_bias else ("kernel",)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer or init_ops.zeros_initializer()
        self._regularizers = (kernel_regularizer, bias_regularizer, activity_regularizer)
        self.trainable = trainable

    def _check_inputs(self, inputs):
        if inputs.shape.ndims is None or inputs.shape.as_list()[-1] is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")

    def _build_here(self, inputs):
        return _dense_here(inputs, self.units, self.activation, self.use_bias,
                           self._kernel_initializer, self._bias_initializer,
                           *self._regularizers, self.trainable)

    kernel = property(lambda self: self._variable("kernel"))
    bias = property(lambda self: self._variable("bias") if self.use_bias else None)
