"""tf.distribute.experimental.coordinator: ClusterCoordinator, RemoteValue, PerWorkerValues.

This program (the chief) builds one graph. `schedule(fn, args)` traces `fn` once per worker
(and per kind of input) into a replica placed on that worker, whose new variables go to the
ps tasks; the C++ ClusterCoordinator (tensorweave/train/cluster_coordinator.h) runs each
scheduled call on the next free worker, moves the calls of a failed worker to the others,
and takes the worker back when it answers again. Variables a trace made are initialized on
the cluster before the first call that uses them, unless the ps tasks hold them already.

Inputs of a scheduled function: PerWorkerValues (each worker gets its own, e.g. its
iterator from create_per_worker_dataset), tensors of the graph, numbers and numpy arrays
(fed, so a new value is no new trace), and other Python values (part of the trace, as
tf.function's)."""

import re

import numpy as np

from tensorweave import _native
from tensorweave.distribute import def_function
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import op_def_library
from tensorweave.ops import array_ops
from tensorweave.ops import variables as variables_lib


class PerWorkerValues:
    """One value per worker; a scheduled function gets the one of the worker running it."""

    def __init__(self, values):
        self._values = tuple(values)

    def __repr__(self):
        return "PerWorkerValues(%r)" % (self._values,)


class _WorkerIterator:
    """A worker's iterator over its dataset: `next(iterator)` in a traced function gives
    the element tensors (the iterator lives on that worker)."""

    def __init__(self, iterator):
        self._iterator = iterator

    def __iter__(self):
        return self

    def __next__(self):
        return self._iterator.get_next()

    def get_next(self):
        return self._iterator.get_next()

    element_spec = property(lambda self: self._iterator.output_types)


class PerWorkerDataset:
    """create_per_worker_dataset's result: `iter()` gives every worker an iterator of its
    own dataset."""

    def __init__(self, datasets, coordinator):
        self._datasets = datasets
        self._coordinator = coordinator

    def __iter__(self):
        iterators = []
        for worker, dataset in enumerate(self._datasets):
            with self._coordinator._graph.as_default(), \
                    ops.device("/job:worker/task:%d" % worker):
                iterators.append(_WorkerIterator(dataset.make_one_shot_iterator()))
        return _PerWorkerIterator(iterators)


class _PerWorkerIterator(PerWorkerValues):
    """Every worker's iterator: passed to a scheduled function, which gets its worker's."""

    def __iter__(self):
        return self

    def __next__(self):
        raise TypeError("A per-worker iterator gives elements only inside a function given to "
                        "ClusterCoordinator.schedule")


class RemoteValue:
    """The result of a scheduled call, in the structure the function returned."""

    def __init__(self, native, structure):
        self._native = native
        self._structure = structure

    def fetch(self):
        """Waits for the call; its values (numpy), or its error raised."""
        values = [v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v
                  for v in self._native.fetch()]
        return self._structure.pack(values)

    get = fetch


def _flatten(structure):
    """Leaves of tuples, lists, namedtuples and dicts (by sorted key), as tf.nest."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(structure, flat):
    flat = iter(flat)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s)
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(item) for item in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(item) for item in s)
        return next(flat)
    return build(structure)


class _Trace:
    """One worker's replica of a function: its feeds, fetches and targets."""

    def __init__(self, feeds, fetches, targets, structure):
        self.feeds, self.fetches, self.targets, self.structure = feeds, fetches, targets, structure


