"""tf.contrib.framework.arg_scope: default keyword arguments for the layer functions that
slim-style TF 1.x programs call inside `with arg_scope([conv2d, fully_connected], ...)`.

As TF's: a function opts in with @add_arg_scope; a scope maps each such function to the
keyword arguments it adds, nested scopes add to (and override) the outer ones, an explicit
keyword at the call wins over the scope, and entering the dict a scope yielded re-enters it.
The stack is the program's, not a thread's (TF's is a module global too)."""

import contextlib
import functools

_ARG_STACK = [{}]
_DECORATED = set()


def _key(func):
    func = getattr(func, "_arg_scope_original", func)
    return (func.__module__, func.__name__)


def current_arg_scope():
    return _ARG_STACK[-1]


def has_arg_scope(func):
    return _key(func) in _DECORATED


def add_arg_scope(func):
    """Decorates `func` so that arg_scope can give it default keyword arguments."""
    key = _key(func)

    @functools.wraps(func)
    def with_scope_args(*args, **kwargs):
        defaults = current_arg_scope().get(key)
        if defaults:
            merged = dict(defaults)
            merged.update(kwargs)
            kwargs = merged
        return func(*args, **kwargs)

    _DECORATED.add(key)
    with_scope_args._arg_scope_original = func
    return with_scope_args


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Within the block, each function of `list_ops_or_scope` gets `kwargs` as defaults;
    or, given the dict an arg_scope yielded, that scope again."""
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, "
                             "kwargs must be empty.")
        scope = dict(list_ops_or_scope)
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope "
                            "(i.e. dict)")
        scope = dict(current_arg_scope())
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise ValueError("%s is not decorated with @add_arg_scope" % (_key(op),))
            merged = dict(scope.get(_key(op), {}))
            merged.update(kwargs)
            scope[_key(op)] = merged
    _ARG_STACK.append(scope)
    try:
        yield scope
    finally:
        _ARG_STACK.pop()


def arg_scoped_arguments(func):
    """The names of the arguments `func` takes (those an arg_scope may set)."""
    import inspect
    return list(inspect.signature(getattr(func, "_arg_scope_original", func)).parameters)
