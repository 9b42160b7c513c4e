"""TF 1.x's variable scopes and get_variable: variables named by scope and shared by name
(reuse), with per-scope initializers.

Each graph has one store of the variables get_variable made, by full name. A scope's
`reuse` is True, AUTO_REUSE or False, inherited by the scopes inside it; entering a scope
also opens a name scope for the ops made in it (uniquified, "foo_1", as TF does), while
variables are always named "<scope>/<name>"."""

import contextlib
import threading

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape
from tensorweave.ops import init_ops
from tensorweave.ops import variables


class _ReuseMode:
    def __repr__(self):
        return "AUTO_REUSE"


AUTO_REUSE = _ReuseMode()


class VariableScope:
    def __init__(self, reuse, name="", initializer=None, regularizer=None, dtype=None,
                 name_scope="", partitioner=None, custom_getter=None):
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._dtype = dtype
        self._name_scope = name_scope
        self._partitioner = partitioner
        self._custom_getter = custom_getter

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    dtype = property(lambda self: self._dtype)

    def reuse_variables(self):
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def get_variable(self, name, *args, **kwargs):
        with _pushed(self):
            return get_variable(name, *args, **kwargs)


class _Store(threading.local):
    """Per thread, the scope stack; per graph (weakly), the variables by full name."""

    def __init__(self):
        self.scopes = []


_state = _Store()


def _graph_store(graph):
    store = getattr(graph, "_variable_store", None)
    if store is None:
        store = graph._variable_store = {"vars": {}, "scope_counts": {}}
    return store


def get_variable_scope():
    if not _state.scopes:
        _state.scopes.append(VariableScope(False))
    return _state.scopes[-1]


@contextlib.contextmanager
def _pushed(scope):
    get_variable_scope()
    _state.scopes.append(scope)
    try:
        yield scope
    finally:
        _state.scopes.pop()


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                   reuse=None, dtype=None, use_resource=None, constraint=None,
                   auxiliary_name_scope=True):
    """Opens a variable scope (and a name scope) named `name_or_scope`, or a fresh
    `default_name` ("dense", "dense_1", ...) when it is None."""
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:
        reuse = None  # False does not turn reuse off inside a reusing scope, as in TF
    outer = get_variable_scope()
    graph = ops.get_default_graph()
    if isinstance(name_or_scope, VariableScope):
        name = name_or_scope.name
        base = name_or_scope
    else:
        if name_or_scope is None:
            counts = _graph_store(graph)["scope_counts"]
            prefix = outer.name + "/" if outer.name else ""
            n = counts.get(prefix + default_name, 0)
            counts[prefix + default_name] = n + 1
            leaf = default_name if n == 0 else "%s_%d" % (default_name, n)
        else:
            leaf = name_or_scope
        name = outer.name + "/" + leaf if outer.name else leaf
        base = outer
    inherited = outer.reuse if not isinstance(name_or_scope, VariableScope) else \
        name_or_scope.reuse
    new_reuse = True if reuse is True else (AUTO_REUSE if reuse is AUTO_REUSE or
                                            inherited is AUTO_REUSE else
                                            (inherited or outer.reuse))
    with contextlib.ExitStack() as stack:
        if auxiliary_name_scope:
            if isinstance(name_or_scope, VariableScope):
                ns = stack.enter_context(graph.name_scope(name_or_scope.original_name_scope))
            else:
                ns = stack.enter_context(graph.name_scope(name.rpartition("/")[2]))
        else:
            ns = base.original_name_scope
        scope = VariableScope(
            new_reuse, name=name,
            initializer=initializer if initializer is not None else base.initializer,
            regularizer=regularizer if regularizer is not None else base.regularizer,
            dtype=dtype if dtype is not None else base.dtype, name_scope=ns,
            partitioner=partitioner if partitioner is not None else base.partitioner,
            custom_getter=custom_getter if custom_getter is not None else base.custom_getter)
        stack.enter_context(_pushed(scope))
        yield scope


def _default_initializer(dtype):
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool or dtype == dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError("An initializer for variable of type %s is required" % dtype.name)


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """The variable "<scope>/<name>": made (with the initializer given, the scope's, or
    glorot_uniform for floats and zeros otherwise) when the scope does not reuse, found
    when it does, either with AUTO_REUSE."""
    scope = get_variable_scope()
    full_name = scope.name + "/" + name if scope.name else name
    graph = ops.get_default_graph()
    store = _graph_store(graph)["vars"]
    dtype = dtypes.as_dtype(dtype if dtype is not None else (scope.dtype or dtypes.float32))
    partitioner = partitioner if partitioner is not None else scope.partitioner
    found = store.get(full_name)
    if found is not None:
        if scope.reuse is False or scope.reuse is None:
            raise ValueError("Variable %s already exists, disallowed. Did you mean to set "
                             "reuse=True or reuse=tf.AUTO_REUSE in VarScope?" % full_name)
        if shape is not None and not tensor_shape.as_shape(shape).is_compatible_with(
                found.get_shape()):
            raise ValueError("Trying to share variable %s, but specified shape %s and found "
                             "shape %s." % (full_name, tensor_shape.as_shape(shape),
                                            found.get_shape()))
        if dtype != found.dtype.base_dtype:
            raise ValueError("Trying to share variable %s, but specified dtype %s and found "
                             "dtype %s." % (full_name, dtype.name, found.dtype.base_dtype.name))
        return found
    if scope.reuse is True:
        raise ValueError("Variable %s does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                         "VarScope?" % full_name)
    if initializer is None:
        initializer = scope.initializer
    if initializer is None:
        initializer = _default_initializer(dtype)
    if trainable is None:
        trainable = True
    if partitioner is not None:
        from tensorweave.ops import partitioned_variables
        made = partitioned_variables.create(full_name, shape, dtype, initializer, partitioner,
                                            trainable, collections)
    else:
        made = _new_variable(full_name, shape, dtype, initializer, trainable, collections,
                             validate_shape)
    store[full_name] = made
    if regularizer is not None:
        with graph.name_scope(full_name + "/Regularizer/"):
            loss = regularizer(made)
        if loss is not None:
            graph.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, loss)
    return made


def _new_variable(full_name, shape, dtype, initializer, trainable, collections,
                  validate_shape=True):
    graph = ops.get_default_graph()
    if callable(initializer) and not isinstance(initializer, ops.Tensor):
        if shape is None:
            raise ValueError("Shape of a new variable (%s) must be fully defined, but instead "
                             "was %s." % (full_name, shape))
        shape = tensor_shape.as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError("Shape of a new variable (%s) must be fully defined, but instead "
                             "was %s." % (full_name, shape))
        dims = shape.as_list()
        initial = lambda: initializer(dims, dtype=dtype)  # noqa: E731
    else:
        initial = initializer  # a value or a tensor: its shape is the variable's
    with graph.name_scope(None):
        return variables.Variable(initial, trainable=trainable, collections=collections,
                                  validate_shape=validate_shape, name=full_name, dtype=dtype)