class ClusterCoordinator:
    def __init__(self, strategy, retry_interval_secs=0.5):
        if strategy is None or not hasattr(strategy, "_worker_scope"):
            raise ValueError("ClusterCoordinator needs a ParameterServerStrategy, got %r"
                             % (strategy,))
        self._strategy = strategy
        self._graph = ops.get_default_graph()
        cluster = strategy._cluster
        targets = ["grpc://" + cluster.task_address("worker", i)
                   for i in cluster.task_indices("worker")]
        self._native = _native.ClusterCoordinator(
            self._graph._native, targets, "worker", ["/job:ps"],
            int(retry_interval_secs * 1000), 0)
        self._functions = {}  # (function, input kinds) -> (native function, output structure)
        self._initialized = set()  # variables (op names) the cluster was asked to make

    strategy = property(lambda self: self._strategy)

    def create_per_worker_dataset(self, dataset_fn):
        """`dataset_fn()` built once per worker, on that worker (its input reads there).
        Inside it, strategy.distribute_datasets_from_function tells the worker's index."""
        if isinstance(dataset_fn, PerWorkerValues):
            return PerWorkerDataset(dataset_fn._values, self)
        datasets = []
        for worker in range(self._strategy._num_workers):
            self._strategy._input_worker = worker
            try:
                with self._graph.as_default(), ops.device("/job:worker/task:%d" % worker):
                    datasets.append(dataset_fn())
            finally:
                self._strategy._input_worker = None
        return PerWorkerDataset(datasets, self)

    def schedule(self, fn, args=None, kwargs=None):
        """Queues `fn(*args, **kwargs)` for the next free worker; returns a RemoteValue at
        once. An earlier call's error not yet raised by join() is raised here."""
        args, kwargs = tuple(args or ()), dict(kwargs or {})
        flat = _flatten((args, kwargs))
        kinds, feeds = [], []
        for value in flat:
            kind = _input_kind(value)
            kinds.append(kind)
            if kind[0] == "fed":
                feeds.append((np.asarray(value, dtype=kind[1].as_numpy_dtype),
                              kind[1].as_datatype_enum))
        key = (fn, tuple(kinds))
        if key not in self._functions:
            self._functions[key] = self._trace(fn, args, kwargs, kinds)
        native_function, structure = self._functions[key]
        self._initialize_new_variables()
        return RemoteValue(self._native.schedule(native_function, feeds), structure)

    def join(self):
        """Waits for every scheduled call; raises the first error since the last join."""
        self._native.join()

    def done(self):
        return self._native.done()

    def fetch(self, val):
        """RemoteValues (in any structure) fetched; other values as they are."""
        flat = _flatten(val)
        return _pack(val, [v.fetch() if isinstance(v, RemoteValue) else v for v in flat])

    def _stats(self):
        return self._native.stats()

    # ---- tracing ----
    def _trace(self, fn, args, kwargs, kinds):
        name = getattr(fn, "name", None) or getattr(fn, "__name__", "function")
        # A scope name ("<lambda>" becomes "lambda").
        name = re.sub(r"[^A-Za-z0-9_.\-]", "_", name.strip("<>")) or "function"
        if not re.match(r"[A-Za-z0-9.]", name):
            name = "function" + name
        python_function = fn.python_function if isinstance(fn, def_function.Function) else fn
        per_worker, structure = [], None
        for worker in range(self._strategy._num_workers):
            trace = self._trace_worker(python_function, name, worker, args, kwargs, kinds)
            per_worker.append((trace.feeds, trace.fetches, trace.targets))
            structure = trace.structure
        return self._native.register(name, per_worker), structure

    def _trace_worker(self, fn, name, worker, args, kwargs, kinds):
        graph = self._graph
        with graph.as_default():
            first = len(graph.get_operations())
            variables_before = {v.op.name for v in _all_variables()}
            feeds, inputs = [], []
            with ops.name_scope("%s_worker_%d" % (name, worker)), \
                    self._strategy._worker_scope(worker):
                for value, kind in zip(_flatten((args, kwargs)), kinds):
                    if kind[0] == "fed":
                        placeholder = array_ops.placeholder(kind[1], shape=kind[2],
                                                            name="input")
                        feeds.append(placeholder.name)
                        inputs.append(placeholder)
                    elif kind[0] == "per_worker":
                        inputs.append(value._values[worker])
                    else:
                        inputs.append(value)
                call_args, call_kwargs = _pack((args, kwargs), inputs)
                result = fn(*call_args, **call_kwargs)
            made = graph.get_operations()[first:]
            new_initializers = {v.initializer.name for v in _all_variables()
                                if v.op.name not in variables_before}
        fetches, targets, is_fetched = [], [], []
        for leaf in _flatten(result):
            is_fetched.append(isinstance(leaf, ops.Tensor))
            if isinstance(leaf, ops.Tensor):
                fetches.append(leaf.name)
            elif isinstance(leaf, ops.Operation):
                targets.append(leaf.name)
            elif leaf is not None:
                raise TypeError("A scheduled function returns tensors, operations or None; "
                                "%r is none of them" % (leaf,))
        targets.extend(_effects(made, fetches, targets, new_initializers))
        return _Trace(feeds, fetches, targets, _OutputStructure(result, is_fetched))

    def _initialize_new_variables(self):
        """Makes the variables no earlier call made, unless the ps tasks hold them (a
        coordinator started again over a running cluster keeps the trained model)."""
        fresh = [v for v in _all_variables() if v.op.name not in self._initialized]
        if not fresh:
            return
        with self._graph.as_default(), ops.name_scope("coordinator_init"):
            report = variables_lib.report_uninitialized_variables(fresh)
            init = variables_lib.variables_initializer(fresh)
        self._native.initialize_model(([], [report.name], []), ([], [], [init.name]))
        self._initialized.update(v.op.name for v in fresh)


