"""tf.function for this graph runtime. A Function called while a graph is being built adds
its ops to that graph, as TF 1.x graph code does; ClusterCoordinator.schedule traces it once
per worker (and per kind of input) into a replica placed on that worker, and runs every
stateful op the trace made, as TF's automatic control dependencies do."""

import functools


class Function:
    def __init__(self, python_function, name=None, input_signature=None):
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._input_signature = input_signature
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self):
        return self._python_function

    @property
    def name(self):
        return self._name

    @property
    def input_signature(self):
        return self._input_signature

    def __call__(self, *args, **kwargs):
        return self._python_function(*args, **kwargs)

    def __get__(self, instance, owner):
        """As a method: a Function bound to `instance`."""
        if instance is None:
            return self
        return Function(functools.partial(self._python_function, instance), self._name,
                        self._input_signature)


def function(func=None, input_signature=None, autograph=True, experimental_relax_shapes=False,
             experimental_compile=None, jit_compile=None, reduce_retracing=False,
             experimental_implements=None, experimental_autograph_options=None,
             experimental_follow_type_hints=None):
    """The decorator (with or without arguments). Autograph is not needed: Python control
    flow around the ops runs while tracing."""
    if func is None:
        return lambda f: Function(f, input_signature=input_signature)
    return Function(func, input_signature=input_signature)
