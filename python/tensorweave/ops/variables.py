"""Variables with TF 1.x's names: `Variable`, initializers, assignment and collections.

A Variable is a `Variable` resource op named like the variable (`v`), its initializer
`v/Assign`, and its value `v/read` (what ops that use the variable read). Fetching the
variable fetches `v/read`. The runtime's variables are resources (as TF's ResourceVariable),
so their tensor name is `v/read:0`, and `v.name` keeps TF 1.x's `v:0`.
"""

import numpy as np

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import control_flow_ops


class Variable:
    __array_priority__ = 100  # ndarray + variable uses the variable's operator

    def __init__(self, initial_value=None, trainable=True, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if collections is None:
            collections = [ops.GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError("collections argument to Variable constructor must be a list, "
                             "tuple, or set. Got %s of type %s" % (collections,
                                                                    type(collections)))
        collections = list(collections)
        if trainable and ops.GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(ops.GraphKeys.TRAINABLE_VARIABLES)
        graph = ops.get_default_graph()
        # As TF's init_scope: a variable does not depend on the ops around its creation.
        with graph.control_dependencies(None), graph.name_scope(name or "Variable") as scope:
            var_name = scope[:-1]
            if callable(initial_value):
                with graph.name_scope("Initializer"), graph.device(None):
                    initial_value = initial_value()
            if isinstance(initial_value, ops.Tensor) or hasattr(initial_value,
                                                                "_as_graph_element"):
                initial = convert_to_tensor(initial_value, dtype=dtype)
            else:
                initial = constant(initial_value, dtype=dtype, name="initial_value")
            if shape is not None:
                var_shape = tensor_shape.as_shape(shape)
            else:
                var_shape = initial.shape
            if validate_shape and not var_shape.is_fully_defined():
                raise ValueError("initial_value must have a shape specified: %s" % initial)
            self._handle = raw_ops.Variable(dtype=initial.dtype, shape=var_shape,
                                            name=var_name + "/")
            self._handle_op = self._handle.op
            self._handle_op._variable = self  # fetching "v:0" fetches the value
            self._dtype = initial.dtype
            self._shape = var_shape
            self._initial_value = initial
            with graph.colocate_with(self._handle_op):
                self._initializer_op = raw_ops.Assign(
                    resource=self._handle, value=initial, validate_shape=validate_shape,
                    name="Assign").op
                self._snapshot = raw_ops.ReadVariable(resource=self._handle, dtype=self._dtype,
                                                      name="read")
        self._trainable = trainable
        self._graph = graph
        for key in collections:
            graph.add_to_collection(key, self)

    @classmethod
    def _from_native(cls, handle_op, initializer_op, dtype, shape, trainable=False,
                     collections=None):
        """A Variable over nodes C++ code built (an optimizer's slot): `handle_op` a
        `Variable` node and `initializer_op` its Assign. Adds its "read" node."""
        self = cls.__new__(cls)
        graph = handle_op.graph
        self._handle = handle_op.outputs[0]
        self._handle_op = handle_op
        handle_op._variable = self
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = tensor_shape.as_shape(shape)
        self._initial_value = None
        self._initializer_op = initializer_op
        with graph.control_dependencies(None), graph.name_scope(handle_op.name + "/"), \
                graph.colocate_with(handle_op):
            self._snapshot = raw_ops.ReadVariable(resource=self._handle, dtype=self._dtype,
                                                  name="read")
        self._trainable = trainable
        self._graph = graph
        for key in collections or [ops.GraphKeys.GLOBAL_VARIABLES]:
            graph.add_to_collection(key, self)
        return self

    @classmethod
    def _from_imported(cls, handle_op, initializer_op, snapshot, trainable):
        """A Variable over nodes an imported graph brought (import_meta_graph): the
        `Variable` node, its Assign and its ReadVariable `snapshot`."""
        self = cls.__new__(cls)
        self._handle = handle_op.outputs[0]
        self._handle_op = handle_op
        handle_op._variable = self
        self._dtype = snapshot.dtype
        self._shape = snapshot.get_shape()
        self._initial_value = None
        self._initializer_op = initializer_op
        self._snapshot = snapshot
        self._trainable = trainable
        self._graph = handle_op.graph
        return self

    # ---- identity ----
    @property
    def name(self):
        return self._handle_op.name + ":0"

    @property
    def op(self):
        return self._handle_op

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def device(self):
        return self._handle_op.device

    @property
    def graph(self):
        return self._graph

    @property
    def trainable(self):
        return self._trainable

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    @property
    def handle(self):
        return self._handle

    # ---- reading ----
    def value(self):
        return self._snapshot

    def read_value(self):
        return raw_ops.ReadVariable(resource=self._handle, dtype=self._dtype, name="read")

    def _as_graph_element(self):
        return self._snapshot

    def eval(self, session=None):
        return self._snapshot.eval(session=session)

    def load(self, value, session=None):
        """Assigns `value` by running the initializer with its initial value fed (as TF:
        no new ops)."""
        from tensorweave.framework.ops import get_default_session
        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session "
                             "should be established")
        session.run(self._initializer_op,
                    {self._initial_value: np.asarray(value, dtype=self._dtype.as_numpy_dtype)})

    # ---- writing ----
    def assign(self, value, use_locking=False, name=None, read_value=True):
        out = assign(self, value, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        out = assign_add(self, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        out = assign_sub(self, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def count_up_to(self, limit):
        return count_up_to(self, limit)

    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s>" % (self.name, self._shape,
                                                         self._dtype.name)

    __hash__ = object.__hash__


def _install_variable_operators():
    # A variable in an expression stands for its value, as in TF.
    for op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
               "__truediv__", "__rtruediv__", "__matmul__", "__rmatmul__", "__neg__",
               "__lt__", "__gt__", "__le__", "__ge__", "__getitem__", "__floordiv__",
               "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__abs__",
               "__and__", "__or__", "__xor__", "__invert__"):
        def forward(self, *args, _op=op):
            return getattr(self._snapshot, _op)(*args)
        setattr(Variable, op, forward)


def _handle_of(ref):
    if isinstance(ref, Variable):
        return ref.handle
    raise TypeError("assign needs a Variable, got %r" % (ref,))


def _value_for(ref, value):
    return convert_to_tensor(value, dtype=ref.dtype)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    return raw_ops.Assign(resource=_handle_of(ref), value=_value_for(ref, value),
                          validate_shape=True if validate_shape is None else validate_shape,
                          use_locking=True if use_locking is None else use_locking,
                          name=name or "Assign")


def assign_add(ref, value, use_locking=None, name=None):
    return raw_ops.AssignAdd(resource=_handle_of(ref), value=_value_for(ref, value),
                             use_locking=bool(use_locking), name=name or "AssignAdd")


def count_up_to(ref, limit, name=None):
    """Adds 1 to the scalar int variable unless it has reached `limit` (then OutOfRangeError
    "Reached limit of <limit>"); the value before."""
    return raw_ops.CountUpTo(resource=_handle_of(ref), limit=limit, T=ref.dtype,
                             name=name or "CountUpTo")


def assign_sub(ref, value, use_locking=None, name=None):
    return raw_ops.AssignSub(resource=_handle_of(ref), value=_value_for(ref, value),
                             use_locking=bool(use_locking), name=name or "AssignSub")


def global_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def local_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.MODEL_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


def global_variables_initializer():
    return variables_initializer(global_variables())


def local_variables_initializer():
    return variables_initializer(local_variables())


initialize_all_variables = global_variables_initializer


def is_variable_initialized(variable):
    return raw_ops.IsVariableInitialized(resource=variable.handle)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor of the names (`v.op.name`) of the variables not yet initialized."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    with ops.name_scope(name):
        if not var_list:
            return constant(np.array([], dtype=object), dtype=dtypes.string)
        from tensorweave.ops import array_ops, math_ops
        initialized = array_ops.stack([raw_ops.IsVariableInitialized(resource=v.handle)
                                       for v in var_list])
        names = constant(np.array([v.op.name.encode() for v in var_list], dtype=object))
        # The names where not initialized: gather them at Where's indices.
        missing = raw_ops.Where(input=math_ops.logical_not(initialized))
        return array_ops.gather(names, array_ops.reshape(missing, [-1]))


_install_variable_operators()