class _OutputStructure:
    """How a traced function's fetched values go back into what it returned: tensors get
    their values, operations and None give None."""

    def __init__(self, result, is_fetched):
        self._result = result
        self._is_fetched = is_fetched

    def pack(self, values):
        if self._result is None:
            return None
        values = iter(values)
        return _pack(self._result, [next(values) if fetched else None
                                    for fetched in self._is_fetched])


def _all_variables():
    return variables_lib.global_variables() + variables_lib.local_variables()


def _input_kind(value):
    """("per_worker",), ("fed", dtype, shape) or ("static", value) for one input leaf."""
    if isinstance(value, PerWorkerValues):
        return ("per_worker", id(value))
    if isinstance(value, (ops.Tensor, ops.Operation)):
        return ("static", id(value))
    if isinstance(value, bool) or value is None or isinstance(value, (str, bytes)):
        return ("static", value)
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        return ("fed", dtypes.as_dtype(array.dtype), tuple(array.shape))
    if isinstance(value, (int, float, list)):
        # As tf.constant: Python floats are float32 and Python ints int32.
        array = np.asarray(value)
        dtype = {np.dtype(np.float64): dtypes.float32,
                 np.dtype(np.int64): dtypes.int32}.get(array.dtype)
        return ("fed", dtype or dtypes.as_dtype(array.dtype), tuple(array.shape))
    return ("static", id(value))


def _effects(made, fetches, targets, new_initializers):
    """The stateful ops a trace made that what it returns does not run: they run with every
    call, as TF's automatic control dependencies make them. New variables' initializers
    (and what computes their initial values) are not among them: they run once, before the
    first call."""
    by_name = {op.name: op for op in made}

    def ancestors(names):
        seen, stack = set(), [n for n in names if n in by_name]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            op = by_name[name]
            for tensor in op.inputs:
                if tensor.op.name in by_name:
                    stack.append(tensor.op.name)
            for control in op.control_inputs:
                if control.name in by_name:
                    stack.append(control.name)
        return seen

    covered = ancestors([name.split(":")[0] for name in fetches] + list(targets))
    covered |= ancestors(new_initializers)
    effects = []
    for op in made:
        if op.name in covered or op.type == "Placeholder":
            continue
        definition = op_def_library.op_def(op.type)
        if definition is not None and definition.get("is_stateful"):
            effects.append(op.name)
    return effects
