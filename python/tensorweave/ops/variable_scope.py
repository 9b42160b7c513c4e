"""TF 1.x's variable scopes and get_variable: variables named by scope and shared by name
(reuse), with per-scope initializers.

Each graph has one store of the variables get_variable made, by full name. A scope's
`reuse` is True, AUTO_REUSE or False, inherited by the scopes inside it; entering a scope
also opens a name scope for the ops made in it (uniquified, "foo_1", as TF does), while
variables are always named "<scope>/<name>"."""

import contextlib
import inspect
import threading
import weakref

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
    """Per thread and per graph, the scope stack (TF keeps it per graph; per thread too
    here, so threads building graphs do not see each other's scopes)."""

    def __init__(self):
        self.stacks = weakref.WeakKeyDictionary()


_state = _Store()


def _graph_store(graph):
    """Per graph: the variables get_variable made, by full name, and TF's count of the
    times each variable scope name was opened (for default names)."""
    store = getattr(graph, "_variable_store", None)
    if store is None:
        store = graph._variable_store = {"vars": {}, "scope_counts": {}}
    return store


def _scope_stack(graph=None):
    graph = graph or ops.get_default_graph()
    stack = _state.stacks.get(graph)
    if stack is None:
        stack = _state.stacks[graph] = [VariableScope(False)]
    return stack


def get_variable_scope():
    return _scope_stack()[-1]


@contextlib.contextmanager
def _pushed(scope):
    stack = _scope_stack()
    stack.append(scope)
    try:
        yield scope
    finally:
        stack.pop()


def _unique_scope_leaf(counts, outer_name, prefix):
    """TF's _get_unique_variable_scope: prefix, or prefix_N for the first N whose scope was
    not opened yet."""
    base = outer_name + "/" + prefix if outer_name else prefix
    if counts.get(base, 0) == 0:
        return prefix
    idx = 1
    while counts.get("%s_%d" % (base, idx), 0) > 0:
        idx += 1
    return "%s_%d" % (prefix, idx)


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                   reuse=None, dtype=None, use_resource=None, constraint=None,
                   auxiliary_name_scope=True):
    """Opens a variable scope (and a name scope) named `name_or_scope`, or a fresh
    `default_name` ("dense", "dense_1", ...) when it is None.

    As TF 1.x: reuse is inherited by string sub-scopes (False does not turn it off); a
    captured VariableScope keeps its own reuse and name wherever it is re-entered, and
    opens a new name scope named after its last component ("tower_1/"); default names count
    every scope opened by that name, and the counts of a scope's sub-scopes start again
    when it is closed (so a model built twice in one reopened scope gets the same names)."""
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    if reuse is False:
        reuse = None  # False does not turn reuse off inside a reusing scope, as in TF
    if name_or_scope is None and reuse is True:
        raise ValueError("reuse=True cannot be used without a name_or_scope")
    outer = get_variable_scope()
    graph = ops.get_default_graph()
    counts = _graph_store(graph)["scope_counts"]
    captured = isinstance(name_or_scope, VariableScope)
    with contextlib.ExitStack() as stack:
        if captured:
            ns_leaf = name_or_scope.name.split("/")[-1]
        else:
            ns_leaf = name_or_scope if name_or_scope is not None else default_name
        ns = None
        if auxiliary_name_scope and ns_leaf:
            ns = stack.enter_context(graph.name_scope(ns_leaf))
        if captured:
            name = name_or_scope.name
            base = name_or_scope
            new_reuse = reuse if reuse else name_or_scope.reuse
            ns = name_or_scope.original_name_scope
        else:
            leaf = name_or_scope if name_or_scope is not None else \
                _unique_scope_leaf(counts, outer.name, default_name)
            name = outer.name + "/" + leaf if outer.name else leaf
            base = outer
            new_reuse = reuse if reuse else outer.reuse
            if ns is None:
                ns = outer.original_name_scope
        counts[name] = counts.get(name, 0) + 1
        snapshot = dict(counts)
        scope = VariableScope(
            new_reuse, name=name,
            initializer=initializer if initializer is not None else base.initializer,
            regularizer=regularizer if regularizer is not None else base.regularizer,
            dtype=dtype if dtype is not None else base.dtype, name_scope=ns,
            partitioner=partitioner if partitioner is not None else base.partitioner,
            custom_getter=custom_getter if custom_getter is not None else base.custom_getter)
        try:
            with _pushed(scope):
                yield scope
        finally:
            if captured:
                counts.clear()
                counts.update(snapshot)
            else:
                for key in list(counts):
                    if key.startswith(name + "/"):
                        counts[key] = 0


def _default_initializer(name, dtype):
    """TF's: glorot_uniform for floats, zeros for integers and bools; others need one."""
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool:
        return init_ops.zeros_initializer()
    raise ValueError("An initializer for variable %s of %s is required" % (name, dtype))


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
    if inspect.isclass(initializer):  # TF takes an initializer class as its instance
        initializer = initializer()
    from_value = initializer is not None and not callable(initializer)
    if from_value and shape is not None:
        raise ValueError("If initializer is a constant, do not specify shape.")
    if from_value and dtype is not None and isinstance(initializer, ops.Tensor) and \
            initializer.dtype.base_dtype != dtypes.as_dtype(dtype):
        raise ValueError("Initializer type '%s' and explicit dtype '%s' don't match." %
                         (initializer.dtype.base_dtype, dtypes.as_dtype(dtype)))
    # A variable made from a value takes the value's dtype unless one is given (TF).
    value_dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    dtype = dtypes.as_dtype(dtype if dtype is not None else (scope.dtype or dtypes.float32))
    partitioner = partitioner if partitioner is not None else scope.partitioner
    if regularizer is None:
        regularizer = scope.regularizer  # as TF: the scope's regularizer is the default
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
        initializer = _default_initializer(full_name, dtype)
    if trainable is None:
        trainable = True
    if partitioner is not None:
        from tensorweave.ops import partitioned_variables
        made = partitioned_variables.create(full_name, shape, dtype, initializer, partitioner,
                                            trainable, collections)
    else:
        made = _new_variable(full_name, shape, value_dtype if from_value else dtype,
                             initializer, trainable, collections, validate_shape)
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
